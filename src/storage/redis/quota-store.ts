import { randomUUID } from 'node:crypto';
import type { Clock, QuotaStore } from '../../core/ports.js';
import type { Logger } from '../../core/refresh.js';
import type { Day } from '../../core/time.js';
import type { DatabaseQuotaStore } from '../quota-store.js';
import { DEFAULT_REDIS_PREFIX, type RedisClient } from './connection.js';
import { behindRedis, createCounters, type Counter } from './counters.js';
import { createRedisHealth } from './health.js';
import { createRedisCounting, type Outcome, type Pending } from './in-redis.js';
import { redisKeyspace } from './keyspace.js';
import { reconcileCounters } from './reconcile.js';

export interface RedisQuotaOptions {
  redis: RedisClient;
  /** The store's quota table: where counts are persisted, and the fallback while Redis is down. */
  store: DatabaseQuotaStore;
  log: Logger;
  clock: Clock;
  flushIntervalMs?: number;
  /** Key namespace (default `exrates:`). */
  prefix?: string;
}

/**
 * Quota counting in Redis, exact across instances. The rule:
 * - Redis holds the live count. A request is counted by a Lua script that checks and increments
 *   in one step; the requests that arrive while one call is on its way travel together in the
 *   next (./in-redis.ts), decided in order inside Redis: as exact as one call per request.
 * - Each instance adds the requests it counted there to the store every second (counts are
 *   added, never overwritten, so instances cannot erase each other's).
 * - A counter missing from Redis (restart, eviction) is seeded from the store plus this
 *   instance's unflushed requests, so a Redis loss forgives at most the other instances' last
 *   second of requests.
 * - While Redis is unreachable (or a command times out), an instance first adds its unflushed
 *   requests to the store, then counts each request in the store with a conditional increment,
 *   exact for its own requests (other instances' last second may be missing): the service
 *   neither fails open nor closed. When Redis answers again, those requests are added to the
 *   Redis counters before Redis counts again, less any whose timed-out call ran after all (each
 *   call leaves a receipt in Redis), so nothing is counted twice (./reconcile.ts).
 */
export function createRedisQuotaStore(options: RedisQuotaOptions): QuotaStore {
  const { redis, store, log, clock } = options;
  const keys = redisKeyspace(options.prefix ?? DEFAULT_REDIS_PREFIX, redis.isCluster, randomUUID());
  const counters = createCounters(keys);
  const health = createRedisHealth(redis);
  /** Requests are counted in the store until a reconcile has brought Redis up to date. */
  let degraded = false;
  let countingInStore = 0;

  const warn = (message: string) => (error: unknown) => log.warn({ err: error instanceof Error ? error.message : String(error) }, message);

  /** Adds every unflushed count to the store, in one statement. Never throws. */
  async function flush(): Promise<void> {
    const taken: Array<{ c: Counter; count: number }> = [];
    for (const c of counters) {
      if (c.unflushed > 0) {
        taken.push({ c, count: c.unflushed });
        c.unflushed = 0;
      }
    }
    try {
      if (taken.length > 0) await store.addMany(taken.map(({ c, count }) => ({ keyId: c.keyId, day: c.day, used: count })));
    } catch (error) {
      for (const { c, count } of taken) c.unflushed += count;
      warn('could not write quota counts to the store; will retry')(error);
      return;
    }
    counters.forgetSettledBefore(clock.now().toISOString().slice(0, 10));
  }

  let flushing: Promise<void> | undefined;
  const runFlush = () =>
    (flushing ??= flush().finally(() => {
      flushing = undefined;
    }));

  /** Moves what was counted in the store while Redis was away into Redis; ends the degraded state once nothing is left. Never throws. */
  async function reconcile(): Promise<void> {
    try {
      await redis.ping();
      health.recovered();
    } catch (error) {
      health.failed(error);
      return;
    }
    try {
      await reconcileCounters(counters, { redis, used: (keyId, day) => store.used(keyId, day), marker: keys.marker, clock });
    } catch (error) {
      health.failed(error);
      warn('could not reconcile quota counters with redis; will retry')(error);
      return;
    }
    // A request still being counted in the store will add to `offline` when it returns: stay degraded for it.
    if (countingInStore === 0 && ![...counters].some(behindRedis)) degraded = false;
  }

  let reconciling: Promise<void> | undefined;
  const startReconcile = () =>
    (reconciling ??= reconcile().finally(() => {
      reconciling = undefined;
    }));

  redis.on('ready', () => {
    if (degraded) void startReconcile();
  });
  const timer = setInterval(() => {
    void runFlush();
    // Probe a suspect Redis on every tick: the reconcile starts with a PING.
    if (degraded && redis.status === 'ready') void startReconcile();
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  /** Counts one request in the store, after what this instance counted in Redis is there. */
  async function consumeInStore(c: Counter, limit: number): Promise<Outcome> {
    countingInStore += 1;
    try {
      if (!degraded) {
        degraded = true;
        // What this instance counted in Redis must be in the store before the store decides alone.
        await runFlush();
      }
      if (c.unflushed > 0) await runFlush();
      const result = await store.consume(c.keyId, c.day, limit);
      if (result.allowed) c.offline += 1;
      return result;
    } finally {
      countingInStore -= 1;
    }
  }

  /** Requests that cannot be counted in Redis are counted in the store; `uncertain`: their call may have run (seq numbers given). */
  function toStore(requests: readonly Pending[], error?: unknown, uncertain?: readonly number[]): void {
    if (error !== undefined) {
      health.failed(error);
      warn('redis quota counter unavailable; counting in the store')(error);
    }
    for (const [i, request] of requests.entries()) {
      // The call may have reached Redis and run; the reconcile will find out.
      if (uncertain) request.c.uncertain.push(uncertain[i]!);
      request.settle(consumeInStore(request.c, request.limit));
    }
  }

  const inRedis = createRedisCounting({
    redis,
    health,
    clock,
    used: (keyId, day) => store.used(keyId, day),
    mayAsk: () => !degraded && health.usable(),
    toStore,
  });

  /** While degraded: the store counts, until a reconcile has brought Redis up to date. */
  async function consumeWhileDegraded(c: Counter, limit: number): Promise<Outcome> {
    if (health.usable()) await startReconcile();
    return degraded || !health.usable() ? consumeInStore(c, limit) : inRedis.count(c, limit);
  }

  return {
    async consume(keyId: string, day: Day, limit: number) {
      const c = counters.get(keyId, day);
      if (degraded) return consumeWhileDegraded(c, limit);
      if (!health.usable()) return consumeInStore(c, limit);
      return inRedis.count(c, limit);
    },

    async used(keyId, day) {
      const stored = await store.used(keyId, day);
      try {
        const live = await redis.get(keys.counter(keyId, day));
        return Math.max(stored, live === null ? 0 : Number(live));
      } catch {
        return stored;
      }
    },

    async close() {
      clearInterval(timer);
      await inRedis.drain();
      await flushing;
      await reconciling;
      await flush();
    },
  };
}
