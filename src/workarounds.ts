import { executionAsyncResource } from 'node:async_hooks';

/**
 * Workarounds of Node.js engine behaviour: the only place in the service that knows of V8. Each
 * stays only while the bench shows it buys at least 5 % of a whole request on every runtime
 * `engines` admits: `npm run bench:instructions` counts the instructions per request of the
 * service with them and with EXRATES_ENGINE_WORKAROUNDS=false (its `@plain` rows), and
 * docs/performance.md ("Workarounds and what each buys") is generated from its runs. Remove one
 * when its rows show less.
 *
 * Written by hand: they work around details of the engine, which no library covers.
 */
export async function applyEngineWorkarounds(): Promise<void> {
  await holdTickShape();
}

let held: object | undefined;

/**
 * Keeps one entry of the `process.nextTick` queue alive for the life of the process, so that V8
 * keeps its shape and the queue stays fast after full collections.
 *
 * The behaviour it works around: Node builds each entry of that queue as an object literal with
 * computed keys (its async-id symbols; `nextTick` in Node's lib/internal/process/task_queues.js).
 * V8 remembers the shape such a literal produced in the literal's feedback, and only weakly. A
 * full collection at a moment when no entry is alive frees the shape, and the next entry then
 * marks that feedback megamorphic for the rest of the process's life: every nextTick defines its
 * properties in V8's runtime. Node's streams and HTTP server call nextTick several times per
 * request, and the service makes such a collection at start, while the history loads. An entry
 * that stays alive keeps its shape alive. Called before anything else at start.
 */
function holdTickShape(): Promise<void> {
  if (held) return Promise.resolve();
  return new Promise((resolve) => {
    process.nextTick(() => {
      // In a nextTick callback, the resource of the execution is the queue's entry itself.
      held = executionAsyncResource();
      resolve();
    });
  });
}

/** The nextTick entry held, once the workarounds are applied (for tests). */
export function heldTickEntry(): object | undefined {
  return held;
}
