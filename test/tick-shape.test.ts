import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs in a child node with V8's natives syntax: holds an entry of the nextTick queue as the
 * service's start does, lets V8 collect while no other entry is alive, then compares the held
 * entry's shape with a new entry's. Prints a JSON report.
 */
const CHILD = `
import { executionAsyncResource } from 'node:async_hooks';
import { holdTickShape, heldTickEntry } from './src/tick-shape.ts';
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
await holdTickShape();
const held = heldTickEntry();
await holdTickShape();
const again = heldTickEntry();
await new Promise((resolve) => setTimeout(resolve, 10));
globalThis.gc();
const later = await new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
console.log(JSON.stringify({
  held: typeof held,
  sameObjectOnSecondCall: held === again,
  isQueueEntry: held !== undefined && Object.getOwnPropertySymbols(held).length >= 2 && 'callback' in held,
  sameShapeAfterCollection: haveSameMap(held, later),
}));
`;

test('the start holds an entry of the nextTick queue, whose shape outlives a full collection', async () => {
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: new URL('..', import.meta.url),
  });
  assert.deepEqual(JSON.parse(stdout), { held: 'object', sameObjectOnSecondCall: true, isQueueEntry: true, sameShapeAfterCollection: true });
});
