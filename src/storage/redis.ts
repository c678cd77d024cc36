import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Cluster, Redis } from 'ioredis';
import type { Clock, Lock, QuotaStore } from '../core/ports.js';
import type { Logger } from '../core/refresh.js';
import { addDays, type Day } from '../core/time.js';
import type { DatabaseQuotaStore } from './quota-store.js';
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

// KEYS[1] this instance's receipt, KEYS[2..] counters, one per entry; ARGV[1] the receipt's
// lifetime, ARGV[2] the sequence number of the call's first request (the others follow it one by
// one, entry after entry), ARGV[3] the entries in the order of KEYS, each "<requests> <limit> ":
// requests of one counter with one limit. An entry's requests are decided in order, each as if
// alone (as many counted as the limit leaves room for, the rest refused), so a call decides exactly
// what the same requests sent one by one would have. Returns a word per entry: the counter's count
// before it, from which the caller works out each request's answer, or "m": counter missing,
// nothing counted. The receipt keeps the call and its answer ("<first>|<entries>|<answer>"), which
// tells a later reconcile whether a call whose answer was lost ran after all, and what it counted.
// Every value crosses as the digits it arrived in: a Lua number turned into a string costs a
// printf (docs/capacity.md has what this form saves). The requests travel as one
// argument and the answer as one string, not as arguments and integers per request: ioredis makes
// several objects of every argument and every element of a reply, and at a few thousand calls a
// second they outlived young-generation collections and brought on full ones.
const CONSUME_BATCH = `
local out, k = {}, 1
for ns, ls in string.gmatch(ARGV[3], '(%d+) (%d+) ') do
  k = k + 1
  local v = redis.call('GET', KEYS[k])
  if v then
    local room = tonumber(ls) - tonumber(v)
    if room >= tonumber(ns) then
      redis.call('INCRBY', KEYS[k], ns)
    elseif room > 0 then
      redis.call('INCRBY', KEYS[k], room)
    end
    out[k - 1] = v
  else
    out[k - 1] = 'm'
  end
end
local answer = table.concat(out, ' ')
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. answer, 'EX', ARGV[1])
return answer
`;
// KEYS[1] counter, KEYS[2] batch marker; ARGV[1] requests counted in the store while Redis was
// away, less those of a lost call that ran after all, ARGV[2] floor (the stored count), ARGV[3]
// lifetime. Adds those requests to Redis; a counter Redis lost is set to the stored count instead,
// which holds them already. The batch marker makes a retry of a batch that ran late a no-op.
const RECONCILE = `
if not redis.call('SET', KEYS[2], 1, 'NX', 'EX', 86400) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 0
end
if tonumber(ARGV[1]) > 0 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
return 1
`;

/**
 * How many of `seqs` a call counted, by the receipt CONSUME_BATCH left ("<first>|<entries>|<answer>"):
 * none when the receipt is of another call (the lost one never ran) or of none.
 */
export function countedByReceipt(receipt: string | null, seqs: readonly number[]): number {
  if (receipt === null || seqs.length === 0) return 0;
  const [firstText, entriesText, answerText] = receipt.split('|');
  const words = (text: string | undefined) => (text ?? '').split(' ').filter((word) => word !== '');
  const entries = words(entriesText);
  const answer = words(answerText);
  let seq = Number(firstText);
  let counted = 0;
  for (let i = 0; i < answer.length; i++) {
    const requests = Number(entries[2 * i]);
    const limit = Number(entries[2 * i + 1]);
    const before = answer[i] === 'm' ? undefined : Number(answer[i]);
    const taken = before === undefined ? 0 : Math.max(0, Math.min(requests, limit - before));
    for (const s of seqs) if (s >= seq && s < seq + taken) counted += 1;
    seq += requests;
  }
  return counted;
}

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
 * receipt is one per API key and instance. On one server the names stay as they always
 * were, so instances of an earlier release keep counting in the same counters during a rolling
 * upgrade.
 */
export function redisKeyspace(prefix: string, cluster: boolean, instance: string) {
  return {
    counter: (keyId: string, day: Day) => (cluster ? `${prefix}quota:{${keyId}}:${day}` : `${prefix}quota:${keyId}:${day}`),
    /** Of the last script call, per instance (per API key and instance on a cluster); a batch is split along these. */
    receipt: (keyId: string) => (cluster ? `${prefix}receipt:{${keyId}}:${instance}` : `${prefix}receipt:${instance}`),
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
  store: DatabaseQuotaStore;
  log: Logger;
  clock: Clock;
  flushIntervalMs?: number;
  /** Key namespace (default `exrates:`). */
  prefix?: string;
}

/** A reconcile's addition to one counter: the requests counted in the store, less those a lost call counted after all. */
interface Batch {
  marker: string;
  count: number;
}

interface Counter {
  keyId: string;
  day: Day;
  /** Its key in Redis, and that of the receipt of the script calls that count it. */
  name: string;
  receiptName: string;
  /** When its key in Redis may expire (ms since the epoch). */
  expiry: number;
  /** Its entry in the script call being put together; set only while that call's requests are grouped. */
  entry: Entry | undefined;
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

/** Requests of one counter with one limit in a script call, in order. */
interface Entry {
  c: Counter;
  limit: number;
  requests: Pending[];
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
 * - Redis holds the live count. One batch of requests is on its way to Redis at a time; the next
 *   carries every request that arrived meanwhile (below). A batch is one script call (one per
 *   API key on a cluster), decided in order inside Redis: as exact as one call per request, for
 *   a fraction of the round trips.
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
 *   (each script call leaves a receipt in Redis), so nothing is counted twice.
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
        receiptName: keys.receipt(keyId),
        expiry: expiryOf(day),
        entry: undefined,
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
      redisAnswered();
      suspectUntil = 0;
    } catch (error) {
      suspect(error);
      return;
    }
    // At most one call per receipt can have been lost since the last reconcile: after a failure,
    // nothing goes to Redis until the reconcile is done.
    const receipts = new Map<string, string | null>();
    for (const c of allCounters()) {
      try {
        if (!c.batch) {
          if (c.offline === 0 && c.uncertain.length === 0) continue;
          if (c.uncertain.length > 0 && !receipts.has(c.receiptName)) receipts.set(c.receiptName, await redis.get(c.receiptName));
          const receipt = c.uncertain.length > 0 ? receipts.get(c.receiptName)! : null;
          c.batch = { marker: keys.marker(c.keyId), count: c.offline - countedByReceipt(receipt, c.uncertain) };
          c.offline = 0;
          c.uncertain = [];
        }
        const batch = c.batch;
        const floor = (await store.used(c.keyId, c.day)) + c.unflushed;
        await redis.eval(RECONCILE, 2, c.name, batch.marker, batch.count, floor, lifetimeUntil(c.expiry, clock));
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
  const redisAnswered = () => {
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

  // The batching, one rule: one batch on its way to Redis at a time; the next carries every
  // request that arrived meanwhile. A request that finds none on its way leaves at the end of the
  // turn of the event loop that queued it, with the others of that turn. Written here, not taken
  // from ioredis's auto-pipelining: that saves writes, not script calls, and Redis would still
  // run one script per request.
  let pending: Pending[] = [];
  /** The batch on its way, until its answers are given. */
  let onItsWay: Promise<void> | undefined;
  let scheduled = false;

  function sendPending(): void {
    scheduled = false;
    if (onItsWay || pending.length === 0) return;
    const batch = pending;
    pending = [];
    onItsWay = sendBatch(batch).finally(() => {
      onItsWay = undefined;
      sendPending();
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

  /** Sends a batch and gives its answers. */
  async function sendBatch(batch: Pending[]): Promise<void> {
    // Calls per receipt, of at most MAX_BATCH requests each. Those of one receipt go one after
    // the other, so that at most one of them can be lost between reconciles (after a failure the
    // rest go to the store); those of different receipts go at once.
    const byReceipt = new Map<string, Pending[][]>();
    for (const request of batch) {
      const name = request.c.receiptName;
      let calls = byReceipt.get(name);
      if (!calls) byReceipt.set(name, (calls = [[]]));
      let call = calls[calls.length - 1]!;
      if (call.length >= MAX_BATCH) calls.push((call = []));
      call.push(request);
    }
    const answers: Array<(missing: Pending[]) => void> = [];
    await Promise.all(
      [...byReceipt].map(async ([name, calls]) => {
        for (const call of calls) {
          if (degraded || !redisUsable()) toStore(call, undefined, false);
          else {
            const answer = await runScript(name, call);
            if (answer) answers.push(answer);
          }
        }
      }),
    );
    const missing: Pending[] = [];
    for (const answer of answers) answer(missing);
    if (missing.length > 0) await seed(missing);
  }

  /** Runs one script call; its answers are given by the function returned (none if it failed: then the store counted). */
  async function runScript(receiptName: string, call: Pending[]): Promise<((missing: Pending[]) => void) | undefined> {
    // The requests of one counter and limit form one entry, at the place of the first of them.
    const entries: Entry[] = [];
    for (const request of call) {
      const c = request.c;
      // Sent as digits: a limit beyond 2^53 counts as 2^53 (the config admits any integer).
      const limit = Math.min(request.limit, Number.MAX_SAFE_INTEGER);
      let entry = c.entry;
      if (!entry || entry.limit !== limit) {
        c.entry = entry = { c, limit, requests: [] };
        entries.push(entry);
      }
      entry.requests.push(request);
    }
    const keyNames = [receiptName];
    let args = '';
    let expiry = 0;
    const first = sequence + 1;
    for (const entry of entries) {
      const c = entry.c;
      c.entry = undefined;
      keyNames.push(c.name);
      expiry = Math.max(expiry, c.expiry);
      args += `${entry.requests.length} ${entry.limit} `;
      for (const request of entry.requests) request.seq = ++sequence;
    }
    let out: unknown;
    try {
      out = await redis.exratesConsumeBatch(keyNames.length, ...keyNames, lifetimeUntil(expiry, clock), first, args);
      redisAnswered();
    } catch (error) {
      toStore(call, error, true);
      return undefined;
    }
    if (typeof out !== 'string') {
      toStore(call, new Error('the quota script answered something other than a string'), true);
      return undefined;
    }
    return (missing) => giveAnswers(entries, out, missing);
  }

  /** The answers of a script call: one word per entry (see CONSUME_BATCH), read in place rather than split into strings. */
  function giveAnswers(entries: Entry[], out: string, missing: Pending[]): void {
    let at = 0;
    for (let e = 0; e < entries.length; e++) {
      const { c, limit, requests } = entries[e]!;
      const start = at;
      let before = 0;
      for (let digit = out.charCodeAt(at); digit >= 48 && digit <= 57; digit = out.charCodeAt(++at)) before = before * 10 + digit - 48;
      if (at > start) {
        const taken = Math.max(0, Math.min(requests.length, limit - before));
        c.unflushed += taken;
        for (let i = 0; i < requests.length; i++) settled(requests[i]!, i < taken ? { allowed: true, used: before + i + 1 } : { allowed: false, used: before + taken });
      } else if (out.charCodeAt(at) === 109 /* m */) {
        at += 1;
        missing.push(...requests);
      } else {
        const unanswered = entries.slice(e).flatMap((entry) => entry.requests);
        toStore(unanswered, new Error(`unexpected answer from the quota script: ${out.slice(0, 80)}`), true);
        return;
      }
      at += 1;
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

  /** Queues a request for the next batch. */
  function counted(c: Counter, limit: number): Promise<{ allowed: boolean; used: number }> {
    c.waiting += 1;
    const answer = new Promise<{ allowed: boolean; used: number }>((settle) => pending.push({ c, limit, seq: 0, seeded: false, settle }));
    if (!onItsWay && !scheduled) {
      scheduled = true;
      setImmediate(sendPending);
    }
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
      while (onItsWay || pending.length > 0) {
        sendPending();
        await onItsWay;
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
