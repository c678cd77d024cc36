/**
 * The portal's demo key (EXRATES_DEMO_KEY_TIER): off by default and then refused like any unknown
 * key; when on, handed to the page, limited per client address and by its tier's shared quota,
 * and never an issued key in the key store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isWellFormedKey } from '../../src/core/api-keys.js';
import { addressGroup, DEMO_KEY } from '../../src/core/demo-key.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, unissuedKey, type TestApp } from '../helper.js';

describe('EXRATES_DEMO_KEY_TIER and EXRATES_DEMO_QUOTA_PER_IP', () => {
  it('are off, with 100 requests per address, by default', () => {
    assert.equal(loadConfig({}).demoKey, undefined);
    assert.equal(loadConfig({ EXRATES_DEMO_KEY_TIER: 'off', EXRATES_DEMO_QUOTA_PER_IP: '7' }).demoKey, undefined);
    assert.deepEqual(loadConfig({ EXRATES_DEMO_KEY_TIER: 'free' }).demoKey, { tier: 'free', perAddress: 100 });
    assert.deepEqual(loadConfig({ EXRATES_DEMO_KEY_TIER: 'pro', EXRATES_DEMO_QUOTA_PER_IP: '25' }).demoKey, { tier: 'pro', perAddress: 25 });
  });

  it('reject bad values with one clear line each', () => {
    assert.throws(
      () => loadConfig({ EXRATES_DEMO_KEY_TIER: 'on', EXRATES_DEMO_QUOTA_PER_IP: '0' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems.sort(), [
          "EXRATES_DEMO_KEY_TIER: expected one of off, free, pro; got 'on'",
          "EXRATES_DEMO_QUOTA_PER_IP: expected a whole number from 1 to 100000; got '0'",
        ]);
        return true;
      },
    );
  });
});

describe('EXRATES_TRUST_PROXY', () => {
  it('is none by default, and takes addresses, CIDR ranges and the named ranges', () => {
    assert.deepEqual(loadConfig({}).trustedProxies, []);
    assert.deepEqual(loadConfig({ EXRATES_TRUST_PROXY: ' 10.0.0.0/8, loopback,2001:db8::1 ' }).trustedProxies, ['10.0.0.0/8', 'loopback', '2001:db8::1']);
  });

  it('rejects what is not an address or range with one clear line', () => {
    for (const [value, reason] of [
      ['10.0.0.0/40', 'invalid range on address: 10.0.0.0/40'],
      ['proxy.example.org', 'invalid IP address: proxy.example.org'],
      [' , ', 'no address given'],
    ] as const) {
      assert.throws(
        () => loadConfig({ EXRATES_TRUST_PROXY: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.deepEqual(error.problems, [`EXRATES_TRUST_PROXY: ${reason}; got '${value}'`]);
          return true;
        },
      );
    }
  });
});

describe('client address groups', () => {
  it('are IPv4 addresses (also IPv4-mapped) and IPv6 /64s', () => {
    assert.equal(addressGroup('203.0.113.7'), '203.0.113.7');
    assert.equal(addressGroup('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  });
});

function pageConfig(html: string): { demo: { key: string; perAddress: number } | null } {
  return JSON.parse(/<script type="application\/json" id="portal-config">(.*?)<\/script>/s.exec(html)![1]!);
}

describe('the demo key, off (the default)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({}, { load: false });
  });
  after(async () => {
    await t.close();
  });

  it('is not handed to the page and is refused exactly like an unknown key', async () => {
    assert.equal(pageConfig((await t.app.inject('/')).body).demo, null);
    const demo = await t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': DEMO_KEY } });
    const unknown = await t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': unissuedKey() } });
    assert.equal(demo.statusCode, 401);
    assert.equal(demo.body, unknown.body);
    assert.equal(demo.headers['x-ratelimit-limit'], undefined);
  });
});

describe('the demo key, on', () => {
  let t: TestApp;
  before(async () => {
    // A shared free-tier quota of 5, and 3 per address.
    t = await createTestApp({ EXRATES_DEMO_KEY_TIER: 'free', EXRATES_DEMO_QUOTA_PER_IP: '3', EXRATES_QUOTA_FREE: '5' });
  });
  after(async () => {
    await t.close();
  });

  const ask = (remoteAddress: string, key = DEMO_KEY) =>
    t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': key }, remoteAddress });

  it('is handed to the page, is no issued key, and is in no key store', async () => {
    assert.deepEqual(pageConfig((await t.app.inject('/')).body).demo, { key: DEMO_KEY, perAddress: 3 });
    assert.equal(DEMO_KEY, 'exr_demo_public');
    assert.equal(isWellFormedKey(DEMO_KEY), false, 'the issued-key check refuses it: only the demo path accepts it');
    assert.deepEqual((await t.deps.keys.list()).map((k) => k.prefix.startsWith('exr_demo_')), [false]);
  });

  it('answers like a key, counting each client address on its own and all of them against the shared quota', async () => {
    const direct = await t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key } });
    for (const remaining of [2, 1, 0]) {
      const answer = await ask('198.51.100.1');
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.body, direct.body);
      assert.equal(answer.headers['x-ratelimit-limit'], '3');
      assert.equal(answer.headers['x-ratelimit-remaining'], String(remaining));
    }
    const refused = await ask('198.51.100.1');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '43200');
    const problem = refused.json();
    assert.equal(problem.code, 'quota_exceeded');
    assert.match(problem.detail, /^This address's 3 demo requests for today are used up; .* e-mail keys@example\.org\.$/);

    // Another address has its own 3, but the shared quota (5) has only 2 left.
    assert.equal((await ask('::ffff:198.51.100.2')).statusCode, 200);
    const last = await ask('198.51.100.2');
    assert.equal(last.statusCode, 200);
    assert.equal(last.headers['x-ratelimit-remaining'], '0', 'the smaller of what is left to the address and to the demo key');
    const shared = await ask('203.0.113.9');
    assert.equal(shared.statusCode, 429);
    assert.match(shared.json().detail, /^The demo key's requests for today are used up/);

    // Ordinary keys are not touched by any of this.
    assert.equal((await t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key } })).statusCode, 200);
  });

  it('accepts the exact key only', async () => {
    const guess = await ask('192.0.2.1', 'exr_demo_private');
    assert.equal(guess.statusCode, 401);
    assert.equal(guess.json().code, 'unauthorized');
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.app.inject('/api/v1/openapi.json')).json();
    assert.match(doc.info.description, /\*\*Demo key\.\*\* The portal at \/ calls this API with the public demo key `exr_demo_public`.*3 requests per UTC day per client address.*free tier's 5 a day/);
  });
});

describe('the demo key behind a trusted proxy', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_DEMO_KEY_TIER: 'free', EXRATES_DEMO_QUOTA_PER_IP: '1', EXRATES_TRUST_PROXY: '10.0.0.0/8' });
  });
  after(async () => {
    await t.close();
  });

  const ask = (remoteAddress: string, forwardedFor?: string) =>
    t.app.inject({
      url: '/api/v1/rate?from=EUR&to=USD',
      headers: { 'x-api-key': DEMO_KEY, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
      remoteAddress,
    });

  it('counts each client the proxy reports on its own', async () => {
    assert.equal((await ask('10.1.2.3', '198.51.100.1')).statusCode, 200);
    assert.equal((await ask('10.1.2.3', '198.51.100.1')).statusCode, 429);
    // Another client through the same proxy, and the same client through another proxy of the range.
    assert.equal((await ask('10.1.2.3', '198.51.100.2')).statusCode, 200);
    assert.equal((await ask('10.9.9.9', '198.51.100.1')).statusCode, 429);
    // The nearest untrusted address counts: a client cannot hide behind what it writes itself.
    assert.equal((await ask('10.1.2.3', '192.0.2.50, 198.51.100.2')).statusCode, 429);
  });

  it('ignores X-Forwarded-For from anyone else', async () => {
    assert.equal((await ask('203.0.113.7', '198.51.100.3')).statusCode, 200);
    assert.equal((await ask('203.0.113.7', '198.51.100.4')).statusCode, 429, 'counted against 203.0.113.7, whatever the header says');
  });
});

describe('the demo key without EXRATES_TRUST_PROXY', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_DEMO_KEY_TIER: 'free', EXRATES_DEMO_QUOTA_PER_IP: '1' });
  });
  after(async () => {
    await t.close();
  });

  it('counts the connection\'s peer and ignores X-Forwarded-For', async () => {
    const ask = (forwardedFor: string) =>
      t.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': DEMO_KEY, 'x-forwarded-for': forwardedFor }, remoteAddress: '127.0.0.1' });
    assert.equal((await ask('198.51.100.1')).statusCode, 200);
    assert.equal((await ask('198.51.100.2')).statusCode, 429);
  });
});
