import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/**
 * Keeps one entry of the `process.nextTick` queue alive for the life of the process, so that V8
 * keeps its shape and the queue stays fast after full collections.
 *
 * Needed on every Node.js line `engines` admits: 22, 24 and 26 (V8 12.4, 13.6 and 14.6).
 * `npm run bench:next-tick` shows it on the runtime that runs it: after a full collection at
 * start, each nextTick is several times slower unless an entry is held.
 *
 * Node builds each entry of that queue as an object literal with computed keys (its async-id
 * symbols). V8 remembers the shape such a literal produced in the literal's feedback, and only
 * weakly. A full collection at a moment when no entry is alive frees the shape, and the next
 * entry then marks that feedback megamorphic for the rest of the process's life: optimised code
 * no longer builds the entry itself, and every nextTick defines its four properties in V8's
 * runtime (`Runtime_DefineKeyedOwnPropertyInLiteral` in a profile). Node's streams and HTTP
 * server call nextTick several times per request, and the service makes such a collection at
 * start, while the history loads. An entry that stays alive keeps its shape alive, and the
 * feedback stays as it was.
 *
 * Written by hand: it works around a detail of the engine, which no library covers. Remove it
 * when `npm run bench:next-tick` shows `gc-at-start` as fast as `fresh` on every admitted line.
 */
export function holdTickShape(): Promise<void> {
  if (held) return Promise.resolve();
  return new Promise((resolve) => {
    process.nextTick(() => {
      // In a nextTick callback, the resource of the execution is the queue's entry itself.
      held = executionAsyncResource();
      resolve();
    });
  });
}

/** The entry held, for tests. */
export function heldTickEntry(): object | undefined {
  return held;
}
