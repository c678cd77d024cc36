import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { FeedError } from '../../src/core/errors.js';
import type { Clock, RateDocument, RateStore } from '../../src/core/ports.js';
import { failureCause, retentionStart, shortError, syncProvider, validateDocument, type Logger } from '../../src/core/refresh.js';
import { instrumentProvider } from '../../src/deps.js';
import { createMetrics } from '../../src/metrics.js';
import { createEcbProvider } from '../../src/providers/ecb.js';
import { createFileProvider } from '../../src/providers/file.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import type { RatesTable } from '../../src/storage/schema.js';
import { ECB_CSV, ECB_XML_DIR, tempDir } from '../helper.js';
import { serveOnLoopback } from '../support/upstreams.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });

function feedError(pattern: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  };
}

interface LogEntry {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return {
    entries,
    info: (obj, msg) => void entries.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void entries.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void entries.push({ level: 'error', obj, msg }),
  };
}

describe('validateDocument', () => {
  const clock = clockAt('2026-02-12T12:00:00Z');
  const doc = (days: Array<[string, Record<string, string>]>): RateDocument => ({
    provider: 'ecb',
    base: 'EUR',
    days: days.map(([day, rates]) => ({ day, asOf: `${day}T15:00:00Z`, rates })),
  });

  it('passes a sound document through unchanged', () => {
    const input = doc([
      ['2026-02-10', { USD: '1.1894', JPY: '184.51' }],
      ['2026-02-11', { USD: '1.1900', JPY: '182.79' }],
      // Today is not in the future.
      ['2026-02-12', { USD: '1.1874', JPY: '182.52' }],
    ]);
    const report = validateDocument(input, clock);
    assert.deepEqual(report.document, input);
    assert.deepEqual(report.dropped, []);
  });

  it('rejects zero rates', () => {
    for (const rate of ['0', '0.0', '0.0000', '000']) {
      assert.throws(() => validateDocument(doc([['2026-02-11', { USD: '1.19', JPY: rate }]]), clock), feedError(/JPY on 2026-02-11/), rate);
    }
  });

  it('rejects signed, non-decimal and padded rates', () => {
    for (const rate of ['-1.19', '+1.19', '−1.19', '1e3', '1E-3', '1,19', ' 1.19', '1.19 ', 'NaN', 'Infinity', '', '.5', '5.', '0x1F', '1.1.9']) {
      assert.throws(() => validateDocument(doc([['2026-02-11', { USD: rate }]]), clock), feedError(/implausible rate/), JSON.stringify(rate));
    }
  });

  it('rejects a day after today by the clock', () => {
    assert.throws(
      () => validateDocument(doc([['2026-02-11', { USD: '1.19' }], ['2026-02-13', { USD: '1.19' }]]), clock),
      feedError(/2026-02-13 are in the future/),
    );
    // Just before UTC midnight, the next UTC day is still the future.
    assert.throws(() => validateDocument(doc([['2026-02-12', { USD: '1.19' }]]), clockAt('2026-02-11T23:59:59Z')), feedError(/future/));
  });

  it('rejects impossible dates and days out of order or repeated', () => {
    assert.throws(() => validateDocument(doc([['2026-02-30', { USD: '1.19' }]]), clock), feedError(/not a calendar date/));
    assert.throws(() => validateDocument(doc([['2026-2-11', { USD: '1.19' }]]), clock), feedError(/not a calendar date/));
    assert.throws(
      () => validateDocument(doc([['2026-02-11', { USD: '1.19' }], ['2026-02-10', { USD: '1.18' }]]), clock),
      feedError(/out of order or repeated at 2026-02-10/),
    );
    assert.throws(
      () => validateDocument(doc([['2026-02-10', { USD: '1.19' }], ['2026-02-10', { USD: '1.18' }]]), clock),
      feedError(/out of order or repeated at 2026-02-10/),
    );
  });

  it('drops and reports codes that are not ISO 4217, a withdrawn code from its withdrawal on, and the base itself', () => {
    const input = doc([
      ['2022-12-29', { USD: '1.0622', HRK: '7.5365', EUR: '1', XYZ: '2' }],
      ['2022-12-30', { USD: '1.0666', HRK: '7.5365' }],
      // HRK was withdrawn on 2023-01-01. A day with nothing usable left disappears rather than being stored empty.
      ['2023-01-02', { HRK: '7.5365' }],
    ]);
    const report = validateDocument(input, clock);
    assert.deepEqual(report.dropped, ['EUR', 'HRK', 'XYZ']);
    assert.deepEqual(
      report.document.days.map((d) => [d.day, d.rates]),
      [
        ['2022-12-29', { USD: '1.0622', HRK: '7.5365' }],
        ['2022-12-30', { USD: '1.0666', HRK: '7.5365' }],
      ],
    );
    // The caller's document is left as it was.
    assert.deepEqual(input.days[0]!.rates, { USD: '1.0622', HRK: '7.5365', EUR: '1', XYZ: '2' });
  });

  it('rejects a document with nothing usable, and a bad value even under a dropped code', () => {
    assert.throws(() => validateDocument(doc([['2023-01-02', { HRK: '7.5365' }]]), clock), feedError(/no usable rates/));
    assert.throws(() => validateDocument(doc([]), clock), feedError(/no usable rates/));
    assert.throws(() => validateDocument(doc([['2022-12-30', { USD: '1.0666', HRK: '0' }]]), clock), feedError(/HRK on 2022-12-30/));
  });
});

describe('retentionStart', () => {
  it('is five years and one month before today by default', () => {
    assert.equal(retentionStart(clockAt('2026-02-10T18:00:00Z'), 5), '2021-01-10');
    assert.equal(retentionStart(clockAt('2026-03-31T00:00:00Z'), 5), '2021-02-28');
  });

  it('follows EXRATES_HISTORY_YEARS: so many years and a month, or every day with all', () => {
    assert.equal(retentionStart(clockAt('2026-02-10T18:00:00Z'), 1), '2025-01-10');
    assert.equal(retentionStart(clockAt('2026-03-31T00:00:00Z'), 30), '1996-02-29');
    assert.equal(retentionStart(clockAt('2026-03-31T00:00:00Z'), 'all'), '1900-01-01');
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Upstream {
  baseUrl: string;
  requests: string[];
  routes: Map<string, Handler>;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const requests: string[] = [];
  const routes = new Map<string, Handler>();
  const server = await serveOnLoopback((req, res) => {
    requests.push(req.url ?? '');
    const handler = routes.get(req.url ?? '');
    if (handler) handler(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  return { baseUrl: server.origin, requests, routes, close: server.close };
}

const serve =
  (body: Uint8Array | string, contentType = 'text/xml'): Handler =>
  (_req, res) => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    res.writeHead(200, { 'content-type': contentType, 'content-length': String(bytes.length) }).end(bytes);
  };

const DAILY = readFileSync(join(ECB_XML_DIR, 'eurofxref-daily_2026-02-11.xml'), 'utf8');
const NINETY_DAYS = readFileSync(join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml'), 'utf8');
const CSV = readFileSync(ECB_CSV);

/** The quotes of the daily file, read with a pattern independent of the service's parser. */
function dailyQuotes(xml: string): Array<[string, string]> {
  return [...xml.matchAll(/<Cube currency='([A-Z]{3})' rate='([^']*)'\/>/g)].map((m) => [m[1]!, m[2]!]);
}

/** Every non-empty value of the CSV between two days, as stored rows would hold them. */
function csvQuotes(from: string, to: string, skip: ReadonlySet<string>): Array<{ day: string; quote: string; rate: string }> {
  const lines = CSV.toString('utf8').split(/\r?\n/);
  const header = lines[0]!.split(',');
  const out: Array<{ day: string; quote: string; rate: string }> = [];
  for (const line of lines.slice(1)) {
    const fields = line.split(',');
    const day = fields[0]!;
    if (!(day >= from && day <= to)) continue;
    for (let i = 1; i < header.length; i++) {
      const quote = header[i]!;
      const rate = fields[i] ?? '';
      if (quote !== '' && rate !== '' && rate !== 'N/A' && !skip.has(quote)) out.push({ day, quote, rate });
    }
  }
  return out;
}

async function openStore(dir: string, name: string): Promise<{ database: OpenDatabase; store: RateStore }> {
  const database = await openDatabase(`sqlite:${join(dir, name)}`);
  await migrateToLatest(database.db);
  return { database, store: createRateStore(database.db) };
}

function allRows(database: OpenDatabase): Promise<RatesTable[]> {
  return database.db.selectFrom('rates').selectAll().orderBy('provider').orderBy('day').orderBy('quote').execute();
}

const key = (r: { day: string; quote: string }): string => `${r.day} ${r.quote}`;

/** Every stored column of every row, as one string: cheap to compare for ~40,000 rows. */
async function snapshot(database: OpenDatabase): Promise<string> {
  return (await allRows(database)).map((r) => [r.provider, r.base, r.quote, r.day, r.as_of, r.rate].join('|')).join('\n');
}

describe('syncProvider with the ECB provider against a local server', () => {
  const dir = tempDir();
  let upstream: Upstream;
  let database: OpenDatabase;
  let store: RateStore;
  const log = recordingLogger();

  // The full history is fetched on 2026-02-10 after publication; the daily refresh a day later.
  const LOAD_AT = '2026-02-10T18:00:00Z';
  const REFRESH_AT = '2026-02-11T18:00:00Z';
  const provider = (at: string, timeoutMs = 5_000) => createEcbProvider({ baseUrl: upstream.baseUrl, timeoutMs, clock: clockAt(at) });

  before(async () => {
    upstream = await startUpstream();
    upstream.routes.set('/eurofxref-hist.zip', serve(zipSync({ 'eurofxref-hist.csv': new Uint8Array(CSV) }), 'application/zip'));
    upstream.routes.set('/eurofxref-daily.xml', serve(DAILY));
    ({ database, store } = await openStore(dir.path, 'sync.db'));
  });

  after(async () => {
    await upstream.close();
    await database.close();
    dir.remove();
  });

  it('loads the retained history into an empty store', async () => {
    upstream.requests.length = 0;
    const outcome = await syncProvider(provider(LOAD_AT), store, clockAt(LOAD_AT), log);

    // Retention starts 61 months back: 2021-01-10, a Sunday, so the first stored day is Monday 11th.
    // HRK is in the CSV until 2022-12-30: withdrawn from ISO 4217 on 2023-01-01, its history is stored.
    const expected = csvQuotes('2021-01-10', '2026-02-10', new Set());
    assert.equal(expected.length, 39897);
    const { stored, ...summary } = outcome;
    assert.deepEqual(summary, { provider: 'ecb', ok: true, days: 1304, quotes: 39897, latestDay: '2026-02-10' });
    // The stored document is what the in-memory rates merge: exactly the days written.
    assert.equal(stored?.days.length, 1304);
    assert.equal(stored?.days.reduce((n, d) => n + Object.keys(d.rates).length, 0), 39897);
    assert.deepEqual(upstream.requests, ['/eurofxref-hist.zip']);

    assert.equal(await store.countQuotes(), 39897);
    assert.equal(await store.latestDay('ecb'), '2026-02-10');
    const rows = await allRows(database);
    assert.equal(rows[0]!.day, '2021-01-11');
    assert.equal(rows.filter((r) => r.day < '2021-01-10').length, 0);
    assert.equal(rows.filter((r) => r.quote === 'HRK').length, 510);
    assert.equal(rows.filter((r) => r.quote === 'HRK').at(-1)?.day, '2022-12-30');
    assert.deepEqual(
      rows.map((r) => `${key(r)} ${r.rate}`),
      expected.map((r) => `${key(r)} ${r.rate}`).sort(),
    );
    assert.ok(rows.every((r) => r.provider === 'ecb' && r.base === 'EUR'));
    // ECB's reference time: 16:00 in Frankfurt, CET in January, CEST in July.
    assert.equal(rows.find((r) => r.day === '2021-01-11' && r.quote === 'USD')?.as_of, '2021-01-11T15:00:00Z');
    assert.equal(rows.find((r) => r.day === '2025-07-01' && r.quote === 'USD')?.as_of, '2025-07-01T14:00:00Z');
    assert.equal(rows.find((r) => r.day === '2021-01-11' && r.quote === 'USD')?.rate, '1.2163');

    assert.deepEqual(await store.providerState('ecb'), {
      provider: 'ecb',
      lastAttemptAt: '2026-02-10T18:00:00.000Z',
      lastSuccessAt: '2026-02-10T18:00:00.000Z',
      lastFailureAt: null,
      lastError: null,
      failing: false,
    });
    assert.ok(!log.entries.some((e) => JSON.stringify(e.obj).includes('HRK')), 'nothing of HRK is dropped');
  });

  it('stores only the new day from the daily file on the next refresh', async () => {
    const before = await allRows(database);
    upstream.requests.length = 0;
    const outcome = await syncProvider(provider(REFRESH_AT), store, clockAt(REFRESH_AT), log);
    const published = dailyQuotes(DAILY);
    assert.equal(published.length, 29);
    const { stored, ...summary } = outcome;
    assert.deepEqual(summary, { provider: 'ecb', ok: true, days: 1, quotes: 29, latestDay: '2026-02-11' });
    // The stored document is what the in-memory rates merge: exactly the days written.
    assert.equal(stored?.days.length, 1);
    assert.equal(stored?.days.reduce((n, d) => n + Object.keys(d.rates).length, 0), 29);
    assert.deepEqual(upstream.requests, ['/eurofxref-daily.xml']);

    const after = await allRows(database);
    assert.equal(await store.countQuotes(), 39897 + 29);
    assert.deepEqual(
      after.filter((r) => r.day !== '2026-02-11'),
      before,
    );
    // Stored exactly as published, trailing zeros included.
    assert.deepEqual(
      after.filter((r) => r.day === '2026-02-11').map((r) => [r.quote, r.rate, r.as_of]),
      published.map(([quote, rate]) => [quote, rate, '2026-02-11T15:00:00Z']).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    assert.equal(after.find((r) => r.day === '2026-02-11' && r.quote === 'USD')?.rate, '1.1900');
    const state = await store.providerState('ecb');
    assert.equal(state?.failing, false);
    assert.equal(state?.lastSuccessAt, '2026-02-11T18:00:00.000Z');
  });

  /** Runs one failing refresh and checks that the store is untouched and the failure recorded. */
  async function assertFailedRefresh(handler: Handler, error: RegExp, options: { at?: string; timeoutMs?: number } = {}): Promise<void> {
    const at = options.at ?? REFRESH_AT;
    upstream.routes.set('/eurofxref-daily.xml', handler);
    try {
      const rowsBefore = await snapshot(database);
      const countBefore = await store.countQuotes();
      const stateBefore = await store.providerState('ecb');
      const outcome = await syncProvider(provider(at, options.timeoutMs), store, clockAt(at), log);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.days, 0);
      assert.equal(outcome.quotes, 0);
      assert.match(outcome.error ?? '', error);

      assert.equal(await store.countQuotes(), countBefore);
      assert.ok((await snapshot(database)) === rowsBefore, 'stored rows changed');
      const state = await store.providerState('ecb');
      assert.equal(state?.failing, true);
      assert.match(state?.lastError ?? '', error);
      assert.equal(state?.lastFailureAt, new Date(at).toISOString());
      assert.equal(state?.lastAttemptAt, new Date(at).toISOString());
      // The last success is still the one before.
      assert.equal(state?.lastSuccessAt, stateBefore?.lastSuccessAt);
      // The warning names the upstream by its host; the recorded error keeps the URL asked.
      assert.ok(log.entries.some((e) => e.level === 'warn' && (e.obj as { err?: string }).err === shortError(outcome.error!)));
    } finally {
      upstream.routes.set('/eurofxref-daily.xml', serve(DAILY));
    }
  }

  it('records an HTTP error and stores nothing', async () => {
    await assertFailedRefresh((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream broke'), /HTTP 500/);
  });

  it('records a timeout and stores nothing', async () => {
    const started = Date.now();
    // The server accepts the request and never answers.
    await assertFailedRefresh(() => undefined, /no complete answer within 200 ms/, { timeoutMs: 200 });
    assert.ok(Date.now() - started < 3_000, 'the timeout bounds the refresh');
  });

  it('records a truncated document and stores nothing', async () => {
    const half = DAILY.slice(0, Math.floor(DAILY.length / 2));
    await assertFailedRefresh(serve(half), /not well-formed/);
  });

  it('records a body cut off before its declared length and stores nothing', async () => {
    const bytes = Buffer.from(DAILY, 'utf8');
    await assertFailedRefresh((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(bytes.length) });
      // Cut off once the first bytes are on their way.
      res.write(bytes.subarray(0, 600), () => res.destroy());
    }, /eurofxref-daily\.xml: .*(terminated|closed|aborted)/);
  });

  it('records a zero rate and stores nothing', async () => {
    await assertFailedRefresh(serve(DAILY.replace("currency='JPY' rate='182.79'", "currency='JPY' rate='0'")), /XML day 2026-02-11, JPY: the rate is zero/);
  });

  it('records a partial document and stores nothing', async () => {
    // Keep USD, JPY and CZK only: 3 currencies against the 29 of the newest stored day.
    const partial = DAILY.replace(/\s*<Cube currency='(?!USD|JPY|CZK)[A-Z]{3}' rate='[^']*'\/>/g, '');
    assert.equal(dailyQuotes(partial).length, 3);
    await assertFailedRefresh(serve(partial), /lists 3 currencies against 29 on 2026-02-11; refusing a partial document/);
  });

  it('records a document dated after today and stores nothing', async () => {
    // By this clock the 2026-02-11 file is from tomorrow.
    await assertFailedRefresh(serve(DAILY), /2026-02-11 are in the future/, { at: '2026-02-10T23:00:00Z' });
  });

  it('clears the failure on the next good refresh and prunes beyond retention', async () => {
    assert.equal((await store.providerState('ecb'))?.failing, true);
    const before = await allRows(database);
    const at = '2026-02-12T12:00:00Z';
    const outcome = await syncProvider(provider(at), store, clockAt(at), log);
    // Same day again: the values are rewritten unchanged.
    const { stored, ...summary } = outcome;
    assert.deepEqual(summary, { provider: 'ecb', ok: true, days: 1, quotes: 29, latestDay: '2026-02-11' });
    // The stored document is what the in-memory rates merge: exactly the days written.
    assert.equal(stored?.days.length, 1);
    assert.equal(stored?.days.reduce((n, d) => n + Object.keys(d.rates).length, 0), 29);
    const state = await store.providerState('ecb');
    assert.equal(state?.failing, false);
    assert.equal(state?.lastSuccessAt, '2026-02-12T12:00:00.000Z');
    assert.equal(state?.lastAttemptAt, '2026-02-12T12:00:00.000Z');
    // Retention now starts on 2021-01-12, so 2021-01-11 goes and nothing else changes.
    const after = await allRows(database);
    assert.deepEqual(
      after,
      before.filter((r) => r.day >= '2021-01-12'),
    );
    // 32 CSV columns have a value on 2021-01-11, HRK's among them.
    assert.equal(before.filter((r) => r.day === '2021-01-11').length, 32);
    assert.equal(await store.countQuotes(), 39897 + 29 - 32);
  });
});

describe('syncProvider catching up through the 90-day file', () => {
  const dir = tempDir();
  let upstream: Upstream;
  let database: OpenDatabase;
  let store: RateStore;

  const ninetyDayQuotes = (): Array<{ day: string; quote: string; rate: string }> =>
    [...NINETY_DAYS.matchAll(/<Cube time="(\d{4}-\d{2}-\d{2})">(.*?)<\/Cube>/g)].flatMap((m) =>
      [...m[2]!.matchAll(/<Cube currency="([A-Z]{3})" rate="([^"]*)"\/>/g)].map((c) => ({ day: m[1]!, quote: c[1]!, rate: c[2]! })),
    );

  before(async () => {
    upstream = await startUpstream();
    upstream.routes.set('/eurofxref-hist-90d.xml', serve(NINETY_DAYS));
    ({ database, store } = await openStore(dir.path, 'catch-up.db'));
    // The store stopped on 2025-02-10.
    const seed = ninetyDayQuotes().filter((q) => q.day === '2025-02-10');
    assert.equal(seed.length, 30);
    await store.saveDocument({
      provider: 'ecb',
      base: 'EUR',
      days: [{ day: '2025-02-10', asOf: '2025-02-10T15:00:00Z', rates: Object.fromEntries(seed.map((q) => [q.quote, q.rate])) }],
    });
  });

  after(async () => {
    await upstream.close();
    await database.close();
    dir.remove();
  });

  it('fetches the missing days after a gap longer than a weekend', async () => {
    const at = '2025-02-26T12:00:00Z';
    const outcome = await syncProvider(
      createEcbProvider({ baseUrl: upstream.baseUrl, timeoutMs: 5_000, clock: clockAt(at) }),
      store,
      clockAt(at),
      recordingLogger(),
    );
    // 2025-02-11 … 2025-02-25: eleven business days of 30 currencies.
    const { stored, ...summary } = outcome;
    assert.deepEqual(summary, { provider: 'ecb', ok: true, days: 11, quotes: 330, latestDay: '2025-02-25' });
    // The stored document is what the in-memory rates merge: exactly the days written.
    assert.equal(stored?.days.length, 11);
    assert.equal(stored?.days.reduce((n, d) => n + Object.keys(d.rates).length, 0), 330);
    assert.deepEqual(upstream.requests, ['/eurofxref-hist-90d.xml']);
    const rows = await allRows(database);
    const expected = ninetyDayQuotes().filter((q) => q.day >= '2025-02-10');
    assert.deepEqual(
      rows.map((r) => `${key(r)} ${r.rate}`),
      expected.map((r) => `${key(r)} ${r.rate}`).sort(),
    );
    assert.equal(await store.countQuotes(), 360);
  });

  it('takes the latest document when nothing was published since the newest stored day, not a failure', async () => {
    // Easter 2025: no fixing from Friday 18 to Monday 21 April. Here, a week after 2025-02-25 with
    // no newer day in the 90-day file: the daily file still holds 2025-02-25.
    const newest = NINETY_DAYS.slice(0, NINETY_DAYS.indexOf('</Cube>', NINETY_DAYS.indexOf('<Cube time=')) + '</Cube>'.length) + '</Cube></gesmes:Envelope>';
    assert.equal([...newest.matchAll(/<Cube time="/g)].length, 1);
    upstream.routes.set('/eurofxref-daily.xml', serve(newest));
    upstream.requests.length = 0;
    const before = await allRows(database);
    const at = '2025-03-04T12:00:00Z';
    const log = recordingLogger();
    const outcome = await syncProvider(createEcbProvider({ baseUrl: upstream.baseUrl, timeoutMs: 5_000, clock: clockAt(at) }), store, clockAt(at), log);
    const { stored, ...summary } = outcome;
    assert.deepEqual(summary, { provider: 'ecb', ok: true, days: 1, quotes: 30, latestDay: '2025-02-25' });
    assert.deepEqual(upstream.requests, ['/eurofxref-hist-90d.xml', '/eurofxref-daily.xml']);
    assert.equal(stored?.days[0]?.day, '2025-02-25');
    assert.deepEqual(await allRows(database), before);
    assert.equal((await store.providerState('ecb'))?.failing, false);
    assert.deepEqual(log.entries.filter((e) => e.level !== 'info'), []);
  });

  /** A refresh at `at` that fails with `error` and stores nothing. */
  async function failsWith(at: string, error: string): Promise<void> {
    const before = await allRows(database);
    const outcome = await syncProvider(createEcbProvider({ baseUrl: upstream.baseUrl, timeoutMs: 5_000, clock: clockAt(at) }), store, clockAt(at), recordingLogger());
    assert.deepEqual(outcome, { provider: 'ecb', ok: false, days: 0, quotes: 0, latestDay: null, error });
    assert.deepEqual(await allRows(database), before);
    assert.equal((await store.providerState('ecb'))?.failing, true);
  }

  it('refuses a latest document dated after the newest stored day when the series has none: the days between would be missing for good', async () => {
    const first = NINETY_DAYS.indexOf('<Cube time=');
    const later = NINETY_DAYS.slice(0, NINETY_DAYS.indexOf('</Cube>', first) + '</Cube>'.length).replace('<Cube time="2025-02-25">', '<Cube time="2025-02-27">') + '</Cube></gesmes:Envelope>';
    upstream.routes.set('/eurofxref-daily.xml', serve(later));
    await failsWith('2025-03-04T12:00:00Z', 'ecb: its series has no day after 2025-02-25, but its latest document is dated 2025-02-27');
  });

  it('takes a feed that has published nothing for more than a week for a stopped one: a failure, its rates stale', async () => {
    upstream.requests.length = 0;
    await failsWith('2025-03-05T12:00:00Z', 'ecb: nothing published since 2025-02-25');
    // Nothing more is asked once the series came back empty.
    assert.deepEqual(upstream.requests, ['/eurofxref-hist-90d.xml']);
  });
});

describe('syncProvider on a file that stays as it is', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  before(async () => {
    ({ database, store } = await openStore(dir.path, 'file.db'));
  });
  after(async () => {
    await database.close();
    dir.remove();
  });

  it('refreshes without failure months after its newest day: the operator decides when it changes', async () => {
    const provider = createFileProvider({ location: join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml'), timeoutMs: 5_000 });
    const loaded = await syncProvider(provider, store, clockAt('2025-02-26T12:00:00Z'), recordingLogger());
    assert.equal(loaded.ok, true, loaded.error);
    assert.equal(loaded.latestDay, '2025-02-25');
    const before = await allRows(database);
    const log = recordingLogger();
    const { stored, ...later } = await syncProvider(provider, store, clockAt('2025-11-03T12:00:00Z'), log);
    assert.deepEqual(later, { provider: 'file', ok: true, days: 1, quotes: 30, latestDay: '2025-02-25' });
    assert.equal(stored?.days[0]?.day, '2025-02-25');
    assert.deepEqual(await allRows(database), before);
    assert.equal((await store.providerState('file'))?.failing, false);
    assert.deepEqual(log.entries.filter((e) => e.level !== 'info'), []);
  });

  it('does so as the service wires it too, timed for the upstream metrics', async () => {
    const provider = instrumentProvider(createFileProvider({ location: join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml'), timeoutMs: 5_000 }), createMetrics());
    const later = await syncProvider(provider, store, clockAt('2025-11-04T12:00:00Z'), recordingLogger());
    assert.equal(later.ok, true, later.error);
    assert.equal(later.latestDay, '2025-02-25');
  });
});

describe('a refresh error as the console shows it', () => {
  it('names each URL by its host, keeping the punctuation after it, and the cause in a word', () => {
    const message = 'https://api.nbp.pl/api/exchangerates/tables/A/2021-10-28/2022-01-28/?format=json: fetch failed: ENOTFOUND: getaddrinfo api.nbp.pl';
    assert.equal(shortError(message), 'api.nbp.pl: fetch failed: ENOTFOUND: getaddrinfo api.nbp.pl');
    assert.equal(failureCause(message), 'ENOTFOUND');
    assert.equal(shortError('http://127.0.0.1:9/a.zip, then http://[::1]:9/b.xml.'), '127.0.0.1:9, then [::1]:9.');
    assert.equal(failureCause('http://127.0.0.1:9/x: HTTP 503 Service Unavailable'), 'HTTP 503');
    // A path of capitals (EXR, EUR) is no error code; without one, the short error is the cause.
    assert.equal(failureCause('https://edge.boi.gov.il/sdmx/EXR/EUR/?c=1: the document holds no usable rates'), 'edge.boi.gov.il: the document holds no usable rates');
    assert.equal(failureCause('connect EAI_AGAIN example.org'), 'EAI_AGAIN');
  });
});
