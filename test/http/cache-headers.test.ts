/**
 * How every answer of the keyed API may be cached, errors included, and the rate-limit fields in
 * both conventions (X-RateLimit-* and the IETF RateLimit-Policy / RateLimit), read from one step.
 * test/http/shared-cache.test.ts shows the same answers behind a real shared cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, issueKey, unissuedKey, type TestApp } from '../helper.js';

type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

/** The Vary of an answer, as lower-case field names. */
function varyOf(answer: Answer): string[] {
  return String(answer.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/** An answer that depends on the key says so, and says how it may be cached. */
function assertKeyedCaching(answer: Answer, what: string): void {
  const vary = varyOf(answer);
  assert.ok(vary.includes('x-api-key') && vary.includes('authorization'), `${what}: Vary names the key headers (${String(answer.headers.vary)})`);
  const cacheControl = String(answer.headers['cache-control'] ?? '');
  if (answer.statusCode >= 400) assert.equal(cacheControl, 'no-store', `${what}: an error is never stored`);
  else assert.match(cacheControl, /^(private, max-age=\d+(, immutable)?|no-store)$/, `${what}: a success is private or not stored`);
}

/** The IETF fields of an answer, parsed by their exact grammar here (a Structured Field List of one Item). */
function rateLimitFields(answer: Answer): { q: number; w: number; r: number; t: number } {
  const policy = /^"daily";q=(\d+);w=(\d+)$/.exec(String(answer.headers['ratelimit-policy']));
  const state = /^"daily";r=(\d+);t=(\d+)$/.exec(String(answer.headers.ratelimit));
  assert.ok(policy, `RateLimit-Policy: ${String(answer.headers['ratelimit-policy'])}`);
  assert.ok(state, `RateLimit: ${String(answer.headers.ratelimit)}`);
  return { q: Number(policy[1]), w: Number(policy[2]), r: Number(state[1]), t: Number(state[2]) };
}

describe('every keyed answer says how it may be cached', () => {
  let t: TestApp;
  let spent: string;
  before(async () => {
    t = await createTestApp({ EXRATES_QUOTA_PRO: '1' });
    // A key whose quota one request uses up.
    spent = await issueKey(t.deps, 'pro');
    await t.app.inject({ method: 'GET', url: '/api/v1/currencies', headers: { 'x-api-key': spent } });
  });
  after(async () => {
    await t.close();
  });

  const keyed = (method: string, url: string, headers: Record<string, string> = {}, key = t.key) =>
    t.app.inject({ method: method as 'GET', url, headers: { 'x-api-key': key, ...headers } }) as Promise<Answer>;

  test('successes keep their caching, 304s repeat it, and both vary on the key headers', async () => {
    const live = await keyed('GET', '/api/v1/rate?from=EUR&to=USD');
    assert.equal(live.statusCode, 200);
    assert.match(String(live.headers['cache-control']), /^private, max-age=\d+$/);
    assertKeyedCaching(live, 'live rate');
    const notModified = await keyed('GET', '/api/v1/rate?from=EUR&to=USD', { 'if-none-match': String(live.headers.etag) });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.headers['cache-control'], live.headers['cache-control']);
    assertKeyedCaching(notModified, '304');
    const settled = await keyed('GET', '/api/v1/rate?from=EUR&to=USD&date=2026-02-02');
    assert.equal(settled.headers['cache-control'], 'private, max-age=31536000, immutable');
    assertKeyedCaching(settled, 'settled date');
    const history = await keyed('GET', '/api/v1/history?from=EUR&to=USD&range=1m', { 'accept-encoding': 'gzip' });
    assert.equal(history.headers['cache-control'], 'private, max-age=3600');
    assert.deepEqual(varyOf(history), ['x-api-key', 'authorization', 'accept', 'accept-encoding']);
    const usage = await keyed('GET', '/api/v1/usage');
    assert.equal(usage.headers['cache-control'], 'no-store');
    assertKeyedCaching(usage, 'usage');
    const head = await keyed('HEAD', '/api/v1/currencies');
    assertKeyedCaching(head, 'HEAD');
  });

  test('every error of a keyed path is no-store and varies on the key headers, with or without a valid key', async () => {
    const cases: Array<[string, Promise<Answer>, number]> = [
      ['400 invalid currency', keyed('GET', '/api/v1/rate?from=EUR&to=XYZ1'), 400],
      ['400 missing parameter', keyed('GET', '/api/v1/convert?from=EUR&to=USD'), 400],
      ['404 no_history', keyed('GET', '/api/v1/rate?from=EUR&to=USD&date=1998-06-01'), 404],
      ['404 no endpoint under /api/', keyed('GET', '/api/v1/nothing'), 404],
      ['404 no endpoint, no key', t.app.inject({ method: 'GET', url: '/api/v1/nothing' }) as Promise<Answer>, 404],
      ['405', keyed('DELETE', '/api/v1/rate?from=EUR&to=USD'), 405],
      ['413', t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key, 'content-type': 'text/plain' }, payload: 'x'.repeat(2048) }) as Promise<Answer>, 413],
      ['401 without a key', t.app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD' }) as Promise<Answer>, 401],
      ['401 unknown key', keyed('GET', '/api/v1/rate?from=EUR&to=USD', {}, unissuedKey()), 401],
      ['401 on usage', t.app.inject({ method: 'GET', url: '/api/v1/usage' }) as Promise<Answer>, 401],
      ['429', keyed('GET', '/api/v1/rate?from=EUR&to=USD', {}, spent), 429],
    ];
    for (const [what, pending, status] of cases) {
      const answer = await pending;
      assert.equal(answer.statusCode, status, `${what}: ${answer.body}`);
      assert.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8', what);
      assertKeyedCaching(answer, what);
    }
  });

  test('problems outside the keyed API are never stored either', async () => {
    const answer = (await t.app.inject({ method: 'GET', url: '/no/such/page' })) as Answer;
    assert.equal(answer.statusCode, 404);
    assert.equal(answer.headers['cache-control'], 'no-store');
  });
});

describe('rate limits in both conventions', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_QUOTA_FREE: '3' });
  });
  after(async () => {
    await t.close();
  });

  const get = (url: string, key = t.key) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } }) as Promise<Answer>;
  const nowSeconds = () => Math.floor(t.deps.clock.now().getTime() / 1000);

  test('RateLimit-Policy and RateLimit carry the same reading as X-RateLimit-*, on successes and errors', async () => {
    for (const [url, status] of [
      ['/api/v1/rate?from=EUR&to=USD', 200],
      ['/api/v1/rate?from=EUR&to=XYZ1', 400],
      ['/api/v1/nothing', 404],
    ] as const) {
      const answer = await get(url);
      assert.equal(answer.statusCode, status, answer.body);
      const fields = rateLimitFields(answer);
      assert.equal(fields.q, Number(answer.headers['x-ratelimit-limit']));
      assert.equal(fields.q, 3);
      assert.equal(fields.w, 86_400);
      assert.equal(fields.r, Number(answer.headers['x-ratelimit-remaining']));
      // Seconds until the reset that X-RateLimit-Reset gives as an instant (2026-03-06T12:00:00Z: 12 hours).
      assert.equal(fields.t, Number(answer.headers['x-ratelimit-reset']) - nowSeconds());
      assert.equal(fields.t, 12 * 3600);
    }
    // Three requests counted: none left.
    const usage = await get('/api/v1/usage');
    assert.equal(rateLimitFields(usage).r, 0);
    assert.equal((JSON.parse(usage.body) as { remaining: number }).remaining, 0);
  });

  test('a refusal: r is 0 and t is the instant Retry-After names', async () => {
    const refused = await get('/api/v1/rate?from=EUR&to=USD');
    assert.equal(refused.statusCode, 429);
    const fields = rateLimitFields(refused);
    assert.equal(fields.r, 0);
    assert.equal(fields.t, Number(refused.headers['retry-after']));
  });

  test('no key, no quota: a 401 has neither convention', async () => {
    const refused = await get('/api/v1/rate?from=EUR&to=USD', unissuedKey());
    assert.equal(refused.statusCode, 401);
    for (const name of ['ratelimit', 'ratelimit-policy', 'x-ratelimit-remaining']) assert.equal(refused.headers[name], undefined, name);
  });

  test('browsers may read both: CORS exposes them on every answer', async () => {
    const answer = await get('/api/v1/usage');
    const exposed = String(answer.headers['access-control-expose-headers']).split(',').map((name) => name.trim().toLowerCase());
    for (const name of ['ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
      assert.ok(exposed.includes(name), name);
    }
  });

  test('the OpenAPI document declares both on the keyed answers', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    const responses = document.paths['/api/v1/rate']!.get!.responses;
    for (const status of ['200', '400', '429']) {
      const headers = Object.keys(responses[status]!.headers ?? {});
      for (const name of ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Remaining']) assert.ok(headers.includes(name), `${status} declares ${name}`);
    }
    for (const status of ['400', '401', '404', '429']) {
      const headers = Object.keys(responses[status]!.headers ?? {});
      assert.ok(headers.includes('Cache-Control') && headers.includes('Vary'), `${status} declares its caching`);
    }
  });
});
