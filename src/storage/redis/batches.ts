/**
 * Requests sent in batches, by one rule: one batch on its way at a time; the next carries every
 * request that arrived meanwhile. A request that finds none on its way leaves at the end of the
 * turn of the event loop that queued it, with the others of that turn.
 *
 * Why batches: one script call per request costs Redis one call per request; a batch costs one
 * per round trip, whatever the load (bench/quota-redis.ts measures both). ioredis's
 * auto-pipelining saves writes, not script calls: Redis would still run one script per request.
 */
export interface Batches<T> {
  /** Queues a request for the next batch. */
  add(request: T): void;
  /** Queues requests ahead of those waiting (the next batch carries them first). */
  addFirst(requests: readonly T[]): void;
  /** Resolves once nothing is queued and no batch is on its way. */
  drain(): Promise<void>;
}

export function createBatches<T>(send: (batch: T[]) => Promise<void>): Batches<T> {
  let waiting: T[] = [];
  let onItsWay: Promise<void> | undefined;
  let scheduled = false;

  function sendWaiting(): void {
    scheduled = false;
    if (onItsWay || waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    onItsWay = send(batch).finally(() => {
      onItsWay = undefined;
      sendWaiting();
    });
  }

  function schedule(): void {
    if (onItsWay || scheduled) return;
    scheduled = true;
    setImmediate(sendWaiting);
  }

  return {
    add(request) {
      waiting.push(request);
      schedule();
    },
    addFirst(requests) {
      waiting = [...requests, ...waiting];
      schedule();
    },
    async drain() {
      while (onItsWay || waiting.length > 0) {
        sendWaiting();
        await onItsWay;
      }
    },
  };
}
