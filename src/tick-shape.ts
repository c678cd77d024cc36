import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/**
 * Keeps one entry of the `process.nextTick` queue alive for the life of the process, so that V8
 * keeps its shape and the queue stays fast after full collections.
 *
 * Node builds each entry of that queue as an object literal with computed keys (its async-id
 * symbols). V8 (11.3, in Node 20) remembers the shape such a literal produced in the literal's
 * feedback, and only weakly. A full collection at a moment when no entry is alive frees the
 * shape, and the next entry then marks that feedback megamorphic for the rest of the process's
 * life: optimised code no longer builds the entry itself, and every nextTick defines its four
 * properties in V8's runtime. Node's streams call nextTick several times per request: after such
 * a collection, 8–10 % of the service's CPU time under load went there, and a loop of nextTick
 * calls ran 5–6 times slower (`npm run bench:next-tick`). The service makes collections like that
 * at start: V8's own while the history loads, and the memory keeper's. An entry that stays alive
 * keeps its shape alive, and the feedback stays as it was.
 *
 * Written by hand: it works around a detail of the engine, which no library covers.
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
