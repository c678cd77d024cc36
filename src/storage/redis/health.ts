import type { RedisClient } from './connection.js';

/** After a Redis command fails, how long requests go straight to the store before Redis is tried again. */
const SUSPECT_MS = 2_000;
/** How long commands may keep timing out on a ready connection before it is replaced. */
const HALF_OPEN_MS = 10_000;

/** Whether Redis may be asked now, from what its commands did lately. */
export interface RedisHealth {
  /** The connection is ready and no command failed in the last SUSPECT_MS. */
  usable(): boolean;
  /** A command failed: ask nothing for a while; replace a connection that keeps timing out. */
  failed(error: unknown): void;
  /** A command answered. */
  answered(): void;
  /** A probe answered: Redis may be asked again at once. */
  recovered(): void;
}

export function createRedisHealth(redis: RedisClient): RedisHealth {
  let suspectUntil = 0;
  let timingOutSince: number | undefined;
  return {
    usable: () => redis.status === 'ready' && Date.now() >= suspectUntil,
    /**
     * Commands that keep timing out on a connection that still looks ready mean a half-open socket
     * (a partition, a black-holed route): nothing will ever answer on it, so start a new one. Not
     * at the first timeout: a Redis that stalls briefly answers on the same connection in order,
     * which is what lets a reconcile tell whether a timed-out command ran.
     */
    failed(error) {
      const now = Date.now();
      suspectUntil = now + SUSPECT_MS;
      if (!(error instanceof Error && /timed out/i.test(error.message))) return;
      timingOutSince ??= now;
      if (redis.status === 'ready' && now - timingOutSince > HALF_OPEN_MS) {
        timingOutSince = undefined;
        redis.disconnect(true);
      }
    },
    answered() {
      timingOutSince = undefined;
    },
    recovered() {
      timingOutSince = undefined;
      suspectUntil = 0;
    },
  };
}
