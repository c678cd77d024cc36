import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Decimal } from 'decimal.js';
import { createHistoryBodies } from '../../src/http/responses.js';
import { historyFormat } from '../../src/http/routes/api.js';
import { createTestApp, type TestApp } from '../helper.js';
import { ECB_CSV } from '../support/data.js';

const PROBLEM = 'application/problem+json; charset=utf-8';
const Exact = Decimal.clone({ precision: 200, toExpNeg: -100, toExpPos: 100 });

/** The ECB's euro reference rates, read straight from its CSV: date → currency → rate text. */
function readEcb(): Map<string, Map<string, string>> {
  const [header, ...rows] = readFileSync(ECB_CSV, 'utf8').trim().split('\n');
  const codes = header!.split(',');
  const days = new Map<string, Map<string, string>>();
  for (const row of rows) {
    const cells = row.split(',');
    const rates = new Map<string, string>();
    for (let i = 1; i < codes.length; i++) if (cells[i] && cells[i] !== 'N/A' && codes[i]) rates.set(codes[i]!.trim(), cells[i]!.trim());
    days.set(cells[0]!, rates);
  }
  return days;
}

/** The points a pair has from start to end, computed here from the ECB's numbers with decimal.js. */
function expectedPoints(ecb: Map<string, Map<string, string>>, from: string, to: string, start: string, end: string) {
  const out: Array<{ date: string; rate: string }> = [];
  for (const [date, rates] of [...ecb].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (date < start || date > end) continue;
    const f = from === 'EUR' ? '1' : rates.get(from);
    const t = to === 'EUR' ? '1' : rates.get(to);
    if (f === undefined || t === undefined) continue;
    out.push({ date, rate: new Exact(t).div(f).toSignificantDigits(8, Decimal.ROUND_HALF_EVEN).toString() });
  }
  return out;
}

function meanOf(rates: readonly string[]): string {
  return rates
    .reduce((sum, rate) => sum.plus(rate), new Exact(0))
    .div(rates.length)
    .toSignificantDigits(8, Decimal.ROUND_HALF_EVEN)
    .toString();
}

/** ISO week Monday of a date, computed with Date's own weekday. */
function monday(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

function assertProblem(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string, param?: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], PROBLEM);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(body.code, code, response.body);
  assert.equal(body.param, param, response.body);
  assert.equal(typeof body.detail, 'string');
}

describe('/history over dates asked for, grouped and streamed, on the shared ECB history', () => {
  let t: TestApp;
  let ecb: Map<string, Map<string, string>>;
  before(async () => {
    t = await createTestApp();
    ecb = readEcb();
  });
  after(async () => {
    await t.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key, ...headers } });

  test('start and end serve the points between them, with range "<start>/<end>" and their statistics', async () => {
    const response = await get('/api/v1/history?from=EUR&to=USD&start=2025-01-01&end=2025-06-30');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.deepEqual(Object.keys(body), ['pair', 'range', 'count', 'points', 'stats']);
    assert.equal(body.range, '2025-01-01/2025-06-30');
    const expected = expectedPoints(ecb, 'EUR', 'USD', '2025-01-01', '2025-06-30');
    assert.deepEqual(body.points, expected);
    assert.equal(body.points[0].date, '2025-01-02', 'no point on the 1 January holiday');
    assert.equal(body.count, expected.length);
    assert.equal(body.stats.average, meanOf(expected.map((p) => p.rate)));
    const first = new Exact(expected[0]!.rate);
    const last = new Exact(expected.at(-1)!.rate);
    assert.equal(body.stats.changePct, last.minus(first).div(first).times(100).toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN).toNumber());
    assert.equal(response.headers['cache-control'], 'private, max-age=3600');
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  });

  test('a cross pair over a year to date answers exactly, end defaulting to today', async () => {
    const body = (await get('/api/v1/history?from=GBP&to=JPY&start=2026-01-01')).json();
    assert.equal(body.range, '2026-01-01/2026-03-06');
    assert.deepEqual(body.points, expectedPoints(ecb, 'GBP', 'JPY', '2026-01-01', '2026-03-06'));
    assert.equal(body.points.at(-1).date, '2026-03-05');
  });

  test('the same dates as a fixed range give the same points and statistics', async () => {
    const fixed = (await get('/api/v1/history?from=CHF&to=SEK&range=3m')).json();
    const dated = (await get('/api/v1/history?from=CHF&to=SEK&start=2025-12-06&end=2026-03-06')).json();
    assert.deepEqual(dated.points, fixed.points);
    assert.deepEqual(dated.stats, fixed.stats);
  });

  test('a start before a currency left gives the points that exist, and none at all is no_history', async () => {
    // The ECB stopped quoting RUB after 2022-03-01.
    const rub = (await get('/api/v1/history?from=EUR&to=RUB&start=2022-01-01&end=2022-06-30')).json();
    assert.deepEqual(rub.points, expectedPoints(ecb, 'EUR', 'RUB', '2022-01-01', '2022-06-30'));
    assert.equal(rub.points.at(-1).date, '2022-03-01');
    // Five years back from 2026-03-06 is a Saturday: the first point is the Monday after.
    const oldest = (await get('/api/v1/history?from=EUR&to=USD&start=2021-03-06&end=2021-03-12')).json();
    assert.deepEqual(
      oldest.points.map((p: { date: string }) => p.date),
      ['2021-03-08', '2021-03-09', '2021-03-10', '2021-03-11', '2021-03-12'],
    );
    assertProblem(await get('/api/v1/history?from=EUR&to=RUB&start=2023-01-01&end=2023-06-30'), 404, 'no_history');
    assertProblem(await get('/api/v1/history?from=EUR&to=USD&start=2026-01-01&end=2026-01-01'), 404, 'no_history');
  });

  test('every refusal is a 400 naming its parameter', async () => {
    const base = '/api/v1/history?from=EUR&to=USD';
    assertProblem(await get(`${base}&range=1y&start=2025-01-01`), 400, 'invalid_range', 'range');
    assertProblem(await get(`${base}&end=2025-06-30`), 400, 'missing_parameter', 'start');
    assertProblem(await get(`${base}&start=2025-07-01&end=2025-06-30`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&start=2026-03-07`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&start=2026-01-01&end=2026-03-07`), 400, 'invalid_date', 'end');
    assertProblem(await get(`${base}&start=2025-02-29`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&start=2025-1-1`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&start=2025-01-01&end=yesterday`), 400, 'invalid_date', 'end');
    assertProblem(await get(`${base}&start=2025-01-01&start=2025-02-01`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&start=2021-03-05`), 400, 'invalid_date', 'start');
    assertProblem(await get(`${base}&group=year`), 400, 'invalid_range', 'group');
    assertProblem(await get(`${base}&format=xml`), 400, 'invalid_format', 'format');
  });

  test('group=month: each point the exact mean of its month, cut months averaged over the days inside', async () => {
    const url = '/api/v1/history?from=USD&to=JPY&start=2025-01-15&end=2025-04-10';
    const daily = (await get(url)).json();
    const monthly = (await get(`${url}&group=month`)).json();
    assert.deepEqual(Object.keys(monthly), ['pair', 'range', 'group', 'count', 'points', 'stats']);
    assert.equal(monthly.group, 'month');
    assert.equal(monthly.range, '2025-01-15/2025-04-10');
    assert.deepEqual(
      monthly.points.map((p: { date: string }) => p.date),
      ['2025-01-01', '2025-02-01', '2025-03-01', '2025-04-01'],
    );
    const expected = expectedPoints(ecb, 'USD', 'JPY', '2025-01-15', '2025-04-10');
    assert.deepEqual(daily.points, expected);
    for (const point of monthly.points) {
      const days = expected.filter((p) => p.date.slice(0, 7) === point.date.slice(0, 7));
      assert.equal(point.days, days.length, point.date);
      assert.equal(point.rate, meanOf(days.map((p) => p.rate)), point.date);
    }
    // 15–31 January 2025 has 13 ECB days; 1–10 April has 8.
    assert.equal(monthly.points[0].days, 13);
    assert.equal(monthly.points.at(-1).days, 8);
    assert.equal(monthly.count, 4);
    assert.equal(monthly.stats.average, meanOf(monthly.points.map((p: { rate: string }) => p.rate)));
  });

  test('group=week with a range: points dated Mondays, each the mean of its ISO week', async () => {
    const weekly = (await get('/api/v1/history?from=EUR&to=GBP&range=3m&group=week')).json();
    const daily = (await get('/api/v1/history?from=EUR&to=GBP&range=3m')).json();
    assert.equal(weekly.range, '3m');
    assert.equal(weekly.group, 'week');
    let total = 0;
    for (const point of weekly.points) {
      assert.equal(monday(point.date), point.date);
      const days = daily.points.filter((p: { date: string }) => monday(p.date) === point.date);
      assert.equal(point.days, days.length);
      assert.equal(point.rate, meanOf(days.map((p: { rate: string }) => p.rate)));
      total += point.days;
    }
    assert.equal(total, daily.count);
    // 6 December 2025 is a Saturday; its week starts on 1 December and holds no day inside the range.
    assert.equal(weekly.points[0].date, '2025-12-08');
  });

  test('a three-year monthly series is the mean of the same answer’s daily points', async () => {
    const daily = (await get('/api/v1/history?from=AUD&to=CAD&start=2023-03-06')).json();
    const monthly = (await get('/api/v1/history?from=AUD&to=CAD&start=2023-03-06&group=month')).json();
    assert.equal(monthly.count, 37);
    for (const point of monthly.points) {
      const days = daily.points.filter((p: { date: string }) => p.date.slice(0, 7) === point.date.slice(0, 7));
      assert.equal(point.rate, meanOf(days.map((p: { rate: string }) => p.rate)), point.date);
      assert.equal(point.days, days.length);
    }
  });

  test('CSV for dates asked for, and grouped with a days column', async () => {
    const csv = await get('/api/v1/history?from=EUR&to=USD&start=2025-06-02&end=2025-06-06&format=csv');
    assert.equal(csv.statusCode, 200);
    assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(csv.headers['content-disposition'], 'attachment; filename="EURUSD_2025-06-02_2025-06-06.csv"');
    const expected = expectedPoints(ecb, 'EUR', 'USD', '2025-06-02', '2025-06-06');
    assert.equal(csv.body, `date,rate\r\n${expected.map((p) => `${p.date},${p.rate}\r\n`).join('')}`);
    const grouped = await get('/api/v1/history?from=EUR&to=USD&start=2025-06-04&end=2025-07-02&format=csv&group=month');
    assert.equal(grouped.headers['content-disposition'], 'attachment; filename="EURUSD_2025-06-04_2025-07-02_month.csv"');
    const june = expectedPoints(ecb, 'EUR', 'USD', '2025-06-04', '2025-06-30');
    const july = expectedPoints(ecb, 'EUR', 'USD', '2025-07-01', '2025-07-02');
    assert.equal(
      grouped.body,
      `date,rate,days\r\n2025-06-01,${meanOf(june.map((p) => p.rate))},${june.length}\r\n2025-07-01,${meanOf(july.map((p) => p.rate))},${july.length}\r\n`,
    );
    const fixed = await get('/api/v1/history?from=EUR&to=USD&range=1m&format=csv&group=week');
    assert.equal(fixed.headers['content-disposition'], 'attachment; filename="EURUSD_1m_week.csv"');
    assert.match(fixed.body, /^date,rate,days\r\n/);
  });

  test('NDJSON: a point per line, then the statistics; by format or by Accept', async () => {
    const json = (await get('/api/v1/history?from=EUR&to=CHF&range=6m&group=month')).json();
    const response = await get('/api/v1/history?from=EUR&to=CHF&range=6m&group=month&format=ndjson');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/x-ndjson');
    assert.equal(response.headers.vary, 'X-Api-Key, Authorization, Accept-Encoding');
    assert.ok(response.body.endsWith('\n'));
    const lines = response.body.slice(0, -1).split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines.slice(0, -1), json.points);
    assert.deepEqual(lines.at(-1), { pair: 'EURCHF', range: '6m', group: 'month', count: json.count, stats: json.stats });

    const accepted = await get('/api/v1/history?from=EUR&to=CHF&range=6m&group=month', { accept: 'application/x-ndjson' });
    assert.equal(accepted.headers['content-type'], 'application/x-ndjson');
    assert.equal(accepted.body, response.body);
    assert.equal(accepted.headers.vary, 'X-Api-Key, Authorization, Accept, Accept-Encoding');
    const preferJson = await get('/api/v1/history?from=EUR&to=CHF&range=6m', { accept: 'application/x-ndjson;q=0.5, application/json' });
    assert.equal(preferJson.headers['content-type'], 'application/json; charset=utf-8');
    const explicit = await get('/api/v1/history?from=EUR&to=CHF&range=6m&format=json', { accept: 'application/x-ndjson' });
    assert.equal(explicit.headers['content-type'], 'application/json; charset=utf-8');

    const dated = await get('/api/v1/history?from=EUR&to=CHF&start=2025-01-01&end=2025-01-31&format=ndjson');
    const datedLines = dated.body.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(datedLines.slice(0, -1), expectedPoints(ecb, 'EUR', 'CHF', '2025-01-01', '2025-01-31'));
    assert.equal(datedLines.at(-1).range, '2025-01-01/2025-01-31');
  });

  test('conditional GET and compression hold for every new form, kept or not', async () => {
    for (const url of [
      '/api/v1/history?from=EUR&to=NOK&start=2024-01-01&end=2024-12-31',
      '/api/v1/history?from=EUR&to=NOK&start=2024-01-01&group=week&format=ndjson',
      '/api/v1/history?from=EUR&to=NOK&range=1y&group=month&format=ndjson',
    ]) {
      const first = await get(url);
      const again = await get(url);
      assert.match(String(first.headers.etag), /^"[A-Za-z0-9_-]+"$/);
      assert.equal(again.headers.etag, first.headers.etag, url);
      assert.equal(again.body, first.body);
      const unchanged = await get(url, { 'if-none-match': String(first.headers.etag) });
      assert.equal(unchanged.statusCode, 304, url);
      assert.equal(unchanged.body, '');
      const gzip = await get(url, { 'accept-encoding': 'gzip' });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.notEqual(gzip.headers.etag, first.headers.etag);
      assert.equal(gunzipSync(gzip.rawPayload).toString('utf8'), first.body, url);
      const gzipUnchanged = await get(url, { 'accept-encoding': 'gzip', 'if-none-match': String(gzip.headers.etag) });
      assert.equal(gzipUnchanged.statusCode, 304);
    }
    // Forms differ: a grouped answer has its own ETag.
    const plain = await get('/api/v1/history?from=EUR&to=NOK&range=1y');
    const grouped = await get('/api/v1/history?from=EUR&to=NOK&range=1y&group=month');
    assert.notEqual(plain.headers.etag, grouped.headers.etag);
  });

  test('dates asked for are not kept; the fixed ranges are, per format and group', async () => {
    const bodies = createHistoryBodies(t.deps.book);
    const monthly = await bodies.render('EUR', 'USD', '1y', 'ndjson', 'identity', 'month');
    assert.equal(bodies.peek('EUR', 'USD', '1y', 'ndjson', 'identity', 'month'), monthly);
    assert.equal(bodies.peek('EUR', 'USD', '1y', 'ndjson', 'identity'), undefined, 'ungrouped is another form');
    assert.equal(bodies.peek('EUR', 'USD', '1y', 'json', 'identity', 'month'), undefined, 'JSON is another form');
    assert.equal(await bodies.render('EUR', 'USD', '1y', 'ndjson', 'identity', 'month'), monthly, 'answered from what is held');
    const window = { start: '2025-01-01', end: '2025-12-31' };
    const dated = await bodies.render('EUR', 'USD', window, 'json');
    const again = await bodies.render('EUR', 'USD', window, 'json');
    assert.notEqual(again, dated, 'computed again');
    assert.equal(again.etag, dated.etag);
    assert.equal(dated.key, -1);
  });
});

describe('historyFormat', () => {
  test('format wins; without it, Accept chooses NDJSON only when it ranks above JSON', () => {
    assert.equal(historyFormat('csv', 'application/x-ndjson'), 'csv');
    assert.equal(historyFormat('json', 'application/x-ndjson'), 'json');
    assert.equal(historyFormat(undefined, undefined), 'json');
    assert.equal(historyFormat(undefined, '*/*'), 'json');
    assert.equal(historyFormat(undefined, 'application/x-ndjson'), 'ndjson');
    assert.equal(historyFormat(undefined, 'Application/X-NDJSON; q=0.9'), 'ndjson');
    // An exact type outranks the wildcards at the same q.
    assert.equal(historyFormat(undefined, 'application/x-ndjson, */*'), 'ndjson');
    assert.equal(historyFormat(undefined, 'application/x-ndjson;q=0.5, */*'), 'json');
    assert.equal(historyFormat(undefined, 'application/x-ndjson, application/json'), 'json');
    assert.equal(historyFormat(undefined, 'application/x-ndjson, application/json;q=0.8'), 'ndjson');
    assert.equal(historyFormat(undefined, 'text/html, application/x-ndjson;q=0.1'), 'ndjson');
    assert.equal(historyFormat(undefined, 'text/csv'), 'csv');
    assert.equal(historyFormat(undefined, 'text/*, application/json;q=0.5'), 'csv');
    assert.equal(historyFormat(undefined, 'text/csv, application/x-ndjson'), 'ndjson');
    assert.equal(historyFormat(undefined, 'application/*'), 'json');
  });

  test('without format, an Accept that admits none of JSON, NDJSON and CSV gets none', () => {
    assert.equal(historyFormat(undefined, 'application/x-ndjson;q=0'), undefined);
    assert.equal(historyFormat(undefined, 'application/xml'), undefined);
    assert.equal(historyFormat(undefined, 'application/json;q=0, text/*;q=0, application/x-ndjson;q=0'), undefined);
    assert.equal(historyFormat('json', 'application/xml'), 'json');
  });
});
