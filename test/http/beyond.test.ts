/**
 * The endpoints beyond the interface (SPEC §10): the currencies list, a rate on a date, many
 * targets at once and the key's usage, on a SQLite file holding the shared ECB history, with the
 * clock at 2026-03-06T12:00:00Z (a Friday, before that day's fixing).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isoCurrency } from '../../src/core/currencies.js';
import { createTestApp, issueKey, type TestApp } from '../helper.js';

const PROBLEM = 'application/problem+json; charset=utf-8';

const dayBefore = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

describe('beyond the interface, on the shared ECB history', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  const get = (url: string, headers: Record<string, string> = {}, key = t.key) =>
    t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });

  function assertProblem(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string, param?: string) {
    assert.equal(response.statusCode, status, response.body);
    assert.equal(response.headers['content-type'], PROBLEM);
    const body = JSON.parse(response.body) as Record<string, unknown>;
    assert.equal(body.code, code);
    assert.equal(body.param, param);
    return body;
  }

  /** The 5-year history points of a pair, by date. */
  async function points(from: string, to: string): Promise<Map<string, string>> {
    const history = (await get(`/api/v1/history?from=${from}&to=${to}&range=5y`)).json() as { points: Array<{ date: string; rate: string }> };
    return new Map(history.points.map((p) => [p.date, p.rate]));
  }

  describe('GET /api/v1/currencies', () => {
    test('lists exactly what /rate answers, sorted, with ISO names and minor units, and counts once', async () => {
      const key = await issueKey(t.deps);
      const response = await get('/api/v1/currencies', {}, key);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['x-ratelimit-remaining'], '999');
      assert.equal(response.headers['cache-control'], 'private, max-age=600');
      const { currencies } = response.json() as { currencies: Array<Record<string, unknown>> };
      const codes = currencies.map((c) => c.code as string);
      assert.deepEqual(codes, [...codes].sort());
      assert.ok(codes.includes('EUR') && codes.includes('USD') && codes.includes('JPY'));
      // RUB has history in the file (until 2022-03-01) but no current rate: /rate refuses it, so it is not listed.
      assert.ok(!codes.includes('RUB'));
      assertProblem(await get('/api/v1/rate?from=EUR&to=RUB'), 400, 'unsupported_currency', 'to');
      for (const c of currencies) {
        const iso = isoCurrency(c.code as string)!;
        assert.equal(c.name, iso.name);
        assert.equal(c.minorUnits, iso.minorUnits);
        assert.deepEqual(c.providers, ['file']);
        assert.equal(c.onRequest, false);
        assert.equal(c.lastDate, '2026-03-05');
        assert.equal((await get(`/api/v1/rate?from=${c.code}&to=EUR`)).statusCode, 200, `/rate answers ${c.code}`);
      }
      const usd = currencies.find((c) => c.code === 'USD')!;
      assert.deepEqual(usd, { code: 'USD', name: 'US Dollar', minorUnits: 2, servedBy: 'file', providers: ['file'], firstDate: usd.firstDate, lastDate: '2026-03-05', onRequest: false });
      // The oldest day a history may start on (the store keeps a margin before it): a rate on it,
      // a history from it, and none from the day before.
      const first = String(usd.firstDate);
      assert.equal(first, '2021-03-08', 'the first business day on or after 2021-03-06, 5 years before the clock');
      assert.match((await get(`/api/v1/rate?from=EUR&to=USD&date=${first}`)).json().asOf, new RegExp(`^${first}T15:00:00Z$`));
      const history = await get(`/api/v1/history?from=EUR&to=USD&start=${first}&end=${first}`);
      assert.equal(history.statusCode, 200, history.body);
      assert.equal(history.json().points[0].date, first);
      assertProblem(await get(`/api/v1/history?from=EUR&to=USD&start=${dayBefore(dayBefore(dayBefore(first)))}`), 400, 'invalid_date', 'start');
      const again = await get('/api/v1/currencies', { 'if-none-match': String(response.headers.etag) }, key);
      assert.equal(again.statusCode, 304);
    });
  });

  describe('date= on /rate and /convert', () => {
    test('a weekend, a holiday, the first day of the 5y history and today answer the history point of the day on or before', async () => {
      const history = await points('GBP', 'JPY');
      const first = history.keys().next().value!;
      const cases: Array<[string, string]> = [
        ['2026-02-28', '2026-02-27'], // Saturday → Friday
        ['2026-03-01', '2026-02-27'], // Sunday → Friday
        ['2025-12-25', '2025-12-24'], // Christmas, a TARGET holiday
        ['2025-04-21', '2025-04-17'], // Easter Monday, after Good Friday: back to Thursday
        [first, first],
        ['2026-03-06', '2026-03-05'], // today, before its fixing: yesterday's
      ];
      for (const [date, day] of cases) {
        const response = await get(`/api/v1/rate?from=gbp&to=jpy&date=${date}`);
        assert.equal(response.statusCode, 200, `${date}: ${response.body}`);
        const body = response.json();
        assert.ok(history.has(day), `${day} is a history point`);
        // ECB: 16:00 Frankfurt time, 15:00Z in winter, 14:00Z in summer.
        const hour = day >= '2025-03-30' && day < '2025-10-26' ? 14 : day > '2025-10-26' ? 15 : undefined;
        if (hour !== undefined) assert.equal(body.asOf, `${day}T${hour}:00:00Z`);
        else assert.match(body.asOf, new RegExp(`^${day}T1[45]:00:00Z$`));
        assert.deepEqual(body, { pair: 'GBPJPY', from: 'GBP', to: 'JPY', rate: history.get(day), asOf: body.asOf, stale: false }, date);
        assert.equal(response.headers['last-modified'], new Date(body.asOf).toUTCString());
        const conversion = (await get(`/api/v1/convert?from=GBP&to=JPY&amount=100&date=${date}`)).json();
        assert.equal(conversion.rate, body.rate);
        assert.equal(conversion.asOf, body.asOf);
      }
    });

    test('a settled past date is cached for long; a day still open to corrections or today may still change', async () => {
      // Today is 2026-03-06: a day before 2026-02-27 is past the 7 days in which a correction is still served.
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD&date=2026-02-26')).headers['cache-control'], 'private, max-age=31536000, immutable');
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD&date=2026-02-27')).headers['cache-control'], 'private, max-age=600');
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD&date=2026-03-02')).headers['cache-control'], 'private, max-age=600');
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD&date=2026-03-06')).headers['cache-control'], 'private, max-age=600');
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD&date=2026-03-05')).headers['cache-control'], 'private, max-age=600');
    });

    test('a converted amount on a date is amount × that day\'s rate', async () => {
      const response = await get('/api/v1/convert?from=EUR&to=JPY&amount=2.5&date=2025-12-25');
      const rate = (await points('EUR', 'JPY')).get('2025-12-24')!;
      const body = response.json();
      assert.equal(body.rate, rate);
      assert.equal(body.stale, false);
      assert.equal(body.asOf, '2025-12-24T15:00:00Z');
    });

    test('a replaced currency is answered on its past dates with its market numbers, and from its replacement at the legal ratio', async () => {
      const before = (await get('/api/v1/rate?from=EUR&to=BGN&date=2025-12-31&expand=provenance')).json();
      assert.equal(before.asOf, '2025-12-31T15:00:00Z');
      assert.equal(before.rate, '1.9558');
      assert.equal(before.rate, (await points('EUR', 'BGN')).get('2025-12-31'));
      assert.equal(before.provenance.replaced, undefined);
      // Bulgaria adopted the euro on 2026-01-01: never the last market number, the irrevocable rate.
      const after = (await get('/api/v1/rate?from=EUR&to=BGN&date=2026-02-01&expand=provenance')).json();
      assert.equal(after.rate, '1.95583');
      assert.equal(after.stale, false);
      assert.equal(after.provenance.replaced[0].ratio, '1.95583');
      assert.equal(after.provenance.replaced[0].successor, 'EUR');
      assert.match(after.provenance.replaced[0].reference, /irrevocable conversion rate/);
      assert.equal((await points('EUR', 'BGN')).get('2026-01-30'), '1.95583');
    });

    test('tomorrow, malformed and repeated dates are 400 invalid_date; before the first stored day 404 no_history', async () => {
      for (const date of ['2026-03-07', '2099-01-01', '2026-02-30', '2026-3-1', '20260301', 'yesterday', '', '2026-03-01T00:00:00Z']) {
        assertProblem(await get(`/api/v1/rate?from=EUR&to=USD&date=${encodeURIComponent(date)}`), 400, 'invalid_date', 'date');
        assertProblem(await get(`/api/v1/convert?from=EUR&to=USD&amount=1&date=${encodeURIComponent(date)}`), 400, 'invalid_date', 'date');
      }
      assertProblem(await get('/api/v1/rate?from=EUR&to=USD&date=2026-03-02&date=2026-03-03'), 400, 'invalid_date', 'date');
      assertProblem(await get('/api/v1/rate?from=EUR&to=USD&date=1999-01-04'), 404, 'no_history');
      // A date on history is no parameter of history: ignored, as unknown parameters are.
      assert.equal((await get('/api/v1/history?from=EUR&to=USD&range=1m&date=nonsense')).statusCode, 200);
    });
  });

  describe('GET /api/v1/rates', () => {
    test('every entry equals /rate for its pair; without to, every listed currency in force but from', async () => {
      // A replaced currency (listed with replacedBy) is answered when named, but not among all rates.
      const listed = ((await get('/api/v1/currencies')).json() as { currencies: Array<{ code: string; replacedBy?: object }> }).currencies
        .filter((c) => c.replacedBy === undefined)
        .map((c) => c.code);
      for (const date of [undefined, '2026-03-01', '2025-12-25']) {
        const suffix = date ? `&date=${date}` : '';
        const response = await get(`/api/v1/rates?from=gbp${suffix}`);
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json() as { from: string; rates: Array<{ to: string }> };
        assert.equal(body.from, 'GBP');
        assert.deepEqual(Object.keys(body), ['from', 'rates']);
        assert.deepEqual(
          body.rates.map((r) => r.to),
          listed.filter((c) => c !== 'GBP'),
        );
        for (const entry of body.rates) {
          const { pair: _pair, from: _from, ...single } = (await get(`/api/v1/rate?from=GBP&to=${entry.to}${suffix}`)).json();
          assert.deepEqual(entry, single, `GBP→${entry.to} ${date ?? 'live'}`);
        }
      }
    });

    test('with an amount, each entry equals /convert for its pair, sorted by to, counting once', async () => {
      const key = await issueKey(t.deps);
      const response = await get('/api/v1/rates?from=USD&to=jpy,EUR,CHF&amount=0100.5&date=2026-02-22', {}, key);
      assert.equal(response.headers['x-ratelimit-remaining'], '999');
      assert.equal(response.headers['cache-control'], 'private, max-age=31536000, immutable');
      const body = response.json() as { from: string; amount: string; rates: Array<Record<string, unknown>> };
      assert.equal(body.amount, '100.5');
      assert.deepEqual(
        body.rates.map((r) => r.to),
        ['CHF', 'EUR', 'JPY'],
      );
      for (const entry of body.rates) {
        const { from: _from, amount: _amount, ...single } = (await get(`/api/v1/convert?from=USD&to=${entry.to}&amount=100.5&date=2026-02-22`)).json();
        assert.deepEqual(entry, single);
        assert.match(String(entry.asOf), /^2026-02-20T/);
      }
    });

    test('each entry with an amount equals /convert', async () => {
      const body = (await get('/api/v1/rates?from=USD&to=jpy,EUR,CHF,USD&amount=0100.5')).json() as { rates: Array<Record<string, unknown>> };
      assert.deepEqual(
        body.rates.map((r) => r.to),
        ['CHF', 'EUR', 'JPY', 'USD'],
      );
      for (const entry of body.rates) {
        const { from: _from, amount, ...single } = (await get(`/api/v1/convert?from=USD&to=${entry.to}&amount=0100.5`)).json();
        assert.equal(amount, '100.5');
        assert.deepEqual(entry, single);
      }
    });

    test('a bad, unsupported or repeated code in to is a 400 naming it; too many codes too', async () => {
      assert.match(String(assertProblem(await get('/api/v1/rates?from=EUR&to=USD,XYZ'), 400, 'invalid_currency', 'to').detail), /XYZ/);
      assert.match(String(assertProblem(await get('/api/v1/rates?from=EUR&to=USD,NGN'), 400, 'unsupported_currency', 'to').detail), /NGN/);
      assert.match(String(assertProblem(await get('/api/v1/rates?from=EUR&to=USD,gbp,usd'), 400, 'invalid_currency', 'to').detail), /USD/);
      assertProblem(await get('/api/v1/rates?from=EUR&to=USD,'), 400, 'invalid_currency', 'to');
      assertProblem(await get('/api/v1/rates?from=EUR&to=USD&to=GBP'), 400, 'invalid_currency', 'to');
      // ISO 4217 has fewer than 201 codes: the count is checked before the codes.
      const many = Array<string>(201).fill('USD').join(',');
      assert.match(String(assertProblem(await get(`/api/v1/rates?from=EUR&to=${many}`), 400, 'invalid_currency', 'to').detail), /200/);
      assertProblem(await get('/api/v1/rates?from=XYZ'), 400, 'invalid_currency', 'from');
      assertProblem(await get('/api/v1/rates?to=USD'), 400, 'missing_parameter', 'from');
      assertProblem(await get('/api/v1/rates?from=EUR&amount=-1'), 400, 'invalid_amount', 'amount');
      assertProblem(await get('/api/v1/rates?from=EUR&date=2026-03-07'), 400, 'invalid_date', 'date');
      assertProblem(await get('/api/v1/rates?from=EUR&to=USD&date=2000-01-03'), 404, 'no_history');
    });
  });

  describe('the contract as clients see it', () => {
    test('If-Modified-Since gets 304 at or after Last-Modified when no If-None-Match is sent; history has Last-Modified', async () => {
      const rate = await get('/api/v1/rate?from=EUR&to=USD');
      const lastModified = String(rate.headers['last-modified']);
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD', { 'if-modified-since': lastModified })).statusCode, 304);
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD', { 'if-modified-since': 'Fri, 06 Mar 2026 00:00:00 GMT' })).statusCode, 304);
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD', { 'if-modified-since': 'Thu, 05 Mar 2026 14:59:59 GMT' })).statusCode, 200);
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD', { 'if-modified-since': 'not a date' })).statusCode, 200);
      // If-None-Match wins: a stale ETag is a 200 whatever If-Modified-Since says.
      assert.equal((await get('/api/v1/rate?from=EUR&to=USD', { 'if-modified-since': lastModified, 'if-none-match': '"other"' })).statusCode, 200);
      const history = await get('/api/v1/history?from=EUR&to=GBP&range=1m');
      assert.equal(history.headers['last-modified'], 'Thu, 05 Mar 2026 15:00:00 GMT');
      const unchanged = await get('/api/v1/history?from=EUR&to=GBP&range=1m', { 'if-modified-since': String(history.headers['last-modified']) });
      assert.equal(unchanged.statusCode, 304);
      assert.equal(unchanged.body, '');
      assert.equal(unchanged.headers.etag, history.headers.etag);
      const dated = await get('/api/v1/rate?from=EUR&to=USD&date=2026-03-01', { 'if-modified-since': 'Fri, 27 Feb 2026 15:00:00 GMT' });
      assert.equal(dated.statusCode, 304);
    });

    test('a 401 names its scheme; a 405 is readable cross-origin', async () => {
      const unauthorized = await t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD' });
      assert.equal(unauthorized.statusCode, 401);
      assert.equal(unauthorized.headers['www-authenticate'], 'ApiKey realm="exrates", header="X-Api-Key", query="apikey"');
      const notAllowed = await t.app.inject({ method: 'POST', url: '/api/v1/rates?from=EUR', headers: { origin: 'https://shop.example' } });
      assert.equal(notAllowed.statusCode, 405);
      assert.equal(notAllowed.headers['access-control-allow-origin'], '*');
      assert.equal(notAllowed.headers.allow, 'GET, HEAD');
    });

    test('the document names its shapes, declares HEAD, the headers sent, 304 and the operations endpoints', async () => {
      const doc = (await t.app.inject('/api/v1/openapi.json')).json();
      assert.deepEqual(Object.keys(doc.components.schemas).sort(), ['CheckedNumber', 'Conversion', 'CrossCheckOutlier', 'Currency', 'CurrencyList', 'History', 'Problem', 'Provenance', 'Provider', 'ProviderList', 'PublishedNumber', 'Rate', 'Rates', 'RatesEntry', 'ReplacedCurrency', 'SetAsideNumber', 'Usage']);
      const rate = doc.paths['/api/v1/rate'];
      assert.deepEqual(rate.get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Rate' });
      assert.deepEqual(rate.get.responses['400'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' });
      assert.ok(rate.head, 'HEAD is declared');
      for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag', 'Last-Modified', 'Cache-Control', 'Vary']) {
        assert.ok(rate.get.responses['200'].headers[header], `200 declares ${header}`);
        assert.ok(rate.get.responses['304'].headers[header], `304 declares ${header}`);
      }
      assert.ok(rate.get.responses['429'].headers['Retry-After']);
      assert.ok(rate.get.responses['401'].headers['WWW-Authenticate']);
      // The CSV download's file name is declared where CSV is the answer: /history.csv (format=csv sends the same).
      assert.ok(doc.paths['/api/v1/history.csv'].get.responses['200'].headers['Content-Disposition']);
      for (const path of ['/healthz', '/readyz']) assert.deepEqual(doc.paths[path].get.security, [], `${path} is public`);
      assert.equal(doc.paths['/metrics'], undefined, '/metrics is not on the public port without EXRATES_METRICS_TOKEN');
      assert.equal(JSON.stringify(doc).match(/"invalid_currency"/g)?.length, 1, 'the error codes are listed once');
    });

    test('the operations endpoints answer as before', async () => {
      assert.deepEqual((await t.app.inject('/healthz')).json(), { status: 'ok' });
      const ready = (await t.app.inject('/readyz')).json();
      assert.equal(ready.status, 'ready');
      assert.deepEqual(Object.keys(ready.providers[0]), ['id', 'latestDay', 'stale', 'lastSuccessAt', 'lastFailureAt', 'lastError', 'crossCheck']);
      assert.equal((await t.app.inject('/metrics')).statusCode, 404);
      assert.match(await t.deps.metricsText(), /^# HELP/m);
    });
  });

  describe('GET /api/v1/usage', () => {
    test('reports the key\'s quota as its headers do, does not count, and is never stored by a shared cache', async () => {
      const key = await issueKey(t.deps);
      const fresh = await get('/api/v1/usage', {}, key);
      assert.equal(fresh.statusCode, 200);
      assert.deepEqual(fresh.json(), { tier: 'free', limit: 1000, used: 0, remaining: 1000, resetsAt: '2026-03-07T00:00:00Z' });
      assert.equal(fresh.headers['cache-control'], 'no-store');
      assert.equal(fresh.headers['x-ratelimit-remaining'], '1000');
      assert.equal(fresh.headers['x-ratelimit-reset'], String(Date.parse('2026-03-07T00:00:00Z') / 1000));
      const counted = await get('/api/v1/rate?from=EUR&to=USD', {}, key);
      await get('/api/v1/rate?from=EUR&to=ZZZ', {}, key);
      for (let i = 0; i < 3; i++) {
        const usage = await get('/api/v1/usage', {}, key);
        assert.deepEqual(usage.json(), { tier: 'free', limit: 1000, used: 2, remaining: 998, resetsAt: '2026-03-07T00:00:00Z' });
        assert.equal(usage.headers['x-ratelimit-remaining'], String(Number(counted.headers['x-ratelimit-remaining']) - 1));
      }
      const pro = await issueKey(t.deps, 'pro');
      assert.equal((await get('/api/v1/usage', {}, pro)).json().tier, 'pro');
      assertProblem(await t.app.inject({ method: 'GET', url: '/api/v1/usage' }), 401, 'unauthorized');
    });
  });
});

describe('usage past the quota', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_QUOTA_FREE: '1' });
  });
  after(async () => {
    await t.close();
  });

  test('is still answered when the quota is used up', async () => {
    const send = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key } });
    assert.equal((await send('/api/v1/rate?from=EUR&to=USD')).statusCode, 200);
    assert.equal((await send('/api/v1/rate?from=EUR&to=USD')).statusCode, 429);
    const usage = await send('/api/v1/usage');
    assert.equal(usage.statusCode, 200);
    assert.deepEqual(usage.json(), { tier: 'free', limit: 1, used: 1, remaining: 0, resetsAt: '2026-03-07T00:00:00Z' });
  });
});
