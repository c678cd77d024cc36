/**
 * Faults under load: two real instances reach PostgreSQL and Redis through loopback TCP proxies,
 * so a test can take an engine away mid-load (reset every connection and black-hole new ones, or
 * stall the open ones) without touching the shared engines. Steady load of 50 requests a second
 * over both instances; every answer is classified, timed and, for quotas, counted. Figures go to
 * stdout for the CI log.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { FIXED_NOW, tempDir } from '../helper.js';
import { processEnv, sharedHistoryVars } from '../support/env.js';
import { get } from '../support/http.js';
import { drive, type Load, type Outcome } from '../support/load.js';
import {
  createKey,
  ensureBuilt,
  isRunning,
  keyPrefix,
  killInstance,
  startInstance,
  startInstances,
  stopInstance,
  type Instance,
  type ProcessSetup,
} from '../support/processes.js';
import { proxyEngines, type EngineProxies } from '../support/proxy.js';
import { createPostgresSchema, deleteRedisKeys, missingEngines, REDIS_URL } from '../support/stores.js';
import { sleep, waitFor } from '../support/wait.js';

const TODAY = FIXED_NOW.slice(0, 10);
const PER_SECOND = 50;
const LIMIT = 1000;
/** Longest acceptable answer while an engine is away: the store's and Redis's own timeouts are 2 s or less. */
const MAX_ANSWER_MS = 3_000;

const isCounted = (o: Outcome) => typeof o.status === 'number' && o.status < 500 && o.status !== 429 && o.status !== 401;

describe('faults under load: two instances, PostgreSQL and Redis behind proxies', () => {
  let skip = '';
  const dir = tempDir('exrates-faults-');
  let schema: { url: string; drop(): Promise<void> } | undefined;
  let proxies: EngineProxies | undefined;
  let db: pg.Client | undefined;
  let redis: Redis | undefined;
  let setup: ProcessSetup;
  let direct: ProcessSetup;
  const instances: Instance[] = [];
  const crashed: string[] = [];
  const keys: string[] = [];

  /** PER_SECOND requests a second for `durationMs`, alternating between the instances; each event at its time. */
  function driveBoth(key: string, durationMs: number, events: Record<string, { at: number; run: () => Promise<unknown> }> = {}): Promise<Load> {
    const targets = instances.map((instance) => ({ name: instance.name, base: instance.base }));
    return drive({ targets, path: (i) => `/api/v1/rate?from=USD&to=${i % 3 ? 'JPY' : 'CHF'}`, key, perSecond: PER_SECOND, durationMs, events });
  }

  function tally(outcomes: Outcome[]): string {
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(String(o.status), (counts.get(String(o.status)) ?? 0) + 1);
    return [...counts].map(([status, n]) => `${n} x ${status}`).join(', ');
  }

  /** Every answer must be a 200 or a 503 problem with Retry-After, and none may take long. */
  function checkFailFast(outcomes: Outcome[]): void {
    const errors = outcomes.filter((o) => o.status === 'error').map((o) => `${o.instance} at ${Math.round(o.at)} ms: ${o.error}`);
    assert.deepEqual(errors, [], 'every request gets an answer');
    const unexpected = outcomes.filter((o) => o.status !== 200 && o.status !== 503).map((o) => `${o.status} ${o.reply?.body.slice(0, 300)}`);
    assert.deepEqual(unexpected, [], 'only 200 or 503');
    for (const o of outcomes.filter((x) => x.status === 503)) {
      const reply = o.reply!;
      assert.equal(reply.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.match(String(reply.headers['retry-after']), /^\d+$/);
      const problem = JSON.parse(reply.body) as Record<string, unknown>;
      assert.equal(problem.status, 503);
      assert.equal(problem.code, 'service_unavailable', 'an engine away is a dependency outage, not an internal error');
      assert.equal(typeof problem.detail, 'string');
      assert.doesNotMatch(reply.body, /\bat \S+\.js:\d+|stack|ECONN|ETIMEDOUT/i, 'no driver internals or stack in the answer');
    }
    const slow = outcomes.filter((o) => o.ms > MAX_ANSWER_MS).map((o) => `${o.instance} ${o.status} in ${Math.round(o.ms)} ms`);
    assert.deepEqual(slow, [], `every answer within ${MAX_ANSWER_MS} ms`);
  }

  /** Milliseconds from `since` until the answers sent before `until` were all 200 again. */
  function recoveryMs(outcomes: Outcome[], since: number, until = Infinity): number {
    const window = outcomes.filter((o) => o.at >= since && o.at < until).sort((a, b) => a.at - b.at);
    const lastBad = window.map((o) => o.status !== 200).lastIndexOf(true);
    if (lastBad === -1) return 0;
    const firstGood = window[lastBad + 1];
    assert.ok(firstGood, `answers were 200 again before ${Math.round(until)} ms`);
    return firstGood.at - since;
  }

  async function storedUsed(key: string): Promise<number> {
    const { rows } = await db!.query<{ used: number | string }>(
      'select q.used from quota_usage q join api_keys k on k.id = q.key_id where k.prefix = $1 and q.day = $2',
      [keyPrefix(key), TODAY],
    );
    return rows[0] === undefined ? 0 : Number(rows[0].used);
  }

  async function redisCount(key: string): Promise<number | null> {
    const { rows } = await db!.query<{ id: string }>('select id from api_keys where prefix = $1', [keyPrefix(key)]);
    const value = await redis!.get(`exrates:quota:${rows[0]!.id}:${TODAY}`);
    return value === null ? null : Number(value);
  }

  /** What the service says was used: one more request, minus itself. */
  async function servedUsed(instance: Instance, key: string): Promise<number> {
    const reply = await get(`${instance.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key }, timeoutMs: 5_000 });
    assert.equal(reply.status, 200, reply.body);
    return LIMIT - Number(reply.headers['x-ratelimit-remaining']) - 1;
  }

  async function newKey(): Promise<string> {
    const key = await createKey(direct, 'free');
    keys.push(key);
    return key;
  }

  before(async () => {
    skip = await missingEngines();
    if (skip) return;
    await ensureBuilt();
    // The start-up load takes a lock named by provider and tick (10 minutes here) and keeps it for
    // the tick: one left by a run a few minutes ago would stop this fresh schema from being loaded.
    await deleteRedisKeys('exrates:lock:refresh:file:*');
    schema = await createPostgresSchema();
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    proxies = await proxyEngines(schema.url);
    const vars = { ...sharedHistoryVars(), EXRATES_QUOTA_FREE: String(LIMIT) };
    setup = { cwd: dir.path, env: processEnv({ ...vars, ...proxies.proxied }) };
    // Keys are issued past the proxies, so issuing one never depends on what a test did to them.
    direct = { cwd: dir.path, env: processEnv({ ...vars, ...proxies.direct }) };
    await startInstances(['A', 'B'], setup, instances);
  });

  afterEach(async () => {
    if (skip) return;
    await proxies!.postgres.restore();
    await proxies!.redis.restore();
    // A crash is reported by the test it happened in; the next test gets a live instance again.
    for (const [index, instance] of instances.entries()) {
      if (isRunning(instance)) continue;
      const { code, signal } = await instance.exit;
      crashed.push(`${instance.name} exited (code ${code}, signal ${signal}):\n${lastWords(instance)}`);
      instances[index] = await startInstance(instance.name, setup, instance.port);
    }
  });

  after(async () => {
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await proxies?.close();
    const ids: string[] = [];
    for (const key of keys) {
      const rows = await db?.query<{ id: string }>('select id from api_keys where prefix = $1', [keyPrefix(key)]).catch(() => undefined);
      if (rows?.rows[0]) ids.push(rows.rows[0].id);
    }
    await db?.end().catch(() => undefined);
    // Disconnected even if a delete fails: a connected client would keep this process alive.
    try {
      for (const id of ids) await redis?.del(`exrates:quota:${id}:${TODAY}`);
    } finally {
      redis?.disconnect();
    }
    if (!skip) await deleteRedisKeys('exrates:lock:refresh:file:*');
    await schema?.drop();
    dir.remove();
  });

  /** The end of what a process wrote, without the warnings that fill it under faults. */
  function lastWords(instance: Instance): string {
    const lines = instance.output.join('').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{"level":40'));
    return lines.slice(-12).join('\n').slice(-1500);
  }

  function assertNoCrash(): void {
    const down = instances.filter((instance) => !isRunning(instance)).map((instance) => `${instance.name} exited:\n${lastWords(instance)}`);
    assert.deepEqual(down, [], 'both instances still running');
  }

  it('PostgreSQL restarted, then black-holed, for 2 s each: 200 or a fast 503 problem, then all 200 again by itself', async (t) => {
    if (skip) return t.skip(skip);
    const key = await newKey();
    const load = await driveBoth(key, 10_000, {
      // A restart: open connections reset, new ones refused until the engine is back.
      restart: { at: 1_500, run: () => proxies!.postgres.cut('refuse') },
      back: { at: 3_500, run: () => proxies!.postgres.restore() },
      // A network failure: open connections reset, new ones never answered.
      blackhole: { at: 6_000, run: () => proxies!.postgres.cut('blackhole') },
      restore: { at: 8_000, run: () => proxies!.postgres.restore() },
    });
    const { outcomes, events } = load;
    const during = (from: number, to: number) => outcomes.filter((o) => o.at >= from && o.at < to);
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    const answered = outcomes.every((o) => o.status !== 'error');
    const recoveries = answered ? [recoveryMs(outcomes, events.back!, events.blackhole!), recoveryMs(outcomes, events.restore!)] : [NaN, NaN];
    console.log(
      `faults postgres: ${outcomes.length} requests at ${PER_SECOND}/s over 2 instances -> ${tally(outcomes)}; slowest answer ${Math.round(slowest)} ms. ` +
        `Restart (refused ${((events.back! - events.restart!) / 1000).toFixed(1)} s): ${tally(during(events.restart!, events.back!))}, all 200 again ${Math.round(recoveries[0]!)} ms after it was back. ` +
        `Black hole (${((events.restore! - events.blackhole!) / 1000).toFixed(1)} s): ${tally(during(events.blackhole!, events.restore!))}, all 200 again ${Math.round(recoveries[1]!)} ms after it was back`,
    );
    assertNoCrash();
    checkFailFast(outcomes);
    for (const ms of recoveries) assert.ok(ms <= 5_000, `recovered after ${ms} ms`);
    const tail = outcomes.filter((o) => o.at >= outcomes.at(-1)!.at - 1_500);
    assert.deepEqual(new Set(tail.map((o) => o.status)), new Set([200]), 'the last 1.5 s of load all 200');
  });

  it('Redis black-holed for 2 s: every request still answered, counted in the store, and the count exact afterwards', async (t) => {
    if (skip) return t.skip(skip);
    const key = await newKey();
    const load = await driveBoth(key, 7_000, {
      cut: { at: 1_500, run: () => proxies!.redis.cut('blackhole') },
      restore: { at: 3_500, run: () => proxies!.redis.restore() },
    });
    const { outcomes } = load;
    const acknowledged = outcomes.filter(isCounted).length;
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    // Counts reach the store once a second, so this is what the store may not have seen at the cut.
    const lastSecond = outcomes.filter((o) => isCounted(o) && o.at < load.events.cut! && o.at >= load.events.cut! - 1_000).length;
    // Back, the instances move what PostgreSQL counted meanwhile into Redis.
    await waitFor(async () => (await redisCount(key)) === acknowledged, 5_000, 'Redis to hold every acknowledged request').catch(() => undefined);
    // The probe first, so both counts below include it.
    const served = await servedUsed(instances[0]!, key);
    // PostgreSQL receives the counts once a second.
    await waitFor(async () => (await redisCount(key)) === acknowledged + 1 && (await storedUsed(key)) >= acknowledged, 5_000, 'both stores to hold the probe').catch(() => undefined);
    const [stored, live] = [await storedUsed(key), await redisCount(key)];
    console.log(
      `faults redis: ${outcomes.length} requests at ${PER_SECOND}/s, Redis black-holed for ${((load.events.restore! - load.events.cut!) / 1000).toFixed(1)} s -> ` +
        `${tally(outcomes)}, slowest answer ${Math.round(slowest)} ms; acknowledged ${acknowledged}, counted: Redis ${live}, PostgreSQL ${stored}, service says ${served} ` +
        `(${acknowledged - served} not counted; ${lastSecond} were answered in the second before the cut)`,
    );
    assertNoCrash();
    checkFailFast(outcomes);
    assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set([200]), 'Redis down is no reason to refuse a request');
    assert.equal(served, acknowledged, 'the service counts exactly the requests it answered');
    assert.equal(live, acknowledged + 1, 'Redis, after the probe');
    assert.ok(stored >= acknowledged && stored <= acknowledged + 1, `PostgreSQL holds ${stored}`);
  });

  it('Redis stalled for 2.5 s (connections open, nothing answered): answers within the command timeout, no crash, exact count', async (t) => {
    if (skip) return t.skip(skip);
    const key = await newKey();
    // Longer than two command timeouts: a request's command times out, then so does whatever the
    // instance sends Redis next.
    const load = await driveBoth(key, 7_000, {
      stall: { at: 1_500, run: async () => proxies!.redis.stall() },
      restore: { at: 4_000, run: () => proxies!.redis.restore() },
    });
    const { outcomes } = load;
    const acknowledged = outcomes.filter(isCounted).length;
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    const exits = instances.filter((instance) => !isRunning(instance));
    await sleep(1_500);
    const [stored, live] = [await storedUsed(key), await redisCount(key)];
    const survivor = instances.find(isRunning);
    const served = survivor ? await servedUsed(survivor, key) : NaN;
    console.log(
      `faults redis stall: ${outcomes.length} requests at ${PER_SECOND}/s, Redis stalled for ${((load.events.restore! - load.events.stall!) / 1000).toFixed(1)} s -> ` +
        `${tally(outcomes)}, slowest answer ${Math.round(slowest)} ms; instances that died: ${exits.length > 0 ? exits.map((i) => i.name).join(', ') : 'none'}; ` +
        `acknowledged ${acknowledged}, counted: Redis ${live}, PostgreSQL ${stored}, service says ${served}`,
    );
    for (const instance of exits) console.log(`faults redis stall: ${instance.name} died with:\n${lastWords(instance)}`);
    assertNoCrash();
    checkFailFast(outcomes);
    assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set([200]));
    assert.equal(served, acknowledged, 'the service counts exactly the requests it answered');
  });

  it('an instance killed mid-load and started again: the other keeps serving, and no acknowledged request goes uncounted', async (t) => {
    if (skip) return t.skip(skip);
    const key = await newKey();
    const victim = instances[0]!;
    let restartedMs = NaN;
    const load = await driveBoth(key, 6_000, {
      kill: {
        at: 2_000,
        run: async () => {
          const killedAt = performance.now();
          await killInstance(victim);
          instances[0] = await startInstance(victim.name, setup, victim.port);
          restartedMs = performance.now() - killedAt;
        },
      },
    });
    const { outcomes } = load;
    const killAt = load.events.kill!;
    const readyAt = killAt + restartedMs;
    const other = outcomes.filter((o) => o.instance !== victim.name);
    const onVictim = outcomes.filter((o) => o.instance === victim.name);
    const acknowledged = outcomes.filter(isCounted).length;
    const unanswered = outcomes.filter((o) => o.status === 'error');
    const beforeKill = outcomes.filter((o) => o.at + o.ms < killAt && isCounted(o)).length;
    await sleep(1_500);
    const [stored, live] = [await storedUsed(key), await redisCount(key)];
    const served = await servedUsed(instances[1]!, key);
    console.log(
      `faults restart: ${outcomes.length} requests at ${PER_SECOND}/s; ${victim.name} SIGKILLed at ${Math.round(killAt)} ms and ready again ${Math.round(restartedMs)} ms later; ` +
        `${instances[1]!.name}: ${tally(other)}; ${victim.name}: ${tally(onVictim)}. ` +
        `Acknowledged ${acknowledged} (${beforeKill} before the kill), counted ${served} (Redis ${live}, PostgreSQL ${stored}): ` +
        `${acknowledged - Math.min(served, acknowledged)} acknowledged requests lost, ${Math.max(0, served - acknowledged)} counted without an answer reaching the client`,
    );
    assertNoCrash();
    assert.deepEqual(new Set(other.map((o) => o.status)), new Set([200]), `${instances[1]!.name} kept serving`);
    const victimAfterRestart = onVictim.filter((o) => o.at > readyAt);
    assert.ok(victimAfterRestart.length > 0);
    assert.deepEqual(new Set(victimAfterRestart.map((o) => o.status)), new Set([200]), `${victim.name} serves again once restarted`);
    const victimBefore = onVictim.filter((o) => o.at + o.ms < killAt);
    assert.deepEqual(new Set(victimBefore.map((o) => o.status)), new Set([200]));
    // Redis counts before answering, so a kill loses no acknowledged request; at most the answers
    // in flight at the kill were counted without reaching their client.
    assert.ok(served >= acknowledged, `acknowledged ${acknowledged} but counted ${served}`);
    assert.ok(served <= acknowledged + unanswered.length, `counted ${served} for ${acknowledged} answered and ${unanswered.length} unanswered`);
  });

  it('no instance crashed along the way', (t) => {
    if (skip) return t.skip(skip);
    assert.deepEqual(crashed, []);
  });
});
