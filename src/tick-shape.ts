import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/**
 * Keeps one entry of the `process.nextTick` queue alive for the life of the process, so that V8
 * keeps its shape and the queue stays fast after full collections.
 *
 * The upstream behaviour it works around (no report of it upstream that we know of): Node builds
 * each entry of that queue as an object literal with computed keys, its async-id symbols
 * (`nextTick` in Node's lib/internal/process/task_queues.js). V8 remembers the shape such a
 * literal produced in the literal's feedback, and only weakly. A full collection at a moment
 * when no entry is alive frees the shape, and the next entry then marks that feedback
 * megamorphic for the rest of the process's life: optimised code no longer builds the entry
 * itself, and every nextTick defines its properties in V8's runtime
 * (`Runtime_DefineKeyedOwnPropertyInLiteral` in a profile). Node's streams and HTTP server call
 * nextTick several times per request, and the service makes such a collection at start, while
 * the history loads. An entry that stays alive keeps its shape alive, and the feedback stays as
 * it was.
 *
 * `npm run bench:next-tick` (bench/next-tick.ts) measures it on the runtime that runs it: ns per
 * nextTick in a fresh process, after a full collection at start, and after one with an entry
 * held. On Node 22.23, 24.21 and 26.10 a nextTick after the collection cost 4.7, 5.4 and 9.2 ×
 * a fresh process's, and with the entry held 0.7–1.0 ×. Written by hand: it works around a
 * detail of the engine, which no library covers. Remove it when that script shows the
 * collection costing nothing on every line `engines` admits.
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
