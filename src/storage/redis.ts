import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Cluster, Redis } from 'ioredis';
import type { Clock, Lock, QuotaStore } from '../core/ports.js';
import type { Logger } from '../core/refresh.js';
import { addDays, type Day } from '../core/time.js';
import { parseRedisUrl } from './redis-url.js';

/** Namespace of every key this service writes; one per installation sharing a Redis. */
export const DEFAULT_REDIS_PREFIX = 'exrates:';

/** One Redis server, or a Redis Cluster: the commands this service sends work on both. */
export type RedisClient = Redis | Cluster;

/**
 * A Redis connection that fails fast: no offline queue, one retry per command and a short
 * command timeout, so a request never hangs on a Redis that is down. ioredis keeps reconnecting
 * in the background. On a cluster, the same holds for the connection to every node.
 */
export async function openRedis(url: string, log: Logger): Promise<RedisClient> {
  // Loaded only when Redis is configured: the module and what it compiles cost a single-process
  // install on SQLite about 9 MB of resident memory for nothing.
  const { Cluster, Redis } = await import('ioredis');
  const target = parseRedisUrl(url);
  const perCommand = { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 1_000 };
  const retry = (times: number) => Math.min(times * 200, 2_000);
  const redis: RedisClient = target.cluster
    ? new Cluster(target.nodes, {
        lazyConnect: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: retry,
        redisOptions: {
          ...perCommand,
          ...(target.username ? { username: target.username } : {}),
          ...(target.password ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        },
      })
    : new Redis(url, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: retry, ...perCommand });
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

/**
 * Calls `count` with the name of every command any ioredis client of this process sends, through
 * the tracing channel ioredis publishes (one message per command sent to a server). Returns the
 * unsubscribe.
 */
export function countRedisCommands(count: (command: string) => void): () => void {
  // The start channel of ioredis's tracing channel `ioredis:command`.
  const name = 'tracing:ioredis:command:start';
  const onCommand = (message: unknown) => count((message as { command: string }).command);
  subscribe(name, onCommand);
  return () => {
    unsubscribe(name, onCommand);
  };
}

// KEYS[1] this instance's sequence hash, KEYS[2..] counters; ARGV[1] the hash's lifetime, ARGV[2]
// the sequence number of the batch's first request (the others follow it one by one), ARGV[3] the
// requests, each as "<index of its counter in KEYS> <limit> ". Returns one string, a word per
// request: "c<used>" counted, "r<used>" refused, "m" counter missing (then nothing is counted on
// it). Requests are decided in order, each as if alone, so a batch decides exactly what the same
// requests sent one by one would have. The hash keeps, per counter, the sequence number of the
// last request counted, which lets a later reconcile tell whether a batch whose answer was lost
// ran after all: a counter's counted requests in a batch come before its refused ones (its count
// only rises, its limit does not change within an instance), so every request numbered up to the
// last counted one was counted.
// The requests travel as one argument and the answers as one string, not as three arguments and
// two integers per request: ioredis makes several objects of every argument and every element of
// a reply, and at a few thousand batches a second they outlived young-generation collections and
// brought on full ones.
const CONSUME_BATCH = `
local counts, initial, last, out = {}, {}, {}, {}
local seq = tonumber(ARGV[2]) - 1
for ks, ls in string.gmatch(ARGV[3], '(%d+) (%d+) ') do
  seq = seq + 1
  local k = tonumber(ks)
  if counts[k] == nil then
    local v = redis.call('GET', KEYS[k])
    counts[k] = v and tonumber(v) or false
    initial[k] = counts[k]
  end
  local c = counts[k]
  if c == false then
    out[#out + 1] = 'm'
  elseif c >= tonumber(ls) then
    out[#out + 1] = string.format('r%d', c)
  else
    c = c + 1
    counts[k] = c
    last[k] = seq
    out[#out + 1] = string.format('c%d', c)
  end
end
local seen = {}
for k, s in pairs(last) do
  redis.call('INCRBY', KEYS[k], counts[k] - initial[k])
  seen[#seen + 1] = KEYS[k]; seen[#seen + 1] = s
end
if #seen > 0 then
  redis.call('HSET', KEYS[1], unpack(seen))
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return table.concat(out, ' ')
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

/** The batch script as a command of the client: ioredis sends EVALSHA and loads the script where it is missing. */
interface QuotaScripts {
  exratesConsumeBatch(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<string>;
}

function withScripts(redis: RedisClient): RedisClient & QuotaScripts {
  const scripted = redis as RedisClient & Partial<QuotaScripts>;
  if (!scripted.exratesConsumeBatch) redis.defineCommand('exratesConsumeBatch', { lua: CONSUME_BATCH });
  return scripted as RedisClient & QuotaScripts;
}

/**
 * The names of this service's keys. A script may touch only keys of one hash slot on a cluster,
 * so there every key of an API key's counting carries the key's id as hash tag (`{id}`), and the
 * sequence hash is one per API key and instance. On one server the names stay as they always
 * were, so instances of an earlier release keep counting in the same counters during a rolling
 * upgrade.
 */
export function redisKeyspace(prefix: string, cluster: boolean, instance: string) {
  return {
    counter: (keyId: string, day: Day) => (cluster ? `${prefix}quota:{${keyId}}:${day}` : `${prefix}quota:${keyId}:${day}`),
    /** One script call per distinct sequence hash: a batch is split along these. */
    sequence: (keyId: string) => (cluster ? `${prefix}seq:{${keyId}}:${instance}` : `${prefix}seq:${instance}`),
    marker: (keyId: string) => (cluster ? `${prefix}reconciled:{${keyId}}:${randomUUID()}` : `${prefix}reconciled:${randomUUID()}`),
    lock: (name: string) => `${prefix}lock:${name}`,
  };
}

/**
 * Seconds a counter lives: to the end of the day after its day, so a late flush still finds it.
 * Relative to the service's clock, which may be fixed in the past (EXRATES_NOW), not Redis's.
 */
const expiryOf = (day: Day) => Date.parse(`${addDays(day, 2)}T00:00:00Z`);
const lifetimeUntil = (expiry: number, clock: Clock) => Math.max(60, Math.ceil((expiry - clock.now().getTime()) / 1000));

/** After a Redis command fails, how long requests go straight to the store before Redis is tried again. */
const SUSPECT_MS = 2_000;
/** How long commands may keep timing out on a ready connection before it is replaced. */
const HALF_OPEN_MS = 10_000;
/** Requests per script call at most: a script blocks its Redis while it runs. */
const MAX_BATCH = 1_000;

export interface RedisQuotaOptions {
  redis: RedisClient;
  /** The store's quota table: where counts are persisted, and the fallback while Redis is down. */
  store: QuotaStore & Required<Pick<QuotaStore, 'addMany'>>;
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
  /** Its key in Redis, and that of the sequence hash its requests are numbered in. */
  name: string;
  sequenceName: string;
  /** When its key in Redis may expire (ms since the epoch). */
  expiry: number;
  /** The script call it was last put in, and its index in that call's KEYS. */
  call: number;
  at: number;
  /** Requests this instance counted in Redis and has not yet added to the store. */
  unflushed: number;
  /** Requests this instance counted in the store while Redis was unreachable, not yet in Redis. */
  offline: number;
  /** Sequence numbers of requests whose Redis command failed without an answer: it may have run. */
  uncertain: number[];
  /** A reconcile sent but not confirmed, retried as it is. */
  batch?: Batch;
  /** Requests waiting for Redis's answer: the counter stays in memory until they have it. */
  waiting: number;
}

/** A request waiting for the next script call. */
interface Pending {
  c: Counter;
  limit: number;
  seq: number;
  /** The counter was missing and has been seeded from the store for this request. */
  seeded: boolean;
  settle(outcome: { allowed: boolean; used: number } | Promise<{ allowed: boolean; used: number }>): void;
}

/**
 * Quota counting in Redis, exact across instances. The rule:
 * - Redis holds the live count. The decisions an instance has to make while one script call is
 *   on its way (and those of the event-loop turn that starts it) travel in the next call, one per
 *   batch (one per API key on a cluster), decided in order inside Redis: as exact as one call
 *   per request, for a fraction of the round trips.
 * - Each instance adds the requests it counted there to the store every second (counts are
 *   added, never overwritten, so instances cannot erase each other's).
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
  const { store, log, clock } = options;
  const redis = withScripts(options.redis);
  const keys = redisKeyspace(options.prefix ?? DEFAULT_REDIS_PREFIX, redis.isCluster, randomUUID());
  /** By day, then key (both the same strings on every request; a joined key V8 would intern per lookup). */
  const counters = new Map<Day, Map<string, Counter>>();
  const allCounters = function* (): Generator<Counter> {
    for (const byKey of counters.values()) yield* byKey.values();
  };
  let sequence = 0;
  let degraded = false;
  let countingInStore = 0;
  let suspectUntil = 0;
  let reconciling: Promise<void> | undefined;

  function counter(keyId: string, day: Day): Counter {
    let byKey = counters.get(day);
    if (!byKey) counters.set(day, (byKey = new Map()));
    let c = byKey.get(keyId);
    if (!c) {
      c = {
        keyId,
        day,
        name: keys.counter(keyId, day),
        sequenceName: keys.sequence(keyId),
        expiry: expiryOf(day),
        call: 0,
        at: 0,
        unflushed: 0,
        offline: 0,
        uncertain: [],
        waiting: 0,
      };
      byKey.set(keyId, c);
    }
    return c;
  }

  const warn = (message: string) => (error: unknown) =>
    log.warn({ err: error instanceof Error ? error.message : String(error) }, message);

  /** Adds every unflushed count to the store, in as few statements as it can. Never throws. */
  async function flush(): Promise<void> {
    const today = clock.now().toISOString().slice(0, 10);
    const taken: Array<{ c: Counter; count: number }> = [];
    for (const c of allCounters()) {
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
    for (const [day, byKey] of counters) {
      if (day >= today) continue;
      for (const [keyId, c] of byKey) {
        if (c.unflushed === 0 && c.offline === 0 && !c.batch && c.uncertain.length === 0 && c.waiting === 0) byKey.delete(keyId);
      }
      if (byKey.size === 0) counters.delete(day);
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
    for (const c of allCounters()) {
      if (!c.batch) {
        if (c.offline === 0 && c.uncertain.length === 0) continue;
        c.batch = { marker: keys.marker(c.keyId), count: c.offline, uncertain: c.uncertain };
        c.offline = 0;
        c.uncertain = [];
      }
      const batch = c.batch;
      try {
        const floor = (await store.used(c.keyId, c.day)) + c.unflushed;
        await redis.eval(
          RECONCILE,
          3,
          c.name,
          c.sequenceName,
          batch.marker,
          batch.count,
          floor,
          lifetimeUntil(c.expiry, clock),
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
    if (countingInStore === 0 && [...allCounters()].every((c) => c.offline === 0 && !c.batch && c.uncertain.length === 0)) degraded = false;
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

  // The batching: requests queue in `pending`; one batch is on its way at a time, and the queue
  // goes out when it is back (or at the end of the turn that queued the first request). Written
  // here, not taken from ioredis's auto-pipelining: that saves writes, not script calls, and
  // Redis would still run one script per request.
  let pending: Pending[] = [];
  let sending: Promise<void> | undefined;
  let scheduled = false;

  function schedule(): void {
    if (sending || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      sendPending();
    });
  }

  function sendPending(): void {
    if (sending || pending.length === 0) return;
    const batch = pending;
    pending = [];
    sending = sendBatch(batch).finally(() => {
      sending = undefined;
      if (pending.length > 0) schedule();
    });
  }

  function settled(request: Pending, outcome: Parameters<Pending['settle']>[0]): void {
    request.c.waiting -= 1;
    request.settle(outcome);
  }

  /** Requests that cannot be counted in Redis are counted in the store; `uncertain`: their script may have run. */
  function toStore(requests: Pending[], error: unknown, uncertain: boolean): void {
    if (error !== undefined) {
      suspect(error);
      warn('redis quota counter unavailable; counting in the store')(error);
    }
    for (const request of requests) {
      // The command may have reached Redis and run; the reconcile will find out.
      if (uncertain) request.c.uncertain.push(request.seq);
      settled(request, consumeInStore(request.c, request.limit));
    }
  }

  async function sendBatch(batch: Pending[]): Promise<void> {
    if (degraded || !redisUsable()) return toStore(batch, undefined, false);
    // One call per sequence hash, and per MAX_BATCH requests of it.
    const calls: Array<{ name: string; requests: Pending[] }> = [];
    const filling = new Map<string, Pending[]>();
    for (const request of batch) {
      const name = request.c.sequenceName;
      let requests = filling.get(name);
      if (!requests || requests.length >= MAX_BATCH) {
        filling.set(name, (requests = []));
        calls.push({ name, requests });
      }
      requests.push(request);
    }
    const missing: Pending[] = [];
    await Promise.all(calls.map(({ name, requests }) => runScript(name, requests, missing)));
    if (missing.length > 0) await seed(missing);
  }

  let scriptCalls = 0;
  async function runScript(sequenceName: string, call: Pending[], missing: Pending[]): Promise<void> {
    const stamp = ++scriptCalls;
    const keyNames = [sequenceName];
    let requests = '';
    let expiry = 0;
    for (const request of call) {
      const c = request.c;
      if (c.call !== stamp) {
        c.call = stamp;
        c.at = keyNames.push(c.name);
        expiry = Math.max(expiry, c.expiry);
      }
      // Written as digits: a limit beyond 2^53 counts as 2^53 (the config admits any integer).
      requests += `${c.at} ${Math.min(request.limit, Number.MAX_SAFE_INTEGER)} `;
      request.seq = ++sequence;
    }
    let out: unknown;
    try {
      out = await redis.exratesConsumeBatch(keyNames.length, ...keyNames, lifetimeUntil(expiry, clock), call[0]!.seq, requests);
      answered();
    } catch (error) {
      return toStore(call, error, true);
    }
    if (typeof out !== 'string') return toStore(call, new Error('the quota script answered something other than a string'), true);
    // One word per request (see CONSUME_BATCH), read in place rather than split into strings.
    let at = 0;
    for (let i = 0; i < call.length; i++) {
      const request = call[i]!;
      const kind = out.charCodeAt(at++);
      let used = 0;
      for (let digit = out.charCodeAt(at); digit >= 48 && digit <= 57; digit = out.charCodeAt(++at)) used = used * 10 + digit - 48;
      at += 1;
      if (kind === 109 /* m */) missing.push(request);
      else if (kind === 99 /* c */ || kind === 114 /* r */) {
        if (kind === 99) request.c.unflushed += 1;
        settled(request, { allowed: kind === 99, used });
      } else return toStore(call.slice(i), new Error(`unexpected answer from the quota script: ${out.slice(0, 80)}`), true);
    }
  }

  /**
   * Counters missing from Redis start from the store plus what this instance has not flushed yet
   * (SET NX: of several instances seeding at once, the first wins and none undoes another's
   * counting); their requests go in the next batch, ahead of those that came meanwhile.
   */
  async function seed(requests: Pending[]): Promise<void> {
    const again = requests.filter((r) => r.seeded);
    const first = requests.filter((r) => !r.seeded);
    try {
      for (const c of new Set(first.map((r) => r.c))) {
        const floor = (await store.used(c.keyId, c.day)) + c.unflushed;
        await redis.set(c.name, floor, 'EX', lifetimeUntil(c.expiry, clock), 'NX');
      }
    } catch (error) {
      return toStore(requests, error, false);
    }
    for (const r of first) r.seeded = true;
    pending = [...first, ...pending];
    // Seeded and missing again at once (evicted at once): Redis cannot hold it; the store decides.
    if (again.length > 0) toStore(again, new Error('quota counter vanished from redis right after it was seeded'), false);
  }

  /** Queues a request for the next script call. */
  function counted(c: Counter, limit: number): Promise<{ allowed: boolean; used: number }> {
    c.waiting += 1;
    const answer = new Promise<{ allowed: boolean; used: number }>((settle) => pending.push({ c, limit, seq: 0, seeded: false, settle }));
    schedule();
    return answer;
  }

  /** While degraded: the store counts, until a reconcile has brought Redis up to date. */
  async function consumeWhileDegraded(c: Counter, limit: number) {
    if (redisUsable()) await startReconcile();
    return degraded || !redisUsable() ? consumeInStore(c, limit) : counted(c, limit);
  }

  return {
    consume(keyId, day, limit) {
      const c = counter(keyId, day);
      if (degraded) return consumeWhileDegraded(c, limit);
      if (!redisUsable()) return consumeInStore(c, limit);
      return counted(c, limit);
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
      while (sending || pending.length > 0) {
        sendPending();
        await sending;
      }
      await flushing;
      await reconciling;
      await flush();
    },
  };
}

/** A lock shared by every instance on one Redis (or cluster): SET NX PX with a token, released only by its holder. */
export function createRedisLock(redis: RedisClient, prefix = DEFAULT_REDIS_PREFIX): Lock {
  const keys = redisKeyspace(prefix, redis.isCluster, '');
  return {
    async tryAcquire(name, ttlMs) {
      const key = keys.lock(name);
      const token = randomUUID();
      const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
      if (ok !== 'OK') return null;
      return async () => {
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      };
    },
    async isHeld(name) {
      return (await redis.exists(keys.lock(name))) === 1;
    },
  };
}
