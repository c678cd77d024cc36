/**
 * Faults under steady load, with figures: requests served, errors by status, recovery time.
 *
 * 1. Upstreams (one instance on SQLite, refreshing every second from local stand-ins of ECB and
 *    Frankfurter): each upstream refused, then slower than the upstream timeout, then serving
 *    garbage (truncated, non-numeric, partial), then healthy again. Requests must keep being
 *    answered 200 from the stored rates, marked stale while the provider's refresh fails, and
 *    fresh again after the first good refresh.
 * 2. PostgreSQL and Redis (two instances, each engine behind a loopback TCP proxy, so the shared
 *    engines are never touched): each engine "stopped" (connections reset, new ones refused) for
 *    three seconds and "restarted". Answers must be 200 or a fast 503 problem with Retry-After,
 *    all 200 again soon after the engine is back, and each key's quota exact afterwards.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv, sharedHistoryVars } from '../support/env.js';
import { get } from '../support/http.js';
import { drive, type Outcome } from '../support/load.js';
import { createKey, ensureBuilt, isRunning, keyPrefix, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { proxyEngines, type EngineProxies } from '../support/proxy.js';
import { createPostgresSchema, deleteRedisKeys, missingEngines } from '../support/stores.js';
import { startFakeUpstreams, type FakeUpstreams, type UpstreamMode } from '../support/upstreams.js';
import { sleep } from '../support/wait.js';
import { bump, percentile, problemDefect, recordKeys, saveLog, tally, writeResult } from './harness.js';

const SUITE = 'faults';
const PER_SECOND = 100;
const rows: Array<[string, string | number]> = [];
const failures: string[] = [];
const started = performance.now();

type Classified = Outcome & { stale?: boolean; defect?: string };

/** An answer's stale flag, and what makes an error answer not a valid problem. */
function classify(o: Outcome): Classified {
  const reply = o.reply;
  if (!reply) return o;
  let stale: boolean | undefined;
  let defect: string | undefined;
  if (reply.status === 200 && reply.headers['content-type']?.startsWith('application/json')) stale = (JSON.parse(reply.body) as { stale?: boolean }).stale;
  if (reply.status >= 400) defect = problemDefect(reply.status, reply.headers['content-type'], reply.body, false);
  if (reply.status === 503 && !/^\d+$/.test(String(reply.headers['retry-after']))) defect = 'a 503 without Retry-After';
  return { ...o, stale, defect };
}

/** PER_SECOND requests a second over the targets and paths in turn, on kept-alive connections; each event at its time. */
async function driveClassified(
  targets: Array<{ name: string; base: string }>,
  paths: readonly string[],
  key: string,
  durationMs: number,
  events: Array<{ at: number; name: string; run: () => Promise<unknown> | unknown }>,
): Promise<{ outcomes: Classified[]; ran: Record<string, number> }> {
  const load = await drive({ targets, path: (i) => paths[i % paths.length]!, key, perSecond: PER_SECOND, durationMs, events: Object.fromEntries(events.map((e) => [e.name, e])), keepAlive: true });
  return { outcomes: load.outcomes.map(classify), ran: load.events };
}

function statuses(outcomes: readonly Classified[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) bump(counts, o.status === 200 && o.stale ? '200 stale' : String(o.status));
  return tally(counts);
}

/** Milliseconds from `since` until every answer to a request sent after it matches `good`. */
function recovery(outcomes: readonly Classified[], since: number, good: (o: Classified) => boolean): number {
  const window = outcomes.filter((o) => o.at >= since).sort((a, b) => a.at - b.at);
  const lastBad = window.map((o) => !good(o)).lastIndexOf(true);
  if (lastBad === -1) return 0;
  const next = window[lastBad + 1];
  return next ? next.at - since : Infinity;
}

function expect(ok: boolean, what: string): void {
  if (!ok) failures.push(what);
  assert.ok(ok, what);
}

describe('faults under load', () => {
  after(() => {
    writeResult({
      suite: SUITE,
      claim: `upstream outage, slowness and garbage; PostgreSQL and Redis stopped and restarted, at ${PER_SECOND} req/s: no request unanswered, no 5xx but fast 503 problems while an engine is away, recovery by itself`,
      passed: failures.length === 0,
      seconds: (performance.now() - started) / 1000,
      figures: rows,
      notes: failures,
    });
  });

  describe('upstreams: outage, slowness, garbage', () => {
    const dir = tempDir('exrates-faults-upstream-');
    let fake: FakeUpstreams;
    let server: Instance | undefined;
    let key: string;

    before(async () => {
      await ensureBuilt();
      fake = await startFakeUpstreams();
      const setup: ProcessSetup = {
        cwd: dir.path,
        env: processEnv({
          EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'upstreams.db')}`,
          ...fakeUpstreamVars(fake),
          EXRATES_REFRESH_SECONDS: '1',
          EXRATES_UPSTREAM_TIMEOUT_MS: '500',
        }),
      };
      key = await createKey(setup, 'pro');
      recordKeys(SUITE, [key]);
      server = await startInstance('upstreams', setup);
      // The exotic currency is backfilled before the load, so both providers have rates to serve.
      const first = await get(`${server.base}/api/v1/rate?from=EUR&to=NGN`, { headers: { 'X-Api-Key': key }, timeoutMs: 15_000 });
      assert.equal(first.status, 200, first.body);
    });

    after(async () => {
      if (server) {
        await stopInstance(server);
        saveLog(SUITE, 'upstreams', server);
      }
      await fake?.close();
      dir.remove();
    });

    it('keeps answering 200 from stored rates, stale while refreshes fail, fresh again after the first good one', async () => {
      const phase = 3_000;
      const modes: Array<{ name: string; ecb: UpstreamMode; frankfurter: UpstreamMode; delayMs?: number }> = [
        { name: 'healthy', ecb: 'ok', frankfurter: 'ok' },
        { name: 'both refused', ecb: 'refused', frankfurter: 'refused' },
        { name: 'both slower than the 500 ms timeout', ecb: 'ok', frankfurter: 'ok', delayMs: 2_000 },
        { name: 'ECB truncated, Frankfurter non-numeric', ecb: 'truncated', frankfurter: 'non-numeric' },
        { name: 'ECB partial, Frankfurter HTTP 500', ecb: 'partial', frankfurter: 'http500' },
        { name: 'healthy again', ecb: 'ok', frankfurter: 'ok' },
      ];
      const events = modes.map((mode, index) => ({
        at: index * phase,
        name: mode.name,
        run: async () => {
          fake.ecb.delayMs = mode.delayMs ?? 0;
          fake.frankfurter.delayMs = mode.delayMs ?? 0;
          await fake.ecb.setMode(mode.ecb);
          await fake.frankfurter.setMode(mode.frankfurter);
        },
      }));
      const paths = ['/api/v1/rate?from=EUR&to=USD', '/api/v1/rate?from=EUR&to=NGN', '/api/v1/convert?from=NGN&to=JPY&amount=1000', '/api/v1/history?from=USD&to=CHF&range=1m'];
      const { outcomes, ran } = await driveClassified([{ name: 'A', base: server!.base }], paths, key, modes.length * phase, events);
      for (const [index, mode] of modes.entries()) {
        const from = ran[mode.name]!;
        const to = index + 1 < modes.length ? ran[modes[index + 1]!.name]! : Infinity;
        const during = outcomes.filter((o) => o.at >= from && o.at < to);
        rows.push([`upstreams: ${mode.name} (${Math.round((Math.min(to, from + phase) - from) / 1000)} s)`, `${during.length} requests: ${statuses(during)}; p99 ${Math.round(percentile(during.map((o) => o.ms).sort((a, b) => a - b), 99))} ms`]);
      }
      const healthyAgain = ran['healthy again']!;
      // History answers carry no stale flag: rate and convert tell.
      const freshAfter = recovery(outcomes, healthyAgain, (o) => o.status === 200 && o.stale !== true);
      const staleServed = outcomes.filter((o) => o.stale === true).length;
      const bad = outcomes.filter((o) => o.status !== 200);
      rows.push(['upstreams: recovery', `${outcomes.length} requests, ${bad.length} not 200, ${staleServed} served stale; fresh again ${Math.round(freshAfter)} ms after both upstreams were healthy`]);
      expect(bad.length === 0, `upstream faults: every request answered 200 from stored rates (${statuses(bad)})`);
      expect(staleServed > 0, 'failed refreshes mark the stored rates stale');
      expect(freshAfter <= 3_000, `fresh again within 3 s of the upstreams healing (${Math.round(freshAfter)} ms)`);
      expect(isRunning(server!), 'the server is still running');
    });
  });

  describe('PostgreSQL and Redis stopped and restarted, two instances', () => {
    const dir = tempDir('exrates-faults-engines-');
    const prefix = `exrates-reliability-${randomBytes(4).toString('hex')}:`;
    let skip = '';
    let schema: { url: string; drop(): Promise<void> } | undefined;
    let proxies: EngineProxies | undefined;
    const instances: Instance[] = [];
    let key: string;
    let db: pg.Client | undefined;

    before(async () => {
      skip = await missingEngines();
      if (skip) return;
      await ensureBuilt();
      schema = await createPostgresSchema();
      proxies = await proxyEngines(schema.url);
      const vars = { ...sharedHistoryVars(), EXRATES_REDIS_PREFIX: prefix };
      const direct: ProcessSetup = { cwd: dir.path, env: processEnv({ ...vars, ...proxies.direct }) };
      const proxied: ProcessSetup = { cwd: dir.path, env: processEnv({ ...vars, ...proxies.proxied }) };
      key = await createKey(direct, 'pro');
      recordKeys(SUITE, [key]);
      instances.push(await startInstance('A', proxied), await startInstance('B', proxied));
      db = new pg.Client({ connectionString: schema.url });
      await db.connect();
    });

    after(async () => {
      for (const instance of instances) {
        await stopInstance(instance);
        saveLog(SUITE, `engines-${instance.name}`, instance);
      }
      await proxies?.close();
      await db?.end().catch(() => undefined);
      if (!skip) await deleteRedisKeys(`${prefix}*`);
      await schema?.drop();
      dir.remove();
    });

    it('answers 200 or a fast 503 problem while an engine is away, all 200 again soon after, quotas exact', async (t) => {
      if (skip) return t.skip(skip);
      const events = [
        { at: 2_000, name: 'postgres stopped', run: () => proxies!.postgres.cut('refuse') },
        { at: 5_000, name: 'postgres restarted', run: () => proxies!.postgres.restore() },
        { at: 8_000, name: 'redis stopped', run: () => proxies!.redis.cut('refuse') },
        { at: 11_000, name: 'redis restarted', run: () => proxies!.redis.restore() },
      ];
      const paths = ['/api/v1/rate?from=EUR&to=USD', '/api/v1/convert?from=GBP&to=JPY&amount=10', '/api/v1/history?from=USD&to=CHF&range=1m'];
      const { outcomes, ran } = await driveClassified(instances.map((i) => ({ name: i.name, base: i.base })), paths, key, 15_000, events);
      const between = (a: number, b: number) => outcomes.filter((o) => o.at >= a && o.at < b);
      const pgDown = between(ran['postgres stopped']!, ran['postgres restarted']!);
      const redisDown = between(ran['redis stopped']!, ran['redis restarted']!);
      const pgRecovery = recovery(between(ran['postgres restarted']!, ran['redis stopped']!), ran['postgres restarted']!, (o) => o.status === 200);
      const redisRecovery = recovery(outcomes, ran['redis restarted']!, (o) => o.status === 200);
      const unanswered = outcomes.filter((o) => o.status === 'error');
      const wrong = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
      const defects = outcomes.filter((o) => o.defect).map((o) => `${o.status}: ${o.defect}`);
      const slowest = Math.max(...outcomes.map((o) => o.ms));
      // Quota: what the service says after the faults against the answers it gave (every 200 and 503 problem counts).
      await sleep(1_500);
      const probe = await get(`${instances[0]!.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key } });
      const servedUsed = 100_000 - Number(probe.headers['x-ratelimit-remaining']) - 1;
      const counted = outcomes.filter((o) => o.status === 200).length;
      const counted503 = outcomes.filter((o) => o.status === 503).length;
      await sleep(1_500);
      const stored = await db!.query<{ used: string | number }>('select q.used from quota_usage q join api_keys k on k.id = q.key_id where k.prefix = $1', [keyPrefix(key)]);
      rows.push(['engines: load', `${outcomes.length} requests at ${PER_SECOND}/s over 2 instances: ${statuses(outcomes)}; slowest answer ${Math.round(slowest)} ms`]);
      rows.push(['engines: PostgreSQL stopped 3 s', `${pgDown.length} requests: ${statuses(pgDown)}; all 200 again ${Math.round(pgRecovery)} ms after it was back`]);
      rows.push(['engines: Redis stopped 3 s', `${redisDown.length} requests: ${statuses(redisDown)}; all 200 again ${Math.round(redisRecovery)} ms after it was back`]);
      rows.push(['engines: quota after the faults', `answered 200: ${counted}, 503: ${counted503}; the service counts ${servedUsed}, PostgreSQL holds ${stored.rows[0]?.used ?? 0} (with the probe)`]);
      expect(unanswered.length === 0, `every request answered (${unanswered.length} not)`);
      expect(wrong.length === 0, `only 200 or 503 (${statuses(wrong)})`);
      expect(defects.length === 0, `every 503 a problem with Retry-After: ${defects.slice(0, 3).join('; ')}`);
      expect(slowest <= 3_000, `every answer within 3 s (slowest ${Math.round(slowest)} ms)`);
      expect(pgRecovery <= 5_000 && redisRecovery <= 5_000, `recovered within 5 s (PostgreSQL ${Math.round(pgRecovery)} ms, Redis ${Math.round(redisRecovery)} ms)`);
      expect(servedUsed >= counted && servedUsed <= counted + counted503, `the quota counts every 200 (${counted}) and at most the 503s too (${counted503}): ${servedUsed}`);
      expect(instances.every(isRunning), 'both instances still running');
    });
  });
});
