import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Clock, Lock, QuotaStore } from '../core/ports.js';
import type { Logger } from '../core/refresh.js';
import { addDays, type Day } from '../core/time.js';

const PREFIX = 'exrates:';

/**
 * A Redis connection that fails fast: no offline queue, one retry per command and a short
 * command timeout, so a request never hangs on a Redis that is down. ioredis keeps reconnecting
 * in the background.
 */
export async function openRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  let wasReady = false;
  redis.on('error', (error: Error) => {
    if (wasReady) log.warn({ err: error.message }, 'redis connection error');
    wasReady = false;
  });
  redis.on('ready', () => {
    wasReady = true;
  });
  await redis.connect();
  return redis;
}

// KEYS[1] counter; ARGV[1] limit. Returns {allowed, used}, or {-1, 0} when the counter is missing.
const CONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return {-1, 0} end
v = tonumber(v)
if v >= tonumber(ARGV[1]) then return {0, v} end
return {1, redis.call('INCR', KEYS[1])}
`;
// KEYS[1] counter; ARGV[1] floor; ARGV[2] lifetime in seconds. Raises the counter to at least the floor.
const RAISE = `
local v = tonumber(redis.call('GET', KEYS[1]) or '-1')
if v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1
`;
// KEYS[1] lock; ARGV[1] token. Deletes the lock only if we still hold it.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

function counterKey(keyId: string, day: Day): string {
  return `${PREFIX}quota:${keyId}:${day}`;
}

/**
 * Seconds a counter lives: to the end of the day after its day, so a late flush still finds it.
 * Relative to the service's clock, which may be fixed in the past (EXRATES_NOW), not Redis's.
 */
function lifetimeOf(day: Day, clock: Clock): number {
  return Math.max(60, Math.ceil((Date.parse(`${addDays(day, 2)}T00:00:00Z`) - clock.now().getTime()) / 1000));
}

export interface RedisQuotaOptions {
  redis: Redis;
  /** The store's quota table: where counts are persisted, and the fallback while Redis is down. */
  store: QuotaStore & Required<Pick<QuotaStore, 'record'>>;
  log: Logger;
  clock: Clock;
  flushIntervalMs?: number;
}

/**
 * Quota counting in Redis, exact across instances (one atomic script per request). The rule:
 * - Redis holds the live count; every instance flushes the counters it touched to the store
 *   each second, raising the stored count (never lowering it).
 * - A counter missing from Redis (restart, eviction) is seeded from the store before counting,
 *   so a Redis loss forgives at most the requests of the last second before it.
 * - While Redis is unreachable, requests are counted in the store directly (exact, slower: the
 *   service neither fails open nor closed); when Redis is back, the counters touched meanwhile
 *   are raised to the stored counts before Redis is used again.
 */
export function createRedisQuotaStore(options: RedisQuotaOptions): QuotaStore {
  const { redis, store, log, clock } = options;
  const touched = new Map<string, { keyId: string; day: Day }>();
  const countedInStore = new Map<string, { keyId: string; day: Day }>();
  let reconciling: Promise<void> | undefined;

  async function reconcile(): Promise<void> {
    for (const [name, entry] of countedInStore) {
      const floor = await store.used(entry.keyId, entry.day);
      await redis.eval(RAISE, 1, counterKey(entry.keyId, entry.day), floor, lifetimeOf(entry.day, clock));
      countedInStore.delete(name);
    }
  }

  redis.on('ready', () => {
    if (countedInStore.size === 0) return;
    reconciling ??= reconcile()
      .catch((error: unknown) => log.warn({ err: String(error) }, 'could not reconcile quota counters with redis'))
      .finally(() => {
        reconciling = undefined;
      });
  });

  async function flush(): Promise<void> {
    const entries = [...touched.values()];
    touched.clear();
    for (const entry of entries) {
      try {
        const value = await redis.get(counterKey(entry.keyId, entry.day));
        if (value !== null) await store.record(entry.keyId, entry.day, Number(value));
      } catch {
        touched.set(`${entry.keyId}:${entry.day}`, entry);
      }
    }
  }
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => {
    flushing ??= flush().finally(() => {
      flushing = undefined;
    });
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  async function consumeInStore(keyId: string, day: Day, limit: number) {
    countedInStore.set(`${keyId}:${day}`, { keyId, day });
    return store.consume(keyId, day, limit);
  }

  return {
    async consume(keyId, day, limit) {
      if (redis.status !== 'ready' || reconciling || countedInStore.size > 0) {
        if (redis.status === 'ready' && !reconciling && countedInStore.size > 0) {
          reconciling = reconcile().finally(() => {
            reconciling = undefined;
          });
        }
        return consumeInStore(keyId, day, limit);
      }
      const key = counterKey(keyId, day);
      try {
        let [allowed, used] = (await redis.eval(CONSUME, 1, key, limit)) as [number, number];
        if (allowed === -1) {
          const floor = await store.used(keyId, day);
          await redis.set(key, floor, 'EX', lifetimeOf(day, clock), 'NX');
          [allowed, used] = (await redis.eval(CONSUME, 1, key, limit)) as [number, number];
        }
        touched.set(`${keyId}:${day}`, { keyId, day });
        return { allowed: allowed === 1, used: Number(used) };
      } catch (error) {
        log.warn({ err: error instanceof Error ? error.message : String(error) }, 'redis quota counter unavailable; counting in the store');
        return consumeInStore(keyId, day, limit);
      }
    },

    async used(keyId, day) {
      const stored = await store.used(keyId, day);
      try {
        const live = await redis.get(counterKey(keyId, day));
        return Math.max(stored, live === null ? 0 : Number(live));
      } catch {
        return stored;
      }
    },

    async record(keyId, day, used) {
      await store.record(keyId, day, used);
    },

    async close() {
      clearInterval(timer);
      await flushing;
      await flush().catch(() => undefined);
    },
  };
}

/** A lock shared by every instance on one Redis: SET NX PX with a token, released only by its holder. */
export function createRedisLock(redis: Redis): Lock {
  return {
    async tryAcquire(name, ttlMs) {
      const key = `${PREFIX}lock:${name}`;
      const token = randomUUID();
      const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
      if (ok !== 'OK') return null;
      return async () => {
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      };
    },
    async isHeld(name) {
      return (await redis.exists(`${PREFIX}lock:${name}`)) === 1;
    },
  };
}
