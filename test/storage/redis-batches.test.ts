/** The batching rule of the Redis quota counter (src/storage/redis/batches.ts), on its own. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBatches } from '../../src/storage/redis/batches.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A sender whose batches stay on their way until released, one by one. */
function heldSender() {
  const sent: number[][] = [];
  const releases: Array<() => void> = [];
  const send = (batch: number[]) => {
    sent.push(batch);
    return new Promise<void>((resolve) => releases.push(resolve));
  };
  return { sent, send, release: () => releases.shift()!() };
}

test('what one turn queues leaves at its end, together', async () => {
  const { sent, send, release } = heldSender();
  const batches = createBatches(send);
  for (let i = 1; i <= 3; i++) batches.add(i);
  assert.deepEqual(sent, [], 'nothing leaves during the turn');
  await turn();
  assert.deepEqual(sent, [[1, 2, 3]]);
  release();
});

test('one batch on its way at a time; the next carries everything that arrived meanwhile, those put first ahead', async () => {
  const { sent, send, release } = heldSender();
  const batches = createBatches(send);
  batches.add(1);
  await turn();
  for (let round = 0; round < 3; round++) {
    batches.add(10 + round);
    await turn();
  }
  batches.addFirst([7, 8]);
  await turn();
  assert.deepEqual(sent, [[1]], 'nothing more while the first is on its way');
  release();
  await turn();
  assert.deepEqual(sent, [[1], [7, 8, 10, 11, 12]]);
  const drained = batches.drain();
  release();
  await drained;
  assert.equal(sent.length, 2);
});

test('drain sends what waits and resolves once every batch has returned', async () => {
  const sent: number[][] = [];
  const batches = createBatches(async (batch: number[]) => {
    sent.push(batch);
    await turn();
  });
  batches.add(1);
  batches.add(2);
  await batches.drain();
  assert.deepEqual(sent, [[1, 2]]);
  await batches.drain();
  assert.deepEqual(sent, [[1, 2]], 'nothing to send: resolves at once');
});
