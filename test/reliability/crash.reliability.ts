/**
 * Crash safety: `kill -9` of a real `exrates serve` process on SQLite, on local stand-ins of ECB
 * and Frankfurter, first during its initial five-year load, then three times under sustained load
 * from many keys while first requests for exotic currencies backfill five-year series (rate
 * writes in flight), then once under heavy load (thousands of requests a second over a thousand
 * keys from keep-alive connections). After each kill, before the restart, the store is opened by
 * this test:
 *  - `PRAGMA integrity_check` is ok;
 *  - no stored rate is lost or half-written: the ECB rows are exactly those of a complete load,
 *    and each backfilled currency holds its whole series or nothing;
 *  - quota counts: what the store holds for each key (its stored count, or the highest count its
 *    journal holds, which the next start folds in) against what was acknowledged (answered with
 *    X-RateLimit headers, not 429): the requests lost over all keys are at most 1 % of those
 *    acknowledged, or 50, whichever is larger (the bound of the journal's 10 ms interval);
 *    and no key holds more than was acknowledged plus the requests left unanswered.
 * Then the server starts again on the same file, folds the journal in and serves the same counts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { issueApiKey } from '../../src/core/api-keys.js';
import { createClock } from '../../src/deps.js';
import { migrateToLatest, openDatabase } from '../../src/storage/database.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { createFileJournal } from '../../src/storage/quota-journal.js';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv } from '../support/env.js';
import { get } from '../support/http.js';
import { ensureBuilt, isRunning, spawnServe, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { FEEDS_NOW, startFakeUpstreams, TODAY, type FakeUpstreams } from '../support/upstreams.js';
import { sleep } from '../support/wait.js';
import { bump, recordKeys, saveLog, tableDigest, tally, writeResult } from './harness.js';

const SUITE = 'crash';
const KEYS = 40;
const PER_SECOND = 200;
/** The heavy phase: keys, and connections each sending its next request as soon as the last is answered. */
const HEAVY_KEYS = 1_000;
const HEAVY_CONNECTIONS = 48;
const EXOTIC = ['NGN', 'KES', 'GHS'] as const;

/** The requests a kill may forgive over all keys: 1 % of those acknowledged, or 50, whichever is larger. */
const lossBound = (acknowledged: number) => Math.max(Math.floor(acknowledged / 100), 50);

interface Outcome {
  key: number;
  sentAt: number;
  doneAt: number;
  status: number | 'error';
  counted: boolean;
}

async function storeState(file: string) {
  const journal = (await createFileJournal(file).leftover()).counts;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (db.prepare('pragma integrity_check').all() as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join(',');
    const perQuote = new Map(
      (db.prepare("select quote, count(*) as n from rates where provider = 'frankfurter' group by quote").all() as Array<{ quote: string; n: number }>).map((r) => [r.quote, r.n]),
    );
    const ecbRows = (db.prepare("select count(*) as n from rates where provider = 'ecb'").get() as { n: number }).n;
    const ecb = db.prepare("select quote, day, rate, as_of from rates where provider = 'ecb' order by day, quote").all() as Array<{ quote: string; day: string; rate: string; as_of: string }>;
    const ecbRates = new Map(ecb.map((r) => [`${r.day} ${r.quote}`, `${r.rate} ${r.as_of}`]));
    const folded = new Map(
      (db.prepare('select key_id, used from quota_usage where day = ?').all(TODAY) as Array<{ key_id: string; used: number }>).map((r) => [r.key_id, Number(r.used)]),
    );
    // What the next start folds in: for each key, the highest of its stored count and the counts its journal holds.
    const used = new Map(folded);
    for (const { keyId, day, used: count } of journal) if (day === TODAY && count > (used.get(keyId) ?? 0)) used.set(keyId, count);
    return { integrity, perQuote, ecbRows, ecbRates, used, folded, journalCounts: journal.length };
  } finally {
    db.close();
  }
}

/** Acknowledged, lost and over-counted requests of one kill, over the keys `keyIds` (index → id). */
function quotaAfterKill(
  outcomes: readonly Outcome[],
  keyIds: readonly string[],
  atStart: Map<string, number>,
  afterKill: Map<string, number>,
): { acknowledged: number; lost: number; lostMax: number; overCounted: number; unanswered: number } {
  // Every answer received was sent before the kill, also those read after the test sent it.
  const acknowledged = new Map<number, number>();
  for (const o of outcomes) if (o.counted) bump(acknowledged, o.key);
  const unanswered = outcomes.filter((o) => o.status === 'error').length;
  let lost = 0;
  let lostMax = 0;
  let overCounted = 0;
  for (const [index, id] of keyIds.entries()) {
    const acked = acknowledged.get(index) ?? 0;
    const stored = (afterKill.get(id) ?? 0) - (atStart.get(id) ?? 0);
    lost += Math.max(0, acked - stored);
    lostMax = Math.max(lostMax, acked - stored);
    if (stored > acked + unanswered) overCounted += 1;
  }
  return { acknowledged: [...acknowledged.values()].reduce((a, b) => a + b, 0), lost, lostMax, overCounted, unanswered };
}

describe('crash safety: kill -9 during load, then restart', () => {
  const dir = tempDir('exrates-crash-');
  const file = join(dir.path, 'crash.db');
  let fake: FakeUpstreams;
  let setup: ProcessSetup;
  let server: Instance | undefined;
  const keys: Array<{ key: string; id: string }> = [];
  const rows: Array<[string, string | number]> = [];
  const failures: string[] = [];
  const started = performance.now();
  let logIndex = 0;

  const keep = (instance: Instance) => saveLog(SUITE, `server-${++logIndex}`, instance);

  before(async () => {
    await ensureBuilt();
    fake = await startFakeUpstreams();
    setup = {
      cwd: dir.path,
      env: processEnv({ EXRATES_DATABASE_URL: `sqlite:${file}`, ...fakeUpstreamVars(fake) }),
    };
    // Keys go straight into the store before the first start: forty CLI runs would take longer than the test.
    const database = await openDatabase(`sqlite:${file}`);
    try {
      await migrateToLatest(database.db);
      const store = createKeyStore(database.db);
      // One more key than the load uses (the probe after each restart), then the heavy phase's keys.
      for (let i = 0; i <= KEYS + HEAVY_KEYS; i += 1) {
        const issued = await issueApiKey(store, { tier: 'pro', owner: `crash${i}@example.org` }, createClock(new Date(FEEDS_NOW)));
        keys.push({ key: issued.key, id: issued.record.id });
      }
    } finally {
      await database.close();
    }
    recordKeys(SUITE, keys.map((k) => k.key));
  });

  after(async () => {
    if (server && isRunning(server)) {
      await stopInstance(server);
      keep(server);
    }
    await fake?.close();
    writeResult({
      suite: SUITE,
      claim: `kill -9 during the initial load, 3 times under load (${KEYS} keys, ${PER_SECOND} req/s, backfills writing) and once under heavy load (${HEAVY_KEYS} keys, ${HEAVY_CONNECTIONS} keep-alive connections): store opens cleanly, no rate lost or half-written, quota loss at most 1 % of the acknowledged requests or 50`,
      passed: failures.length === 0,
      seconds: (performance.now() - started) / 1000,
      figures: rows,
      notes: failures,
    });
    dir.remove();
  });

  function expect(ok: boolean, what: string): void {
    if (!ok) failures.push(what);
    assert.ok(ok, what);
  }

  it('a kill during the initial five-year load leaves a store that opens cleanly with all of it or none of it', async () => {
    // Spawned without waiting for readiness: killed while the history is being written.
    const { child, output, exit: exited } = spawnServe(setup, 0);
    // Wait for the load to start, then kill within its write.
    const deadline = Date.now() + 20_000;
    while (!output.join('').includes('loading history') && Date.now() < deadline) await sleep(5);
    await sleep(Math.floor(Math.random() * 150));
    child.kill('SIGKILL');
    await exited;
    saveLog(SUITE, 'initial-load', { output });
    const killedDuring = !output.join('').split('\n').some((line) => line.includes('"refresh done"') && line.includes('"provider":"ecb"'));
    const afterKill = await storeState(file);
    server = await startInstance('crash', setup);
    const complete = await storeState(file);
    const ecbDigest = tableDigest(file, 'rates');
    rows.push([
      'kill during the initial load',
      `killed ${killedDuring ? 'while the history was being written' : 'just after the load finished'}; store after the kill: integrity ${afterKill.integrity}, ${afterKill.ecbRows} ECB rows; after restart: ${complete.ecbRows} (${ecbDigest.digest})`,
    ]);
    expect(afterKill.integrity === 'ok', `integrity after the kill: ${afterKill.integrity}`);
    expect(afterKill.ecbRows === 0 || afterKill.ecbRows === complete.ecbRows, `the load is all or nothing: ${afterKill.ecbRows} of ${complete.ecbRows} rows`);
    expect(complete.ecbRows > 30_000, `the restarted server loads the history (${complete.ecbRows} rows)`);
  });

  it('kill -9 under load, three times: integrity, whole backfills, quota loss within the bound, counts served again after restart', async () => {
    const seriesLength = new Map<string, number>();
    for (const [cycle, exotic] of EXOTIC.entries()) {
      const instance = server!;
      const base = instance.base;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
      // Every ECB rate stored when the load starts; a refresh may add days, none may go or change.
      const atStart = await storeState(file);
      const ecbBefore = atStart.ecbRates;
      const outcomes: Outcome[] = [];
      const inFlight: Array<Promise<void>> = [];
      const t0 = performance.now();
      const killAt = 1_200 + Math.floor(Math.random() * 1_800);
      let killedAt = Infinity;
      for (let i = 0; ; i += 1) {
        const now = performance.now() - t0;
        if (now >= killAt) {
          instance.child.kill('SIGKILL');
          killedAt = performance.now() - t0;
          break;
        }
        await sleep(Math.max(0, (i * 1000) / PER_SECOND - now));
        const keyIndex = i % KEYS;
        // Every tenth request is the first requests for this cycle's exotic currency: a backfill writes its series.
        const path =
          i % 10 === 3
            ? `/api/v1/rate?from=EUR&to=${exotic}`
            : ['/api/v1/rate?from=EUR&to=USD', '/api/v1/convert?from=GBP&to=JPY&amount=12.5', '/api/v1/history?from=USD&to=CHF&range=1m'][i % 3]!;
        const sentAt = performance.now() - t0;
        inFlight.push(
          get(`${base}${path}`, { headers: { 'X-Api-Key': keys[keyIndex]!.key }, agent, timeoutMs: 8_000 }).then(
            (reply) => {
              outcomes.push({ key: keyIndex, sentAt, doneAt: performance.now() - t0, status: reply.status, counted: reply.status !== 429 && reply.headers['x-ratelimit-remaining'] !== undefined });
            },
            () => {
              outcomes.push({ key: keyIndex, sentAt, doneAt: performance.now() - t0, status: 'error', counted: false });
            },
          ),
        );
      }
      await instance.exit;
      await Promise.all(inFlight);
      keep(instance);
      agent.destroy();

      // The store as the killed process left it.
      const state = await storeState(file);
      const quota = quotaAfterKill(outcomes, keys.slice(0, KEYS).map((k) => k.id), atStart.used, state.used);
      const ecbLost = [...ecbBefore].filter(([row, value]) => state.ecbRates.get(row) !== value).length;
      // Each backfilled currency holds its whole series or nothing.
      const partial: string[] = [];
      for (const [quote, n] of state.perQuote) {
        if (seriesLength.has(quote) && seriesLength.get(quote) !== n) partial.push(`${quote} ${n} of ${seriesLength.get(quote)}`);
      }

      // Restart on the same file; the counts served continue from the store's.
      const restartStarted = performance.now();
      server = await startInstance('crash', setup);
      const restartMs = performance.now() - restartStarted;
      const probeKey = keys[KEYS]!;
      const probe = await get(`${server.base}/api/v1/rate?from=EUR&to=${exotic}`, { headers: { 'X-Api-Key': probeKey.key }, timeoutMs: 10_000 });
      const afterRestart = await storeState(file);
      const storedBeforeProbe = state.used.get(probeKey.id) ?? 0;
      // The restart folded in the journal: every load key's stored count is what the kill left.
      const unfolded = keys.slice(0, KEYS).filter(({ id }) => (afterRestart.folded.get(id) ?? 0) !== (state.used.get(id) ?? 0)).length;
      const served = 100_000 - Number(probe.headers['x-ratelimit-remaining']) - 1;
      // What a complete backfill of this currency holds, for the next cycles' checks.
      for (const code of EXOTIC) if (afterRestart.perQuote.has(code) && !seriesLength.has(code)) seriesLength.set(code, afterRestart.perQuote.get(code)!);
      const partialNow = [...state.perQuote].filter(([quote, n]) => seriesLength.has(quote) && seriesLength.get(quote) !== n);

      const statuses = new Map<string, number>();
      for (const o of outcomes) bump(statuses, String(o.status));
      rows.push([
        `kill ${cycle + 1} (${exotic} backfill in flight)`,
        `SIGKILL at ${Math.round(killedAt)} ms into ${PER_SECOND} req/s: ${tally(statuses)}; integrity ${state.integrity}; ECB rows ${state.ecbRows} (${ecbBefore.size} at the start, ${ecbLost} of them lost or changed); ${exotic} rows after the kill: ${state.perQuote.get(exotic) ?? 0}, after restart ${afterRestart.perQuote.get(exotic) ?? 0}; ` +
          `acknowledged ${quota.acknowledged} over ${KEYS} keys, lost ${quota.lost} (bound ${lossBound(quota.acknowledged)}; at most ${quota.lostMax} on one key; ${state.journalCounts} journal counts left), over-counted ${quota.overCounted}; ` +
          `ready again in ${Math.round(restartMs)} ms, serving ${served} used for the probe key the store held at ${storedBeforeProbe}`,
      ]);
      expect(state.integrity === 'ok', `kill ${cycle + 1}: integrity ${state.integrity}`);
      expect(ecbLost === 0 && ecbBefore.size > 30_000, `kill ${cycle + 1}: ${ecbLost} of ${ecbBefore.size} ECB rates lost or changed`);
      expect(partial.length === 0 && partialNow.length === 0, `kill ${cycle + 1}: half-written series: ${[...partial, ...partialNow.map(([q, n]) => `${q} ${n}`)].join(', ')}`);
      expect(quota.lost <= lossBound(quota.acknowledged), `kill ${cycle + 1}: ${quota.lost} of ${quota.acknowledged} acknowledged requests lost, more than ${lossBound(quota.acknowledged)}`);
      expect(quota.overCounted === 0, `kill ${cycle + 1}: ${quota.overCounted} keys counted more than acknowledged plus unanswered`);
      expect(unfolded === 0, `kill ${cycle + 1}: ${unfolded} keys' journaled counts not folded in by the restart`);
      expect(served === storedBeforeProbe, `kill ${cycle + 1}: after restart the service counts from the store (${served} vs ${storedBeforeProbe})`);
      expect(probe.status === 200, `kill ${cycle + 1}: ${exotic} served after restart (${probe.status})`);
    }
    const lastSeries = [...seriesLength].map(([code, n]) => `${code} ${n}`).join(', ');
    rows.push(['backfilled series (whole)', lastSeries]);
    expect(seriesLength.size === EXOTIC.length, `every exotic currency backfilled in the end: ${lastSeries}`);
  });

  it('kill -9 under heavy load over a thousand keys: quota loss within the bound, counts served again after restart', async () => {
    const instance = server!;
    const heavyKeys = keys.slice(KEYS + 1);
    const agent = new http.Agent({ keepAlive: true, maxSockets: HEAVY_CONNECTIONS });
    const atStart = await storeState(file);
    const outcomes: Outcome[] = [];
    const t0 = performance.now();
    // The first second or so finds every key and loads its counter; the kill comes after it.
    const killAt = 2_500 + Math.floor(Math.random() * 1_000);
    let killedAt = Infinity;
    let next = 0;
    // Each connection sends its next request when the last is answered: as fast as the server answers.
    const connection = async () => {
      while (killedAt === Infinity) {
        const keyIndex = next++ % heavyKeys.length;
        const sentAt = performance.now() - t0;
        try {
          const reply = await get(`${instance.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': heavyKeys[keyIndex]!.key }, agent, timeoutMs: 8_000 });
          outcomes.push({ key: keyIndex, sentAt, doneAt: performance.now() - t0, status: reply.status, counted: reply.status !== 429 && reply.headers['x-ratelimit-remaining'] !== undefined });
        } catch {
          outcomes.push({ key: keyIndex, sentAt, doneAt: performance.now() - t0, status: 'error', counted: false });
        }
      }
    };
    const kill = sleep(killAt).then(() => {
      instance.child.kill('SIGKILL');
      killedAt = performance.now() - t0;
    });
    await Promise.all([kill, ...Array.from({ length: HEAVY_CONNECTIONS }, connection)]);
    await instance.exit;
    keep(instance);
    agent.destroy();

    const state = await storeState(file);
    const quota = quotaAfterKill(outcomes, heavyKeys.map((k) => k.id), atStart.used, state.used);
    const perSecond = quota.acknowledged / (killedAt / 1000);
    server = await startInstance('crash', setup);
    const afterRestart = await storeState(file);
    const unfolded = heavyKeys.filter(({ id }) => (afterRestart.folded.get(id) ?? 0) !== (state.used.get(id) ?? 0)).length;
    // A key the load used, asked again: the service counts on from what the kill left.
    const probeIndex = outcomes.find((o) => o.counted)?.key ?? 0;
    const probe = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': heavyKeys[probeIndex]!.key }, timeoutMs: 10_000 });
    const served = 100_000 - Number(probe.headers['x-ratelimit-remaining']) - 1;
    const storedBeforeProbe = state.used.get(heavyKeys[probeIndex]!.id) ?? 0;
    const statuses = new Map<string, number>();
    for (const o of outcomes) bump(statuses, String(o.status));
    rows.push([
      'kill under heavy load',
      `SIGKILL at ${Math.round(killedAt)} ms into ${HEAVY_CONNECTIONS} connections over ${HEAVY_KEYS} keys (${Math.round(perSecond)} acknowledged/s): ${tally(statuses)}; integrity ${state.integrity}; ` +
        `acknowledged ${quota.acknowledged}, lost ${quota.lost} (bound ${lossBound(quota.acknowledged)}; at most ${quota.lostMax} on one key; ${state.journalCounts} journal counts left), over-counted ${quota.overCounted}; ` +
        `after restart ${unfolded} keys not folded in, serving ${served} used for a key the store held at ${storedBeforeProbe}`,
    ]);
    expect(state.integrity === 'ok', `heavy load: integrity ${state.integrity}`);
    expect(perSecond >= 1_000, `heavy load: ${Math.round(perSecond)} acknowledged requests/s, fewer than the 1,000 the phase needs to mean anything`);
    expect(quota.lost <= lossBound(quota.acknowledged), `heavy load: ${quota.lost} of ${quota.acknowledged} acknowledged requests lost, more than ${lossBound(quota.acknowledged)}`);
    expect(quota.overCounted === 0, `heavy load: ${quota.overCounted} keys counted more than acknowledged plus unanswered`);
    expect(unfolded === 0, `heavy load: ${unfolded} keys' journaled counts not folded in by the restart`);
    expect(served === storedBeforeProbe && probe.status === 200, `heavy load: after restart the service counts from the store (${served} vs ${storedBeforeProbe}, ${probe.status})`);
  });
});
