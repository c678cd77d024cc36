/**
 * End-to-end: the built CLI (dist/) runs as real child processes on a real SQLite file and is
 * spoken to over real HTTP. Expected values come from test/e2e/independent.ts, which reads the raw
 * ECB CSV itself, so these checks hold the service to SPEC §2, §3, §5, §6 and §8 rather than to its
 * own arithmetic. Run `npm run build` first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ECB_CSV, FIXED_NOW, tempDir } from '../helper.js';
import { processEnv, sharedHistoryVars } from '../support/env.js';
import { get as request } from '../support/http.js';
import { createKey, staleSources, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import {
  convertResult,
  crossRate,
  D,
  expectedHistory,
  formatRate,
  normaliseAmount,
  parseEcbCsv,
  perEur,
  type EcbTable,
} from './independent.js';

const TODAY = FIXED_NOW.slice(0, 10);
const LATEST_DAY = '2026-03-05';
// 16:00 Frankfurt is 15:00 UTC in March (CET, before the switch to summer time).
const LATEST_AS_OF = '2026-03-05T15:00:00Z';
// FIXED_NOW is 12:00 UTC when the server starts, so the next 00:00 UTC reset is at most 12 hours
// away; its clock then advances in real time, so the wait shrinks by the seconds since then.
const RESET_AT = String(Date.parse('2026-03-07T00:00:00Z') / 1000);
const MAX_SECONDS_TO_RESET = 43200;

// Keep-alive like a real client; enough sockets for the parallel quota burst.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

async function get(base: string, path: string, headers: Record<string, string> = {}, useAgent: http.Agent | false = agent): Promise<Response> {
  // Generous: these checks are about answers, and a loaded machine must not turn one into a timeout.
  const reply = await request(`${base}${path}`, { headers, agent: useAgent, timeoutMs: 60_000 });
  return { status: reply.status, headers: reply.headers, body: reply.bytes };
}

function json(response: Response): any {
  return JSON.parse(response.body.toString('utf8'));
}

function serviceEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return processEnv({ EXRATES_DATABASE_URL: `sqlite:${join(dir, 'e.db')}`, ...sharedHistoryVars(), EXRATES_LOG_LEVEL: 'warn', ...extra });
}

const startServer = (setup: ProcessSetup) => startInstance('server', setup);

/** SIGTERM and wait: a graceful shutdown ends with exit code 0. */
async function stopCleanly(server: Instance): Promise<void> {
  // Idle keep-alive sockets must not hold the drain open, as they would not for a real proxy.
  agent.destroy();
  const outcome = await stopInstance(server);
  assert.deepEqual(outcome, { code: 0, signal: null }, `unclean shutdown:\n${server.output.join('')}`);
}

/** A key issued on a fresh store, then the server started on it. */
async function serveWithKey(setup: ProcessSetup, tier: 'free' | 'pro'): Promise<{ key: string; server: Instance }> {
  assertBuildCurrent();
  const key = await createKey(setup, tier, 'e2e@example.org');
  return { key, server: await startServer(setup) };
}

async function stopAndRemove(server: Instance | undefined, dir: { remove(): void }): Promise<void> {
  try {
    if (server) await stopCleanly(server);
  } finally {
    agent.destroy();
    dir.remove();
  }
}

async function inBatches<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}

/** These tests run the compiled CLI, so an out-of-date dist/ would test code that no longer exists. */
function assertBuildCurrent(): void {
  assert.deepEqual(staleSources(), [], 'dist/ is older than these sources: run npm run build');
}

const table: EcbTable = parseEcbCsv(ECB_CSV);
const latest = table.days[table.days.length - 1]!;

describe('exrates serve, as a real process on the shared ECB history', () => {
  const dir = tempDir('exrates-e2e-');
  const setup: ProcessSetup = { env: serviceEnv(dir.path), cwd: dir.path };
  let server: Instance | undefined;
  let proKey = '';

  before(async () => ({ key: proKey, server } = await serveWithKey(setup, 'pro')));

  after(() => stopAndRemove(server, dir));

  function api(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return get(server!.base, path, { 'X-Api-Key': proKey, ...headers });
  }

  it('reads the CSV the way the data README describes it', () => {
    // Guards the reference itself: a misparsed file would make every later expectation wrong.
    assert.equal(table.days.length, 6958);
    assert.equal(latest.date, LATEST_DAY);
    assert.equal(table.days[0]!.date, '1999-01-04');
    assert.equal(latest.values.size, 29);
    assert.equal(perEur(latest, 'USD')!.toString(), '1.1618');
    assert.equal(latest.values.has('BGN'), false);
  });

  it('rate: every pair of the 30 currencies quoted on the last day, against the exact cross rate', async () => {
    const codes = ['EUR', ...table.currencies.filter((c) => latest.values.has(c))];
    assert.equal(codes.length, 30);
    const cases = codes.flatMap((from, i) =>
      codes.map((to, j) => {
        // Mixed-case input: codes are matched case-insensitively (SPEC §2).
        const variant = (i + j) % 3;
        return {
          from,
          to,
          qFrom: variant === 0 ? from.toLowerCase() : from,
          qTo: variant !== 2 ? to.toLowerCase() : to,
        };
      }),
    );
    assert.ok(cases.some((c) => c.from === 'EUR' && c.to !== 'EUR') && cases.some((c) => c.to === 'EUR' && c.from !== 'EUR'));
    const mismatches: string[] = [];
    const responses = await inBatches(cases, 50, async (c) => ({ c, response: await api(`/api/v1/rate?from=${c.qFrom}&to=${c.qTo}`) }));
    for (const { c, response } of responses) {
      const body = json(response);
      const expected = {
        pair: `${c.from}${c.to}`,
        from: c.from,
        to: c.to,
        rate: crossRate(latest, c.from, c.to),
        asOf: LATEST_AS_OF,
        stale: false,
      };
      if (response.status !== 200 || JSON.stringify(body) !== JSON.stringify(expected)) {
        mismatches.push(`${c.qFrom}/${c.qTo}: ${response.status} ${response.body.toString()} expected ${JSON.stringify(expected)}`);
      }
    }
    assert.deepEqual(mismatches, []);
    assert.equal(cases.length, 900);

    // Spot checks against hand-worked values, so the reference is not the only witness.
    const spot = async (from: string, to: string) => json(await api(`/api/v1/rate?from=${from}&to=${to}`)).rate;
    assert.equal(await spot('usd', 'usd'), '1');
    assert.equal(await spot('EUR', 'usd'), '1.1618');
    assert.equal(await spot('gbp', 'JPY'), '210.50029'); // 183.03 / 0.8695 = 210.500287…
    assert.equal(await spot('IDR', 'EUR'), '0.000050904315'); // 1 / 19644.7 = 0.0000509043152…
  });

  it('rate responses carry the pro quota and live caching headers', async () => {
    const response = await api('/api/v1/rate?from=CHF&to=SEK');
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-ratelimit-limit'], '100000');
    assert.equal(response.headers['x-ratelimit-reset'], RESET_AT);
    assert.match(String(response.headers['x-ratelimit-remaining']), /^\d+$/);
    assert.ok(Number(response.headers['x-ratelimit-remaining']) < 100000);
    // The clock started at 12:00:00, a multiple of the 600 s refresh interval, and has run since
    // the server started: what is left of that interval.
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(String(response.headers['cache-control']))?.[1]);
    assert.ok(maxAge > 300 && maxAge <= 600, String(response.headers['cache-control']));
    assert.equal(response.headers['last-modified'], new Date(LATEST_AS_OF).toUTCString());
    assert.match(String(response.headers.etag), /^"[^"]+"$/);
  });

  it('convert: amount × returned rate, half-to-even to ISO 4217 minor units', async () => {
    const amounts = ['0', '000', '0.000000000001', '123456789012345678.123456789012', '007.50', '00.5', '1', '999.99', '1234.5678'];
    const sources = ['EUR', 'GBP', 'USD', 'CHF', 'KRW'];
    // JPY, KRW and ISK have 0 minor units; USD, HUF, IDR and EUR have 2. No ECB currency has 3.
    const targets = ['JPY', 'KRW', 'ISK', 'USD', 'HUF', 'IDR', 'EUR'];
    const cases = sources.flatMap((from) => targets.flatMap((to) => amounts.map((amount) => ({ from, to, amount }))));
    const mismatches: string[] = [];
    const responses = await inBatches(cases, 50, async (c) => ({
      c,
      response: await api(`/api/v1/convert?from=${c.from.toLowerCase()}&to=${c.to}&amount=${c.amount}`),
    }));
    for (const { c, response } of responses) {
      const body = json(response);
      const rate = crossRate(latest, c.from, c.to)!;
      const expected = {
        from: c.from,
        to: c.to,
        amount: normaliseAmount(c.amount),
        rate,
        result: convertResult(c.amount, rate, c.to),
        asOf: LATEST_AS_OF,
        stale: false,
      };
      if (response.status !== 200 || JSON.stringify(body) !== JSON.stringify(expected)) {
        mismatches.push(`${c.from}→${c.to} ${c.amount}: ${response.status} ${response.body.toString()} expected ${JSON.stringify(expected)}`);
        continue;
      }
      // The result must be reproducible from the response alone.
      assert.equal(body.result, convertResult(body.amount, body.rate, body.to));
    }
    assert.deepEqual(mismatches, []);

    // Exact ties at the last kept digit go to the even neighbour.
    const ties: Array<[string, string, string, string]> = [
      ['JPY', 'JPY', '2.5', '2'],
      ['JPY', 'JPY', '3.5', '4'],
      ['KRW', 'KRW', '0.5', '0'],
      ['USD', 'USD', '0.125', '0.12'],
      ['USD', 'USD', '0.135', '0.14'],
      ['EUR', 'EUR', '1000000000.005', '1000000000.00'],
    ];
    for (const [from, to, amount, result] of ties) {
      const body = json(await api(`/api/v1/convert?from=${from}&to=${to}&amount=${amount}`));
      assert.equal(body.rate, '1');
      assert.equal(body.result, result, `${from}→${to} ${amount}`);
    }
    // Hand-worked: 7.50 × 210.50029 = 1578.752175 → 1579 yen; 7.50 × 1.1618 = 8.7135 → 8.71 dollars.
    assert.equal(json(await api('/api/v1/convert?from=GBP&to=JPY&amount=007.50')).result, '1579');
    assert.equal(json(await api('/api/v1/convert?from=EUR&to=USD&amount=7.50')).result, '8.71');
  });

  const historyPairs: Array<[string, string]> = [
    ['EUR', 'USD'],
    ['gbp', 'jpy'],
    ['USD', 'CHF'],
    // BGN is N/A from 2026-01-02: Bulgaria joined the euro on 2026-01-01, so from then on the lev is
    // the euro at 1.95583; the 3m to 5y ranges hold both its market numbers and the fixed ratio.
    ['BGN', 'usd'],
    // ISK has one decimal per EUR, so best and worst repeat on several days: the tie rule matters.
    ['EUR', 'ISK'],
    ['isk', 'EUR'],
    // Quotients that end exactly on a half at the 9th significant digit, with an even 8th:
    // HUF/USD 2025-11-13 = 0.00302578125, ISK/INR 2026-01-07 = 0.713203125, HUF/EUR 2024-11-20 = 1/409.6.
    ['HUF', 'USD'],
    ['ISK', 'INR'],
    ['huf', 'eur'],
  ];
  const ranges = ['1m', '3m', '6m', '1y', '5y'];

  it('history: points, count and statistics for each range, recomputed from the CSV', async () => {
    let checked = 0;
    for (const [qFrom, qTo] of historyPairs) {
      for (const range of ranges) {
        const from = qFrom.toUpperCase();
        const to = qTo.toUpperCase();
        const expected = expectedHistory(table, from, to, range, TODAY);
        if (!expected) continue;
        const response = await api(`/api/v1/history?from=${qFrom}&to=${qTo}&range=${range}`);
        assert.equal(response.status, 200, `${from}${to} ${range}: ${response.body.toString()}`);
        assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(response.headers['cache-control'], 'private, max-age=3600');
        const body = json(response);
        assert.deepEqual(body, expected, `${from}${to} ${range}`);
        assert.equal(body.count, body.points.length);
        checked += 1;
      }
    }
    assert.equal(checked, historyPairs.length * ranges.length);

    // Start days are calendar months back from 2026-03-06, and only TARGET days appear.
    const oneMonth = expectedHistory(table, 'EUR', 'USD', '1m', TODAY)!;
    assert.equal(oneMonth.points[0]!.date, '2026-02-06');
    assert.equal(oneMonth.points.at(-1)!.date, LATEST_DAY);
    const fiveYears = expectedHistory(table, 'EUR', 'USD', '5y', TODAY)!;
    assert.equal(fiveYears.points[0]!.date, '2021-03-08'); // 2021-03-06 was a Saturday
    const bgn = expectedHistory(table, 'BGN', 'USD', '3m', TODAY)!;
    assert.equal(bgn.points.find((p) => p.date === '2025-12-31')!.rate, formatRate(new D('1.1750').div('1.9558')));
    assert.equal(bgn.points.at(-1)!.date, LATEST_DAY);
    assert.equal(bgn.points.at(-1)!.rate, formatRate(new D('1.1618').div('1.95583')));
    // Ties, read off the CSV by hand: EUR/ISK 149 on 2025-12-03 and -04, 141.4 on 2025-10-08 and -14.
    const isk = expectedHistory(table, 'EUR', 'ISK', '6m', TODAY)!;
    assert.deepEqual([isk.stats.best, isk.stats.bestDate, isk.stats.worst, isk.stats.worstDate], ['149', '2025-12-04', '141.4', '2025-10-14']);
    const pointOn = async (from: string, to: string, range: string, date: string) =>
      (json(await api(`/api/v1/history?from=${from}&to=${to}&range=${range}`)).points as Array<{ date: string; rate: string }>).find((p) => p.date === date)?.rate;
    assert.equal(await pointOn('HUF', 'USD', '6m', '2025-11-13'), '0.0030257812');
    assert.equal(await pointOn('ISK', 'INR', '3m', '2026-01-07'), '0.71320312');
    assert.equal(await pointOn('HUF', 'EUR', '5y', '2024-11-20'), '0.0024414062');
  });

  it('history: the default range is 1y', async () => {
    const response = await api('/api/v1/history?from=USD&to=CHF');
    assert.equal(response.status, 200);
    assert.deepEqual(json(response), expectedHistory(table, 'USD', 'CHF', '1y', TODAY));
  });

  it('history: a currency with stored rates but no point in the range is 404 no_history, not 400', async () => {
    // The ECB stopped quoting RUB after 2022-03-01.
    assert.equal(expectedHistory(table, 'RUB', 'USD', '1m', TODAY), undefined);
    const response = await api('/api/v1/history?from=RUB&to=USD&range=1m');
    assert.equal(response.status, 404, response.body.toString());
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    const problem = json(response);
    assert.equal(problem.code, 'no_history');
    assert.equal(problem.status, 404);
  });

  it('history as CSV: RFC 4180 with CRLF, the same points as the JSON form', async () => {
    const expected = expectedHistory(table, 'GBP', 'JPY', '1y', TODAY)!;
    const response = await api('/api/v1/history?from=GBP&to=JPY&format=csv');
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(response.headers['content-disposition'], 'attachment; filename="GBPJPY_1y.csv"');
    const text = response.body.toString('utf8');
    assert.equal(text, `date,rate\r\n${expected.points.map((p) => `${p.date},${p.rate}\r\n`).join('')}`);

    const fromJson = json(await api('/api/v1/history?from=GBP&to=JPY&range=1y')).points as Array<{ date: string; rate: string }>;
    assert.equal(text, `date,rate\r\n${fromJson.map((p) => `${p.date},${p.rate}\r\n`).join('')}`);
  });

  it('history with gzip: same body, its own ETag, and 304 on a match', async () => {
    const path = '/api/v1/history?from=EUR&to=USD&range=5y';
    const identity = await api(path);
    assert.equal(identity.status, 200);
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.deepEqual(json(identity), expectedHistory(table, 'EUR', 'USD', '5y', TODAY));

    const gzipped = await api(path, { 'Accept-Encoding': 'gzip' });
    assert.equal(gzipped.status, 200);
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.match(String(gzipped.headers.vary), /accept-encoding/i);
    assert.ok(gzipped.body.length < identity.body.length / 3, `gzip body ${gzipped.body.length} bytes vs ${identity.body.length}`);
    assert.deepEqual(gunzipSync(gzipped.body), identity.body);

    const identityTag = String(identity.headers.etag);
    const gzipTag = String(gzipped.headers.etag);
    assert.match(identityTag, /^"[^"]+"$/);
    assert.match(gzipTag, /^"[^"]+"$/);
    assert.notEqual(gzipTag, identityTag);

    const notModified = await api(path, { 'Accept-Encoding': 'gzip', 'If-None-Match': gzipTag });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    assert.equal(notModified.headers.etag, gzipTag);
    const notModifiedIdentity = await api(path, { 'If-None-Match': identityTag });
    assert.equal(notModifiedIdentity.status, 304);
    assert.equal(notModifiedIdentity.body.length, 0);
  });

  it('quota: 200 parallel requests on a free key are counted exactly, and the count survives a restart', async () => {
    // Issued while the server runs: the CLI and the server share the SQLite file.
    const freeKey = await createKey(setup, 'free', 'e2e@example.org');
    const burst = await Promise.all(
      Array.from({ length: 200 }, (_, i) => get(server!.base, `/api/v1/rate?from=USD&to=${i % 2 ? 'JPY' : 'GBP'}`, { 'X-Api-Key': freeKey })),
    );
    assert.deepEqual(burst.map((r) => r.status).filter((s) => s !== 200), []);
    assert.deepEqual(new Set(burst.map((r) => r.headers['x-ratelimit-limit'])), new Set(['1000']));
    const remaining = burst.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => b - a);
    assert.deepEqual(remaining, Array.from({ length: 200 }, (_, i) => 999 - i));

    const next = await get(server!.base, '/api/v1/rate?from=USD&to=JPY', { 'X-Api-Key': freeKey });
    assert.equal(next.status, 200);
    assert.equal(next.headers['x-ratelimit-remaining'], '799');

    await stopCleanly(server!);
    server = await startServer(setup);
    const afterRestart = await get(server.base, '/api/v1/rate?from=USD&to=JPY', { 'X-Api-Key': freeKey });
    assert.equal(afterRestart.status, 200);
    assert.equal(afterRestart.headers['x-ratelimit-remaining'], '798');
    assert.equal(json(afterRestart).rate, crossRate(latest, 'USD', 'JPY'));
  });
});

describe('exrates serve with a free quota of 5', () => {
  const dir = tempDir('exrates-e2e-quota-');
  const setup: ProcessSetup = { env: serviceEnv(dir.path, { EXRATES_QUOTA_FREE: '5' }), cwd: dir.path };
  let server: Instance | undefined;
  let key = '';

  before(async () => ({ key, server } = await serveWithKey(setup, 'free')));

  after(() => stopAndRemove(server, dir));

  it('the 6th request is 429 quota_exceeded with Retry-After, and refusals are not counted', async () => {
    const call = () => get(server!.base, '/api/v1/rate?from=EUR&to=CHF', { 'X-Api-Key': key });
    for (const left of ['4', '3', '2', '1', '0']) {
      const response = await call();
      assert.equal(response.status, 200);
      assert.equal(response.headers['x-ratelimit-limit'], '5');
      assert.equal(response.headers['x-ratelimit-remaining'], left);
    }
    for (let i = 0; i < 2; i += 1) {
      const refused = await call();
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['content-type'], 'application/problem+json; charset=utf-8');
      const problem = json(refused);
      assert.equal(problem.code, 'quota_exceeded');
      assert.equal(problem.status, 429);
      assert.equal(typeof problem.title, 'string');
      assert.equal(typeof problem.detail, 'string');
      const wait = Number(refused.headers['retry-after']);
      assert.ok(wait <= MAX_SECONDS_TO_RESET && wait > MAX_SECONDS_TO_RESET - 600, `Retry-After ${String(refused.headers['retry-after'])}`);
      assert.equal(refused.headers['x-ratelimit-limit'], '5');
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused.headers['x-ratelimit-reset'], RESET_AT);
    }

    // Raising the quota to 7 on the same store shows what was counted: 5 used, so 2 remain,
    // which could not be if either refusal had counted.
    await stopCleanly(server!);
    server = await startServer({ ...setup, env: { ...setup.env, EXRATES_QUOTA_FREE: '7' } });
    const sixth = await call();
    assert.equal(sixth.status, 200);
    assert.equal(sixth.headers['x-ratelimit-remaining'], '1');
    const seventh = await call();
    assert.equal(seventh.status, 200);
    assert.equal(seventh.headers['x-ratelimit-remaining'], '0');
    assert.equal((await call()).status, 429);
  });
});
