import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { revokeApiKeys } from '../../src/core/api-keys.js';
import { utcDay } from '../../src/core/time.js';
import { createTestApp, issueKey, type TestApp } from '../helper.js';
import { send } from '../support/http.js';
import { listenApp } from '../support/ports.js';

const PROBLEM = 'application/problem+json; charset=utf-8';

function assertProblem(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string, param?: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], PROBLEM);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(body.type, `/problems/${code}`);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  assert.doesNotMatch(String(body.detail), /\n\s+at |node_modules|\.ts:\d/, 'no stack trace in detail');
  if (param !== undefined) assert.equal(body.param, param);
  return body;
}

describe('HTTP API on the shared ECB history', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key, ...headers } });

  test('rate answers the fields of the interface, with rate-limit and caching headers', async () => {
    const response = await get('/api/v1/rate?from=eur&to=usd');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1618', asOf: '2026-03-05T15:00:00Z', stale: false });
    assert.equal(response.headers['x-ratelimit-limit'], '1000');
    assert.match(String(response.headers['x-ratelimit-remaining']), /^\d+$/);
    assert.equal(response.headers['x-ratelimit-reset'], String(Date.parse('2026-03-07T00:00:00Z') / 1000));
    assert.match(String(response.headers.etag), /^"[A-Za-z0-9_-]+"$/);
    // The fixed clock stands at 12:00:00, a multiple of the 600 s interval: the next refresh is 600 s away.
    assert.equal(response.headers['cache-control'], 'private, max-age=600');
    assert.equal(response.headers['last-modified'], 'Thu, 05 Mar 2026 15:00:00 GMT');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['x-powered-by'], undefined);
  });

  test('cross rates go through EUR exactly and are rounded once', async () => {
    // 2026-03-05: GBP 0.8695, JPY 183.03 per EUR → 183.03 / 0.8695 = 210.500287…
    const response = await get('/api/v1/rate?from=GBP&to=JPY');
    assert.equal(response.json().rate, '210.50029');
    const same = await get('/api/v1/rate?from=JPY&to=jpy');
    assert.equal(same.json().rate, '1');
  });

  test('convert multiplies by the returned rate and rounds to minor units', async () => {
    const response = await get('/api/v1/convert?from=EUR&to=USD&amount=0100.5');
    assert.equal(response.statusCode, 200);
    // 100.5 × 1.1618 = 116.7609 → 116.76
    assert.deepEqual(response.json(), {
      from: 'EUR',
      to: 'USD',
      amount: '100.5',
      rate: '1.1618',
      result: '116.76',
      asOf: '2026-03-05T15:00:00Z',
      stale: false,
    });
    const yen = await get('/api/v1/convert?from=EUR&to=JPY&amount=2.5');
    // 2.5 × 183.03 = 457.575 → 458 (JPY has no decimals)
    assert.equal(yen.json().result, '458');
  });

  test('history serves points and statistics, JSON by default for 1y', async () => {
    const response = await get('/api/v1/history?from=EUR&to=USD');
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(Object.keys(body), ['pair', 'range', 'count', 'points', 'stats']);
    assert.equal(body.range, '1y');
    assert.equal(body.count, body.points.length);
    assert.equal(body.points[0].date >= '2025-03-06', true);
    assert.equal(body.points.at(-1).date, '2026-03-05');
    assert.equal(body.points.at(-1).rate, '1.1618');
    assert.equal(response.headers['cache-control'], 'private, max-age=3600');
    assert.equal(response.headers.vary, 'X-Api-Key, Authorization, Accept, Accept-Encoding');
  });

  test('history as CSV, with a file name', async () => {
    const response = await get('/api/v1/history?from=GBP&to=USD&range=1m&format=csv');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(response.headers['content-disposition'], 'attachment; filename="GBPUSD_1m.csv"');
    const lines = response.body.split('\r\n');
    assert.equal(lines[0], 'date,rate');
    assert.equal(lines.at(-1), '');
    const json = (await get('/api/v1/history?from=GBP&to=USD&range=1m')).json();
    assert.deepEqual(
      lines.slice(1, -1),
      json.points.map((p: { date: string; rate: string }) => `${p.date},${p.rate}`),
    );
  });

  test('history is compressed with br when accepted, with its own ETag', async () => {
    const plain = await get('/api/v1/history?from=EUR&to=CHF&range=5y');
    const br = await get('/api/v1/history?from=EUR&to=CHF&range=5y', { 'accept-encoding': 'br, gzip' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body);
    assert.notEqual(br.headers.etag, plain.headers.etag);
  });

  test('history asked for gzip first, then plain, answers each in its own form', async () => {
    const gzip = await get('/api/v1/history?from=CHF&to=GBP&range=1y', { 'accept-encoding': 'gzip' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    const plain = await get('/api/v1/history?from=CHF&to=GBP&range=1y');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(gunzipSync(gzip.rawPayload).toString('utf8'), plain.body);
    assert.equal(JSON.parse(plain.body).pair, 'CHFGBP');
    assert.equal(gzip.headers.etag, `${String(plain.headers.etag).slice(0, -1)}-gzip"`);
    const again = await get('/api/v1/history?from=CHF&to=GBP&range=1y', { 'accept-encoding': 'gzip' });
    assert.deepEqual(again.rawPayload, gzip.rawPayload);
    const unchanged = await get('/api/v1/history?from=CHF&to=GBP&range=1y', { 'accept-encoding': 'gzip', 'if-none-match': String(gzip.headers.etag) });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.headers.etag, gzip.headers.etag);
    // The plain ETag does not match the compressed representation.
    const other = await get('/api/v1/history?from=CHF&to=GBP&range=1y', { 'accept-encoding': 'gzip', 'if-none-match': String(plain.headers.etag) });
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers['content-encoding'], 'gzip');
  });

  test('a matching If-None-Match gets 304 and still counts', async () => {
    const first = await get('/api/v1/rate?from=USD&to=CHF');
    const etag = String(first.headers.etag);
    const second = await get('/api/v1/rate?from=USD&to=CHF', { 'if-none-match': etag });
    assert.equal(second.statusCode, 304);
    assert.equal(second.body, '');
    assert.equal(second.headers.etag, etag);
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
  });

  test('HEAD answers the headers of GET without a body', async () => {
    const response = await t.app.inject({ method: 'HEAD', url: '/api/v1/rate?from=EUR&to=GBP', headers: { 'x-api-key': t.key } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, '');
    assert.ok(response.headers.etag);
  });

  test('invalid currencies, amounts, ranges and formats are 400 problems naming the parameter', async () => {
    assertProblem(await get('/api/v1/rate?from=US&to=EUR'), 400, 'invalid_currency', 'from');
    assertProblem(await get('/api/v1/rate?from=USD&to=XYZ'), 400, 'invalid_currency', 'to');
    assertProblem(await get('/api/v1/rate?from=U%C3%9FD&to=EUR'), 400, 'invalid_currency', 'from');
    assertProblem(await get('/api/v1/rate?from=USD&from=GBP&to=EUR'), 400, 'invalid_currency', 'from');
    assertProblem(await get('/api/v1/rate?from=USD&to=NGN'), 400, 'unsupported_currency', 'to');
    assertProblem(await get('/api/v1/rate?to=EUR'), 400, 'missing_parameter', 'from');
    assertProblem(await get('/api/v1/convert?from=EUR&to=USD'), 400, 'missing_parameter', 'amount');
    for (const amount of ['-1', '1e3', '1%2C000', '%201', '1%20', '', '1.', '.5', '1234567890123456789', '1.1234567890123', '+1', '0x10', '１']) {
      assertProblem(await get(`/api/v1/convert?from=EUR&to=USD&amount=${amount}`), 400, 'invalid_amount', 'amount');
    }
    assertProblem(await get('/api/v1/convert?from=EUR&to=USD&amount=1&amount=2'), 400, 'invalid_amount', 'amount');
    assertProblem(await get('/api/v1/history?from=EUR&to=USD&range=2y'), 400, 'invalid_range', 'range');
    assertProblem(await get('/api/v1/history?from=EUR&to=USD&range=1m&range=1y'), 400, 'invalid_range', 'range');
    assertProblem(await get('/api/v1/history?from=EUR&to=USD&format=xml'), 400, 'invalid_format', 'format');
  });

  test('the largest accepted amount converts exactly', async () => {
    const response = await get('/api/v1/convert?from=EUR&to=EUR&amount=999999999999999999.999999999999');
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().result, '1000000000000000000.00');
  });

  test('unknown query parameters are ignored', async () => {
    const response = await get('/api/v1/rate?from=EUR&to=USD&foo=bar');
    assert.equal(response.statusCode, 200);
  });

  test('a pair without points in the range is 404 no_history', async () => {
    // The ECB stopped quoting RUB after 2022-03-01, before the last year.
    assertProblem(await get('/api/v1/history?from=EUR&to=RUB&range=1y'), 404, 'no_history');
    const years = await get('/api/v1/history?from=EUR&to=RUB&range=5y');
    assert.equal(years.statusCode, 200);
    assert.equal(years.json().points.at(-1).date, '2022-03-01');
  });

  test('errors to a valid key still carry the rate-limit headers and count', async () => {
    const before = Number((await get('/api/v1/rate?from=EUR&to=USD')).headers['x-ratelimit-remaining']);
    const bad = await get('/api/v1/rate?from=EUR&to=ZZZ');
    assert.equal(bad.statusCode, 400);
    assert.equal(Number(bad.headers['x-ratelimit-remaining']), before - 1);
  });

  test('a path under /api/ that names nothing (404) and another method (405) count against a valid key too, and carry its headers', async () => {
    const remaining = async () => Number((await get('/api/v1/usage')).headers['x-ratelimit-remaining']);
    const requests = [
      { method: 'GET', url: '/api/v1/nothing?from=EUR', status: 404, code: 'not_found' },
      { method: 'HEAD', url: '/api/v2/rate', status: 404, code: undefined },
      { method: 'DELETE', url: '/api/v1/unknown', status: 404, code: 'not_found' },
      { method: 'POST', url: '/api/v1/rate?from=EUR&to=USD', status: 405, code: 'method_not_allowed' },
      { method: 'PUT', url: '/api/v1/usage', status: 405, code: 'method_not_allowed' },
    ] as const;
    for (const { method, url, status, code } of requests) {
      const before = await remaining();
      const response = await t.app.inject({ method, url, headers: { 'x-api-key': t.key } });
      assert.equal(response.statusCode, status, `${method} ${url}`);
      if (code) assert.equal(response.json().code, code);
      assert.equal(Number(response.headers['x-ratelimit-remaining']), before - 1, `${method} ${url} counts`);
      assert.ok(response.headers['x-ratelimit-limit'] && response.headers['x-ratelimit-reset'], `${method} ${url} carries the quota headers`);
      assert.equal(await remaining(), before - 1, `${method} ${url} is counted once`);
      // Without a key: the same answer, nothing counted, no quota headers.
      const anonymous = await t.app.inject({ method, url });
      assert.equal(anonymous.statusCode, status);
      assert.equal(anonymous.headers['x-ratelimit-remaining'], undefined);
    }
    // Over a real socket, where the server hands exact keyed paths to the keyed API itself.
    const base = await listenApp(t.app);
    const before = await remaining();
    const posted = await send(`${base}/api/v1/convert?from=EUR&to=USD&amount=1`, { method: 'POST', headers: { 'x-api-key': t.key } });
    assert.equal(posted.status, 405);
    assert.equal(posted.headers.allow, 'GET, HEAD');
    assert.equal(Number(posted.headers['x-ratelimit-remaining']), before - 1);
    const unknown = await send(`${base}/api/v1/rate/`, { headers: { 'x-api-key': t.key } });
    assert.equal(unknown.status, 404);
    assert.equal(Number(unknown.headers['x-ratelimit-remaining']), before - 2);
    // A path outside /api/ is no API request: a key sent with it is not counted.
    const outside = await send(`${base}/nothing`, { headers: { 'x-api-key': t.key } });
    assert.equal(outside.status, 404);
    assert.equal(outside.headers['x-ratelimit-remaining'], undefined);
    assert.equal(await remaining(), before - 2);
  });

  test('missing, malformed, unknown and revoked keys get the same 401', async () => {
    const revoked = await issueKey(t.deps);
    await revokeApiKeys(t.deps.keys, revoked.slice(0, 12), t.deps.clock);
    const bodies = new Set<string>();
    for (const headers of [{}, { 'x-api-key': 'nope' }, { 'x-api-key': `exr_${'A'.repeat(32)}` }, { 'x-api-key': revoked }]) {
      const response = await t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers });
      assertProblem(response, 401, 'unauthorized');
      assert.match(JSON.parse(response.body).detail, /keys@example\.org/);
      assert.equal(response.headers['x-ratelimit-remaining'], undefined);
      bodies.add(response.body);
    }
    assert.equal(bodies.size, 1);
  });

  test('the key may come as a query parameter; the header wins when both are sent', async () => {
    const query = await t.app.inject({ method: 'GET', url: `/api/v1/rate?from=EUR&to=USD&apikey=${t.key}` });
    assert.equal(query.statusCode, 200);
    const headerWins = await t.app.inject({ method: 'GET', url: `/api/v1/rate?from=EUR&to=USD&apikey=${t.key}`, headers: { 'x-api-key': 'bad' } });
    assert.equal(headerWins.statusCode, 401);
    const goodHeader = await t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD&apikey=bad', headers: { 'x-api-key': t.key } });
    assert.equal(goodHeader.statusCode, 200);
  });

  test('unknown routes are 404 problems and other methods 405 with Allow', async () => {
    assertProblem(await get('/api/v1/nothing'), 404, 'not_found');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const response = await t.app.inject({ method, url: '/api/v1/convert?from=EUR&to=USD&amount=1' });
      assertProblem(response, 405, 'method_not_allowed');
      assert.equal(response.headers.allow, 'GET, HEAD');
    }
  });

  test('a malformed path is a problem, not a framework error', async () => {
    assertProblem(await get('/api/v1/rate/%zz'), 404, 'not_found');
  });

  test('CORS: any origin may GET with X-Api-Key; preflight allows nothing else', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/rate?from=EUR&to=USD',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET, HEAD');
    assert.match(String(preflight.headers['access-control-allow-headers']), /X-Api-Key/);
    const simple = await get('/api/v1/rate?from=EUR&to=USD', { origin: 'https://shop.example' });
    assert.equal(simple.headers['access-control-allow-origin'], '*');
    assert.match(String(simple.headers['access-control-expose-headers']), /X-RateLimit-Remaining/);
  });

  test('200 concurrent requests on one key leave the remaining count exact', async () => {
    const key = await issueKey(t.deps);
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': key } })),
    );
    const remaining = responses.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    assert.deepEqual(remaining, Array.from({ length: 200 }, (_, i) => 800 + i));
    const record = (await t.deps.keys.list()).find((r) => key.startsWith(r.prefix))!;
    assert.equal(await t.deps.quotas.used(record.id, utcDay(t.deps.clock.now())), 200);
  });

  test('health, readiness, problem types and documents are public', async () => {
    assert.equal((await t.app.inject('/healthz')).statusCode, 200);
    const ready = await t.app.inject('/readyz');
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().providers[0].latestDay, '2026-03-05');
    assert.equal(ready.json().warnings, undefined, 'rates of the day before today are not old');
    const problem = await t.app.inject('/problems/invalid_amount');
    assert.equal(problem.json().status, 400);
    const docs = await t.app.inject('/docs/');
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger-ui/i);
    const yaml = await t.app.inject('/api/v1/openapi.yaml');
    assert.equal(yaml.statusCode, 200);
    assert.match(yaml.body, /^openapi: 3\.1\.0/m);
  });
});

describe('quota refusals', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_QUOTA_FREE: '2' });
  });
  after(async () => {
    await t.close();
  });

  test('past the daily quota: 429 with Retry-After, and the refusal is not counted', async () => {
    const send = () => t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key } });
    assert.equal((await send()).headers['x-ratelimit-remaining'], '1');
    assert.equal((await send()).headers['x-ratelimit-remaining'], '0');
    const refused = await send();
    assertProblem(refused, 429, 'quota_exceeded');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    // 2026-03-06T12:00:00Z → 12 hours to the reset.
    assert.equal(refused.headers['retry-after'], String(12 * 3600));
    await send();
    const record = (await t.deps.keys.list())[0]!;
    assert.equal(await t.deps.quotas.used(record.id, '2026-03-06'), 2);
  });
});

describe('an empty store', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({}, { load: false });
  });
  after(async () => {
    await t.close();
  });

  test('answers 503 feed_unavailable with Retry-After, and is not ready', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key } });
    assertProblem(response, 503, 'feed_unavailable');
    assert.ok(Number(response.headers['retry-after']) > 0);
    const history = await t.app.inject({ method: 'GET', url: '/api/v1/history?from=EUR&to=USD', headers: { 'x-api-key': t.key } });
    assertProblem(history, 503, 'feed_unavailable');
    assert.equal((await t.app.inject('/readyz')).statusCode, 503);
  });
});
