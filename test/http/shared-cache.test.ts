/**
 * The service behind a real shared cache: Varnish with its default configuration. Several callers
 * ask for the same URLs through it, one after another: a key with quota left, a key whose quota is
 * spent, no key, and a key never used before. Each must get its own answer (its status, its own
 * quota headers) straight from the service, whatever the cache was handed before; only what is
 * the same for everyone (the OpenAPI document) may come from the cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, issueKey, type TestApp } from '../helper.js';
import { send, type Reply } from '../support/http.js';
import { listenApp } from '../support/ports.js';
import { startVarnish, varnishAvailable, type SharedCache } from '../support/varnish.js';

const available = varnishAvailable();

/** A caller of the API, and what the service should say of its quota. */
interface Caller {
  name: string;
  headers: Record<string, string>;
  /** Requests per day, or undefined for a caller without a valid key (no quota headers). */
  limit?: number;
  /** Requests left, as the next answer that counts must say. */
  remaining?: number;
}

/** Varnish names one transaction in X-Varnish on a miss or a pass, and two (this one, and the stored one's) on a hit. */
const servedFromCache = (reply: Reply) => String(reply.headers['x-varnish'] ?? '').trim().split(/\s+/).length === 2;

describe('behind Varnish (default configuration), no answer crosses keys', { skip: !available }, () => {
  let t: TestApp;
  let cache: SharedCache;
  let fresh: Caller;
  let spent: Caller;
  let holder: Caller;
  const keyless: Caller = { name: 'no key', headers: {} };

  before(async () => {
    t = await createTestApp({ EXRATES_QUOTA_FREE: '1000', EXRATES_QUOTA_PRO: '1' });
    const backend = await listenApp(t.app);
    holder = { name: 'key A', headers: { 'x-api-key': t.key }, limit: 1000, remaining: 1000 };
    // Key B: a pro key on a quota of one, used up before the cache sees anything.
    const spentKey = await issueKey(t.deps, 'pro');
    assert.equal((await send(`${backend}/api/v1/currencies`, { headers: { 'x-api-key': spentKey } })).status, 200);
    spent = { name: 'key B (quota spent)', headers: { 'x-api-key': spentKey }, limit: 1, remaining: 0 };
    fresh = { name: 'key C (unused)', headers: { 'x-api-key': await issueKey(t.deps) }, limit: 1000, remaining: 1000 };
    cache = await startVarnish(backend);
  });
  after(async () => {
    await cache?.close();
    await t?.close();
  });

  /** Asks through the cache; the answer must be the service's own to this caller, never a stored one. */
  async function ask(caller: Caller, method: string, path: string, expected: number, counts = true): Promise<Reply> {
    const reply = await send(`${cache.origin}${path}`, { method, headers: caller.headers });
    const what = `${caller.name}: ${method} ${path}`;
    assert.equal(reply.status, expected, `${what} → ${reply.status} ${reply.body}`);
    assert.ok(!servedFromCache(reply), `${what} was served from the cache (X-Varnish: ${String(reply.headers['x-varnish'])})`);
    if (caller.limit === undefined) {
      assert.equal(reply.headers['x-ratelimit-remaining'], undefined, `${what} carries another caller's quota`);
      assert.equal(reply.headers.ratelimit, undefined, `${what} carries another caller's quota`);
      return reply;
    }
    // A request that counts takes one from the caller's quota; a refusal does not.
    if (counts && expected !== 429) caller.remaining! -= 1;
    assert.equal(reply.headers['x-ratelimit-limit'], String(caller.limit), `${what}: its own limit`);
    assert.equal(reply.headers['x-ratelimit-remaining'], String(caller.remaining), `${what}: its own count`);
    assert.match(String(reply.headers.ratelimit), new RegExp(`^"daily";r=${caller.remaining};t=\\d+$`), `${what}: its own RateLimit`);
    return reply;
  }

  test('the cache is live: what is the same for everyone is stored and served again', async () => {
    const first = await send(`${cache.origin}/api/v1/openapi.json`);
    const second = await send(`${cache.origin}/api/v1/openapi.json`);
    assert.equal(second.status, 200);
    assert.ok(servedFromCache(second), `a repeat of a public answer is a hit (X-Varnish: ${String(second.headers['x-varnish'])}, first: ${String(first.headers['x-varnish'])})`);
  });

  test("one key's errors and successes reach neither another key nor a request without one", async () => {
    const paths: Array<{ path: string; method?: string; holder: number; keyless: number }> = [
      // 404 no_history: heuristically cacheable, the answer a shared cache once kept for everyone.
      { path: '/api/v1/rate?from=EUR&to=USD&date=1998-06-01', holder: 404, keyless: 401 },
      { path: '/api/v1/nothing/here', holder: 404, keyless: 404 },
      { path: '/api/v1/rate?from=EUR&to=XYZ1', holder: 400, keyless: 401 },
      { path: '/api/v1/rate?from=EUR&to=USD', holder: 200, keyless: 401 },
      { path: '/api/v1/convert?from=EUR&to=JPY&amount=100&date=2026-02-02', holder: 200, keyless: 401 },
      { path: '/api/v1/history?from=EUR&to=USD&range=1m', holder: 200, keyless: 401 },
      { path: '/api/v1/currencies', holder: 200, keyless: 401 },
      { path: '/api/v1/rate?from=EUR&to=USD', method: 'DELETE', holder: 405, keyless: 405 },
    ];
    for (const { path, method = 'GET', holder: holderStatus, keyless: keylessStatus } of paths) {
      // Twice with key A: the repeat is what a cache that stored the first would hand out.
      await ask(holder, method, path, holderStatus);
      await ask(holder, method, path, holderStatus);
      await ask(spent, method, path, 429);
      await ask(keyless, method, path, keylessStatus);
      await ask(fresh, method, path, holderStatus);
      // HEAD with key A, then GET without a key: Varnish fetches a GET for a HEAD it may store.
      if (method === 'GET') {
        await ask(holder, 'HEAD', path, holderStatus);
        await ask(keyless, 'GET', path, keylessStatus);
      }
    }
  });

  test('usage, never stored, is each key its own', async () => {
    const a = await ask(holder, 'GET', '/api/v1/usage', 200, false);
    const b = await ask(spent, 'GET', '/api/v1/usage', 200, false);
    await ask(keyless, 'GET', '/api/v1/usage', 401);
    assert.equal((JSON.parse(a.body) as { tier: string }).tier, 'free');
    const ofB = JSON.parse(b.body) as { tier: string; limit: number; remaining: number };
    assert.deepEqual([ofB.tier, ofB.limit, ofB.remaining], ['pro', 1, 0]);
  });

  test('the service counted every request the callers made', async () => {
    const usage = JSON.parse((await send(`${cache.origin}/api/v1/usage`, { headers: holder.headers })).body) as { used: number; remaining: number };
    assert.equal(usage.remaining, holder.remaining);
    assert.equal(usage.used, holder.limit! - holder.remaining!);
  });
});
