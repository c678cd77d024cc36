/**
 * Two real `exrates serve` processes on one PostgreSQL schema and one Redis, with load spread
 * over both: quota counts exact across them, one refresh per interval and one backfill per
 * currency across them, and a revocation seen by both. The upstreams are the local fakes, so
 * every upstream call is counted. Figures go to stdout for the CI log.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv } from '../support/env.js';
import { get, type Reply } from '../support/http.js';
import { createKey, ensureBuilt, keyPrefix, revokeKey, startInstances, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { createPostgresSchema, deleteRedisKeys, missingEngines, REDIS_URL } from '../support/stores.js';
import { FRANKFURTER_LATEST, frankfurterRate, startFakeUpstreams, TODAY, type FakeUpstreams } from '../support/upstreams.js';
import { sleep, waitFor } from '../support/wait.js';
import { callsPerTick, pool } from './load.js';

const REFRESH_SECONDS = 2;
const INTERVAL_MS = REFRESH_SECONDS * 1000;
const DAILY = '/ecb/eurofxref-daily.xml';
const RATES = '/frankfurter/v2/rates';
/** The reset after the fakes' day, as /usage writes it. */
const TODAY_RESET = new Date(Date.parse(`${TODAY}T00:00:00Z`) + 86_400_000).toISOString().replace('.000Z', 'Z');

describe('two instances on one PostgreSQL and one Redis', () => {
  let skip = '';
  let fake: FakeUpstreams | undefined;
  let schema: { url: string; drop(): Promise<void> } | undefined;
  let db: pg.Client | undefined;
  const dir = tempDir('exrates-scale-');
  const instances: Instance[] = [];
  let setup: ProcessSetup;
  const agents = new Map<Instance, http.Agent>();
  const keys: Record<'counted' | 'exhausted' | 'pro' | 'revoked' | 'usage', string> = { counted: '', exhausted: '', pro: '', revoked: '', usage: '' };

  function call(instance: Instance, path: string, key: string): Promise<Reply> {
    return get(`${instance.base}${path}`, { headers: { 'X-Api-Key': key }, agent: agents.get(instance)!, timeoutMs: 15_000 });
  }

  async function keyId(key: string): Promise<string> {
    const { rows } = await db!.query<{ id: string }>('select id from api_keys where prefix = $1', [keyPrefix(key)]);
    assert.equal(rows.length, 1);
    return rows[0]!.id;
  }

  async function storedUsed(key: string): Promise<number | undefined> {
    const { rows } = await db!.query<{ used: number | string }>('select used from quota_usage where key_id = $1 and day = $2', [await keyId(key), TODAY]);
    return rows[0] === undefined ? undefined : Number(rows[0].used);
  }

  before(async () => {
    skip = await missingEngines();
    if (skip) return;
    await ensureBuilt();
    // Refresh locks are named by provider and tick, not by installation: a lock left by an earlier
    // run on this Redis would make these instances skip a refresh.
    await deleteRedisKeys('exrates:lock:refresh:ecb:*');
    await deleteRedisKeys('exrates:lock:refresh:frankfurter:*');
    await deleteRedisKeys('exrates:lock:backfill:NGN');
    fake = await startFakeUpstreams();
    schema = await createPostgresSchema();
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    setup = {
      cwd: dir.path,
      env: processEnv({
        EXRATES_DATABASE_URL: schema.url,
        EXRATES_REDIS_URL: REDIS_URL,
        ...fakeUpstreamVars(fake),
        EXRATES_REFRESH_SECONDS: String(REFRESH_SECONDS),
      }),
    };
    // Started together, as a deployment would: both migrate the empty schema and race for the first load.
    await startInstances(['A', 'B'], setup, instances);
    for (const instance of instances) agents.set(instance, new http.Agent({ keepAlive: true, maxSockets: 64 }));
    [keys.counted, keys.exhausted, keys.pro, keys.revoked, keys.usage] = await Promise.all([
      createKey(setup, 'free'),
      createKey(setup, 'free'),
      createKey(setup, 'free'),
      createKey(setup, 'pro'),
      createKey(setup, 'free'),
    ]);
  });

  after(async () => {
    for (const agent of agents.values()) agent.destroy();
    const ids: string[] = [];
    if (db && !skip) {
      for (const key of Object.values(keys)) if (key) ids.push(await keyId(key).catch(() => ''));
    }
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await db?.end().catch(() => undefined);
    await schema?.drop();
    await fake?.close();
    for (const id of ids) if (id) await deleteRedisKeys(`exrates:quota:${id}:*`);
    dir.remove();
  });

  it('a free key used on both instances at once: 400 requests, remaining counts 999 down to 600, each once', async (t) => {
    if (skip) return t.skip(skip);
    const replies = await Promise.all(
      Array.from({ length: 400 }, (_, i) => call(instances[i % 2]!, `/api/v1/rate?from=USD&to=${i % 3 ? 'JPY' : 'GBP'}`, keys.counted)),
    );
    assert.deepEqual(replies.map((r) => r.status).filter((s) => s !== 200), []);
    assert.deepEqual(new Set(replies.map((r) => r.headers['x-ratelimit-limit'])), new Set(['1000']));
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => b - a);
    assert.deepEqual(remaining, Array.from({ length: 400 }, (_, i) => 999 - i));
    const started = performance.now();
    let stored: number | undefined;
    while (performance.now() - started < 2_000 && (stored = await storedUsed(keys.counted)) !== 400) await sleep(50);
    assert.equal(stored, 400, 'the count reaches PostgreSQL');
    console.log(
      `scale quota: 400 concurrent requests, 200 per instance -> 400 x 200, X-RateLimit-Remaining 999..600 with no duplicate; ` +
        `PostgreSQL row says 400 after ${Math.round(performance.now() - started)} ms`,
    );
  });

  it('usage read on either instance is exact while both count, and reading it counts nothing', async (t) => {
    if (skip) return t.skip(skip);
    const usage = async (instance: Instance) => {
      const reply = await call(instance, '/api/v1/usage', keys.usage);
      assert.equal(reply.status, 200, reply.body);
      assert.equal(reply.headers['cache-control'], 'no-store');
      const body = JSON.parse(reply.body) as { used: number; remaining: number; limit: number };
      assert.equal(reply.headers['x-ratelimit-remaining'], String(body.remaining));
      return body;
    };
    for (const round of [1, 2, 3]) {
      const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => call(instances[i % 2]!, '/api/v1/rate?from=EUR&to=USD', keys.usage)));
      assert.deepEqual(replies.map((r) => r.status).filter((s) => s !== 200), []);
      // Read several times on each instance: every reading says the same, so none counted.
      for (const instance of [instances[0]!, instances[1]!, instances[0]!, instances[1]!]) {
        assert.deepEqual(await usage(instance), { tier: 'free', limit: 1000, used: 50 * round, remaining: 1000 - 50 * round, resetsAt: TODAY_RESET });
      }
    }
  });

  it('a free key exhausted over both instances: 1,100 requests are exactly 1,000 answered and 100 refused', async (t) => {
    if (skip) return t.skip(skip);
    const replies = await pool(Array.from({ length: 1100 }, (_, i) => i), 200, (i) => call(instances[i % 2]!, '/api/v1/rate?from=EUR&to=CHF', keys.exhausted));
    const byStatus = new Map<number, number>();
    for (const reply of replies) byStatus.set(reply.status, (byStatus.get(reply.status) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(byStatus), { 200: 1000, 429: 100 });
    const remaining = replies
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']))
      .sort((a, b) => b - a);
    assert.deepEqual(remaining, Array.from({ length: 1000 }, (_, i) => 999 - i));
    for (const refused of replies.filter((r) => r.status === 429)) {
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(JSON.parse(refused.body).code, 'quota_exceeded');
    }
    const perInstance = [0, 1].map((n) => replies.filter((r, i) => i % 2 === n && r.status === 200).length);
    // Each instance writes its counts to PostgreSQL once a second.
    let stored: number | undefined;
    await waitFor(async () => (stored = await storedUsed(keys.exhausted)) === 1000, 1_500, 'PostgreSQL to hold the count').catch(() => undefined);
    assert.equal(stored, 1000, 'PostgreSQL holds the exact count within 1.5 s');
    console.log(
      `scale quota: 1100 requests over 2 instances -> 1000 x 200 (A ${perInstance[0]}, B ${perInstance[1]}), 100 x 429; PostgreSQL quota_usage.used = ${stored}`,
    );
  });

  it('scheduled refreshes: one ECB fetch per 2-second tick across both instances, not one per instance', async (t) => {
    if (skip) return t.skip(skip);
    const ticks = 3;
    const { perTick, windowStart, windowEnd } = await callsPerTick(() => fake!.calls(DAILY), INTERVAL_MS, ticks);
    const total = perTick.reduce((a, b) => a + b, 0);
    const byInstance = instances.map(
      (instance) =>
        instance.logged('refresh done').filter((line) => line.provider === 'ecb' && Date.parse(String(line.time)) >= windowStart && Date.parse(String(line.time)) < windowEnd)
          .length,
    );
    // Not asserted: the start-up load is locked per tick too, and a load longer than the 2 s tick
    // (or two starts in different ticks) lets both instances load.
    const startupLoads = instances.map((instance) => instance.logged('loading history').filter((line) => line.provider === 'ecb').length);
    console.log(
      `scale refresh: ${((windowEnd - windowStart) / 1000).toFixed(1)} s window, ${ticks} ticks of ${REFRESH_SECONDS} s, 2 instances -> ` +
        `${total} ECB latest fetches (per tick ${JSON.stringify(perTick)}; done by A ${byInstance[0]}, B ${byInstance[1]}); ` +
        `history loaded at start-up by A ${startupLoads[0]}, B ${startupLoads[1]} time(s), ${fake!.calls('/ecb/eurofxref-hist.zip')} history download(s)`,
    );
    assert.deepEqual(perTick, Array<number>(ticks).fill(1));
    assert.equal(byInstance[0]! + byInstance[1]!, ticks);
  });

  it('a currency nobody stores yet, asked for 20 times at once on both instances: one backfill upstream', async (t) => {
    if (skip) return t.skip(skip);
    const seriesCalls = () => fake!.requests.filter((url) => url.pathname === RATES && url.searchParams.has('from')).length;
    const before = { series: seriesCalls(), currencies: fake!.calls('/frankfurter/v2/currencies') };
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(instances[i % 2]!, '/api/v1/rate?from=EUR&to=NGN', keys.pro)));
    assert.deepEqual(
      replies.map((r) => r.status),
      Array<number>(20).fill(200),
      replies.find((r) => r.status !== 200)?.body,
    );
    const answers = replies.map((r, i) => `${instances[i % 2]!.name} ${r.body}`);
    assert.deepEqual(
      new Set(replies.map((r) => JSON.parse(r.body).rate as string)),
      new Set([frankfurterRate('NGN', FRANKFURTER_LATEST)]),
      `every instance answers Frankfurter's ${FRANKFURTER_LATEST} rate; got:\n${answers.join('\n')}`,
    );
    const series = seriesCalls() - before.series;
    const currencies = fake!.calls('/frankfurter/v2/currencies') - before.currencies;
    const backfilled = instances.map((instance) => instance.logged('backfill stored').length);
    console.log(
      `scale backfill: 20 concurrent first requests for EUR/NGN, 10 per instance -> 20 x 200, ` +
        `${series} Frankfurter series call(s), ${currencies} currency-list call(s); stored by A ${backfilled[0]}, B ${backfilled[1]}`,
    );
    assert.equal(series, 1);
    assert.equal(backfilled[0]! + backfilled[1]!, 1);
  });

  it('a key revoked with the CLI is refused by both instances within a second', async (t) => {
    if (skip) return t.skip(skip);
    for (const instance of instances) assert.equal((await call(instance, '/api/v1/rate?from=EUR&to=USD', keys.revoked)).status, 200);
    assert.match(await revokeKey(setup, keys.revoked), /^revoked exr_/);
    const revokedAt = performance.now();
    const refusedAfter = await Promise.all(
      instances.map(async (instance) => {
        for (;;) {
          const reply = await call(instance, '/api/v1/rate?from=EUR&to=USD', keys.revoked);
          const ms = performance.now() - revokedAt;
          if (reply.status === 401) {
            assert.equal(reply.headers['content-type'], 'application/problem+json; charset=utf-8');
            return ms;
          }
          assert.equal(reply.status, 200);
          if (ms > 1_000) return Infinity;
          await sleep(20);
        }
      }),
    );
    console.log(`scale revocation: refused with 401 by A after ${Math.round(refusedAfter[0]!)} ms, by B after ${Math.round(refusedAfter[1]!)} ms`);
    for (const ms of refusedAfter) assert.ok(ms <= 1_000, `refused after ${ms} ms`);
  });

  it('neither instance logged an error', (t) => {
    if (skip) return t.skip(skip);
    for (const instance of instances) {
      const errors = instance.output
        .join('')
        .split('\n')
        .filter((line) => /^\{.*"level":(50|60)[,}]/.test(line));
      assert.deepEqual(errors, [], `${instance.name} logged errors`);
    }
  });
});
