import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock, Lock, QuotaStore } from '../core/ports.js';
import type { Logger } from '../core/refresh.js';
import { addDays, type Day } from '../core/time.js';

/** Namespace of every key this service writes; one per installation sharing a Redis. */
export const DEFAULT_REDIS_PREFIX = 'exrates:';

/**
 * A Redis connection that fails fast: no offline queue, one retry per command and a short
 * command timeout, so a request never hangs on a Redis that is down. ioredis keeps reconnecting
 * in the background.
 */
export async function openRedis(url: string, log: Logger): Promise<Redis> {
  // Loaded only when Redis is configured: the module and what it compiles cost a single-process
  // install on SQLite about 9 MB of resident memory for nothing.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  let wasReady = false;
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    if (wasReady) log.warn({ err: error.message }, 'redis connection error');
    wasReady = false;
    lastError = error;
  });
  redis.on('ready', () => {
    wasReady = true;
  });
  // A connection whose socket opened but whose handshake never completes (a black-holed route)
  // would wait for ever: give it a few seconds, then start over.
  let handshakeTimer: NodeJS.Timeout | undefined;
  redis.on('connect', () => {
    clearTimeout(handshakeTimer);
    handshakeTimer = setTimeout(() => {
      if (redis.status === 'connect') {
        log.warn({}, 'redis handshake did not complete; reconnecting');
        redis.disconnect(true);
      }
    }, 3_000);
    handshakeTimer.unref();
  });
  redis.on('end', () => clearTimeout(handshakeTimer));
  try {
    await redis.connect();
  } catch (error) {
    // Otherwise the client keeps reconnecting in the background, and a start that failed never exits.
    redis.disconnect();
    // connect() rejects with "Connection is closed."; the socket's own error says why.
    throw lastError ?? error;
  }
  return redis;
}

// KEYS[1] counter, KEYS[2] this instance's sequence hash; ARGV[1] limit, ARGV[2] request sequence
// number, ARGV[3] lifetime. Returns {allowed, used}, or {-1, 0} when the counter is missing. The
// sequence number of the last request counted lets a later reconcile tell whether a command that
// timed out ran after all.
const CONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return {-1, 0} end
v = tonumber(v)
if v >= tonumber(ARGV[1]) then return {0, v} end
local n = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {1, n}
`;
// KEYS[1] counter, KEYS[2] sequence hash, KEYS[3] batch marker; ARGV[1] requests counted in the
// store, ARGV[2] floor (the stored count), ARGV[3] lifetime, ARGV[4..] sequence numbers of
// requests whose command timed out. Adds to Redis the requests counted in the store while it was
// unreachable, less those whose timed-out command ran after all; a counter Redis lost is set to
// the stored count instead, which holds them already. The batch marker makes a retry of a batch
// that ran late a no-op.
const RECONCILE = `
if not redis.call('SET', KEYS[3], 1, 'NX', 'EX', 86400) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 0
end
local last = tonumber(redis.call('HGET', KEYS[2], KEYS[1]) or '0')
local ran = 0
for i = 4, #ARGV do if tonumber(ARGV[i]) <= last then ran = ran + 1 end end
local add = tonumber(ARGV[1]) - ran
if add > 0 then redis.call('INCRBY', KEYS[1], add) end
return ran
`;
// KEYS[1] lock; ARGV[1] token. Deletes the lock only if we still hold it.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

function counterKey(prefix: string, keyId: string, day: Day): string {
  return `${prefix}quota:${keyId}:${day}`;
}

/**
 * Seconds a counter lives: to the end of the day after its day, so a late flush still finds it.
 * Relative to the service's clock, which may be fixed in the past (EXRATES_NOW), not Redis's.
 */
function lifetimeOf(day: Day, clock: Clock): number {
  return Math.max(60, Math.ceil((Date.parse(`${addDays(day, 2)}T00:00:00Z`) - clock.now().getTime()) / 1000));
}

/** After a Redis command fails, how long requests go straight to the store before Redis is tried again. */
const SUSPECT_MS = 2_000;
/** How long commands may keep timing out on a ready connection before it is replaced. */
const HALF_OPEN_MS = 10_000;

export interface RedisQuotaOptions {
  redis: Redis;
  /** The store's quota table: where counts are persisted, and the fallback while Redis is down. */
  store: QuotaStore & Required<Pick<QuotaStore, 'add'>>;
  log: Logger;
  clock: Clock;
  flushIntervalMs?: number;
  /** Key namespace (default `exrates:`). */
  prefix?: string;
}

interface Batch {
  marker: string;
  count: number;
  uncertain: number[];
}

interface Counter {
  keyId: string;
  day: Day;
  /** Requests this instance counted in Redis and has not yet added to the store. */
  unflushed: number;
  /** Requests this instance counted in the store while Redis was unreachable, not yet in Redis. */
  offline: number;
  /** Sequence numbers of requests whose Redis command failed without an answer: it may have run. */
  uncertain: number[];
  /** A reconcile sent but not confirmed, retried as it is. */
  batch?: Batch;
}

/**
 * Quota counting in Redis, exact across instances (one atomic script per request). The rule:
 * - Redis holds the live count. Each instance adds the requests it counted there to the store
 *   every second (counts are added, never overwritten, so instances cannot erase each other's).
 * - A counter missing from Redis (restart, eviction) is seeded from the store plus this
 *   instance's unflushed requests, so a Redis loss forgives at most the other instances' last
 *   second of requests.
 * - While Redis is unreachable (or a command times out), an instance first adds its unflushed
 *   requests to the store, then counts each request in the store with a conditional increment,
 *   exact for its own requests (other instances' last second may be missing): the service
 *   neither fails open nor closed. When Redis answers again, those requests are added to the
 *   Redis counters before Redis counts again, less any whose timed-out command ran after all
 *   (each counted request leaves its sequence number in Redis), so nothing is counted twice.
 */
export function createRedisQuotaStore(options: RedisQuotaOptions): QuotaStore {
  const { redis, store, log, clock } = options;
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const instance = randomUUID();
  const sequenceKey = `${prefix}seq:${instance}`;
  const counters = new Map<string, Counter>();
  let sequence = 0;
  let degraded = false;
  let countingInStore = 0;
  let suspectUntil = 0;
  let reconciling: Promise<void> | undefined;

  function counter(keyId: string, day: Day): Counter {
    const name = `${keyId}:${day}`;
    let c = counters.get(name);
    if (!c) counters.set(name, (c = { keyId, day, unflushed: 0, offline: 0, uncertain: [] }));
    return c;
  }

  const warn = (message: string) => (error: unknown) =>
    log.warn({ err: error instanceof Error ? error.message : String(error) }, message);

  /** Adds every unflushed count to the store. Never throws. */
  async function flush(): Promise<void> {
    const today = clock.now().toISOString().slice(0, 10);
    for (const [name, c] of counters) {
      const count = c.unflushed;
      if (count > 0) {
        c.unflushed -= count;
        try {
          await store.add(c.keyId, c.day, count);
        } catch (error) {
          c.unflushed += count;
          warn('could not write quota counts to the store; will retry')(error);
          return;
        }
      }
      if (c.unflushed === 0 && c.offline === 0 && !c.batch && c.uncertain.length === 0 && c.day < today) counters.delete(name);
    }
  }

  /** Moves what was counted in the store while Redis was away into Redis. Never throws. */
  async function reconcile(): Promise<void> {
    try {
      await redis.ping();
      answered();
      suspectUntil = 0;
    } catch (error) {
      suspect(error);
      return;
    }
    for (const c of counters.values()) {
      if (!c.batch) {
        if (c.offline === 0 && c.uncertain.length === 0) continue;
        c.batch = { marker: `${prefix}reconciled:${randomUUID()}`, count: c.offline, uncertain: c.uncertain };
        c.offline = 0;
        c.uncertain = [];
      }
      const batch = c.batch;
      try {
        const floor = (await store.used(c.keyId, c.day)) + c.unflushed;
        await redis.eval(
          RECONCILE,
          3,
          counterKey(prefix, c.keyId, c.day),
          sequenceKey,
          batch.marker,
          batch.count,
          floor,
          lifetimeOf(c.day, clock),
          ...batch.uncertain,
        );
        delete c.batch;
      } catch (error) {
        suspect(error);
        warn('could not reconcile quota counters with redis; will retry')(error);
        return;
      }
    }
    // A request still being counted in the store will add to `offline` when it returns: stay degraded for it.
    if (countingInStore === 0 && [...counters.values()].every((c) => c.offline === 0 && !c.batch && c.uncertain.length === 0)) degraded = false;
  }

  function startReconcile(): Promise<void> {
    reconciling ??= reconcile().finally(() => {
      reconciling = undefined;
    });
    return reconciling;
  }

  const redisUsable = () => redis.status === 'ready' && Date.now() >= suspectUntil;

  /**
   * Commands that keep timing out on a connection that still looks ready mean a half-open socket
   * (a partition, a black-holed route): nothing will ever answer on it, so start a new one. Not
   * at the first timeout: a Redis that stalls briefly answers on the same connection in order,
   * which is what lets a reconcile tell whether a timed-out command ran.
   */
  let timingOutSince: number | undefined;
  function suspect(error: unknown): void {
    const now = Date.now();
    suspectUntil = now + SUSPECT_MS;
    if (!(error instanceof Error && /timed out/i.test(error.message))) return;
    timingOutSince ??= now;
    if (redis.status === 'ready' && now - timingOutSince > HALF_OPEN_MS) {
      timingOutSince = undefined;
      redis.disconnect(true);
    }
  }
  const answered = () => {
    timingOutSince = undefined;
  };

  redis.on('ready', () => {
    if (degraded) void startReconcile();
  });

  let flushing: Promise<void> | undefined;
  const runFlush = () =>
    (flushing ??= flush().finally(() => {
      flushing = undefined;
    }));
  const timer = setInterval(() => {
    void runFlush();
    // Probe a suspect Redis on every tick: the reconcile starts with a PING.
    if (degraded && redis.status === 'ready') void startReconcile();
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  async function consumeInStore(c: Counter, limit: number) {
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

  return {
    async consume(keyId, day, limit) {
      const c = counter(keyId, day);
      if (degraded && redisUsable()) await startReconcile();
      if (degraded || !redisUsable()) return consumeInStore(c, limit);
      const key = counterKey(prefix, keyId, day);
      const seq = ++sequence;
      try {
        let [allowed, used] = (await redis.eval(CONSUME, 2, key, sequenceKey, limit, seq, lifetimeOf(day, clock))) as [number, number];
        if (allowed === -1) {
          const floor = (await store.used(keyId, day)) + c.unflushed;
          await redis.set(key, floor, 'EX', lifetimeOf(day, clock), 'NX');
          [allowed, used] = (await redis.eval(CONSUME, 2, key, sequenceKey, limit, seq, lifetimeOf(day, clock))) as [number, number];
        }
        answered();
        if (allowed === 1) c.unflushed += 1;
        return { allowed: allowed === 1, used: Number(used) };
      } catch (error) {
        // The command may have reached Redis and run; the reconcile will find out.
        c.uncertain.push(seq);
        suspect(error);
        warn('redis quota counter unavailable; counting in the store')(error);
        return consumeInStore(c, limit);
      }
    },

    async used(keyId, day) {
      const stored = await store.used(keyId, day);
      try {
        const live = await redis.get(counterKey(prefix, keyId, day));
        return Math.max(stored, live === null ? 0 : Number(live));
      } catch {
        return stored;
      }
    },

    async close() {
      clearInterval(timer);
      await flushing;
      await reconciling;
      await flush();
    },
  };
}

/** A lock shared by every instance on one Redis: SET NX PX with a token, released only by its holder. */
export function createRedisLock(redis: Redis, prefix = DEFAULT_REDIS_PREFIX): Lock {
  return {
    async tryAcquire(name, ttlMs) {
      const key = `${prefix}lock:${name}`;
      const token = randomUUID();
      const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
      if (ok !== 'OK') return null;
      return async () => {
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      };
    },
    async isHeld(name) {
      return (await redis.exists(`${prefix}lock:${name}`)) === 1;
    },
  };
}
