import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyEngineWorkarounds, heldTickEntry } from '../src/workarounds.js';

test('the workarounds hold an entry of the nextTick queue itself, the same one however often they are applied', async () => {
  await applyEngineWorkarounds();
  const entry = heldTickEntry() as { callback?: unknown } | undefined;
  // What Node's queue keeps for each nextTick: the callback it will call. Were the resource of a
  // nextTick callback anything else, the hold would keep nothing of the queue's shape alive.
  assert.equal(typeof entry?.callback, 'function');
  await applyEngineWorkarounds();
  assert.equal(heldTickEntry(), entry);
});
