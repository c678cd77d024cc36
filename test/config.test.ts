import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ConfigError, environmentWithDotenv, loadConfig } from '../src/config.js';
import { parseRedisUrl } from '../src/storage/redis-url.js';
import { tempDir } from './helper.js';

const run = promisify(execFile);

test('defaults give the documented configuration', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.databaseUrl, 'sqlite:./data/exrates.db');
  // First-hand sources only: no aggregator by default; the legal parities last.
  assert.deepEqual(config.providers, ['ecb', 'nbu', 'nbp', 'cnb', 'boc', 'norgesbank', 'riksbank', 'boe', 'boi', 'nbrb', 'cbr', 'cbu', 'bcra', 'cbn', 'cba', 'nbt', 'rba', 'dnb', 'bnr', 'mnb', 'nbg', 'nbk', 'sarb', 'nbrm', 'bnm', 'bancaditalia', 'peg-eur', 'peg-usd', 'peg-zar', 'peg-inr', 'peg-gbp', 'peg-sgd']);
  assert.equal(config.ecbUrl, 'https://www.ecb.europa.eu/stats/eurofxref');
  assert.equal(config.providerUrls['bancaditalia'], 'https://tassidicambio.bancaditalia.it');
  assert.equal(config.providerUrls['nbu'], 'https://bank.gov.ua');
  assert.deepEqual(config.quota, { free: 1000, pro: 100000 });
  assert.equal(config.refreshSeconds, 600);
  assert.equal(config.now, undefined);
  assert.ok(Object.isFrozen(config));
});

test('each provider origin is EXRATES_<ID>_URL, and the older URL settings keep working', () => {
  const config = loadConfig({
    EXRATES_BANCADITALIA_URL: 'http://127.0.0.1:4001/',
    EXRATES_NBU_URL: 'http://127.0.0.1:4002',
    EXRATES_ECB_URL: 'http://127.0.0.1:4003/ecb/',
    EXRATES_FRANKFURTER_URL: 'http://127.0.0.1:4004',
    EXRATES_OXR_URL: 'http://127.0.0.1:4005/api',
  });
  assert.equal(config.providerUrls['bancaditalia'], 'http://127.0.0.1:4001');
  assert.equal(config.providerUrls['nbu'], 'http://127.0.0.1:4002');
  assert.equal(config.providerUrls['ecb'], 'http://127.0.0.1:4003/ecb');
  assert.equal(config.ecbUrl, 'http://127.0.0.1:4003/ecb');
  assert.equal(config.providerUrls['frankfurter'], 'http://127.0.0.1:4004');
  assert.equal(config.providerUrls['openexchangerates'], 'http://127.0.0.1:4005/api');
  assert.equal(config.providerUrls['file'], undefined);
  // An origin is scheme, host and port: a path would not be appended to as the bank documents it.
  assert.throws(() => loadConfig({ EXRATES_NBP_URL: 'https://api.nbp.pl/api' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /EXRATES_NBP_URL: expected an http:\/\/ or https:\/\/ origin/);
    return true;
  });
  assert.throws(() => loadConfig({ EXRATES_PROVIDERS: 'ecb,bdi' }), /EXRATES_PROVIDERS: 'bdi' is not a provider; expected a comma-separated list of ecb, nbu, .*, bancaditalia, .*frankfurter/);
});

test('values are converted and checked', () => {
  const config = loadConfig({
    PORT: '9090',
    EXRATES_PROVIDERS: 'file,ecb',
    EXRATES_FILE_URL: '/tmp/x.csv',
    EXRATES_NOW: '2026-03-06T12:00:00Z',
    EXRATES_QUOTA_FREE: '5',
    EXRATES_ECB_URL: 'http://127.0.0.1:1234/ecb/',
  });
  assert.equal(config.port, 9090);
  assert.deepEqual(config.providers, ['file', 'ecb']);
  assert.equal(config.now?.toISOString(), '2026-03-06T12:00:00.000Z');
  assert.equal(config.quota.free, 5);
  assert.equal(config.ecbUrl, 'http://127.0.0.1:1234/ecb');
});

test('every bad variable gets its own clear line', () => {
  try {
    loadConfig({
      PORT: 'eighty',
      EXRATES_PROVIDERS: 'ecb,nope',
      EXRATES_QUOTA_FREE: '0',
      EXRATES_LOG_LEVEL: 'loud',
      EXRATES_DATABASE_URL: 'mysql://x',
      EXRATES_NOW: 'yesterday',
    });
    assert.fail('expected a ConfigError');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    const names = error.problems.map((p) => p.split(':')[0]);
    assert.deepEqual(names.sort(), ['EXRATES_DATABASE_URL', 'EXRATES_LOG_LEVEL', 'EXRATES_NOW', 'EXRATES_PROVIDERS', 'EXRATES_QUOTA_FREE', 'PORT']);
    assert.match(error.message, /PORT: expected a whole number from 0 to 65535; got 'eighty'/);
    assert.match(error.message, /EXRATES_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent; got 'loud'/);
  }
});

test('the file provider needs a location, and providers are named once', () => {
  assert.throws(() => loadConfig({ EXRATES_PROVIDERS: 'file' }), /EXRATES_FILE_URL is required/);
  assert.throws(() => loadConfig({ EXRATES_PROVIDERS: 'ecb,ecb' }), /names a provider twice/);
});

test('Redis: one server, or the seed nodes of a cluster; a bad node is named and a password never echoed', () => {
  assert.equal(loadConfig({ EXRATES_REDIS_URL: 'redis://:pw@redis:6379' }).redisUrl, 'redis://:pw@redis:6379');
  assert.deepEqual(parseRedisUrl('rediss+cluster://app:s%40cret@r1:7000,r2,[::1]:7002'), {
    cluster: true,
    nodes: [
      { host: 'r1', port: 7000 },
      { host: 'r2', port: 6379 },
      { host: '::1', port: 7002 },
    ],
    tls: true,
    username: 'app',
    password: 's@cret',
  });
  assert.throws(() => loadConfig({ EXRATES_REDIS_URL: 'redis+cluster://:hunter2@r1:7000,r2:seven' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.problems, ['EXRATES_REDIS_URL: "r2:seven" is not host:port']);
    return true;
  });
  assert.throws(() => loadConfig({ EXRATES_REDIS_URL: 'redis://r1:7000,r2:7001' }), /EXRATES_REDIS_URL: several nodes are for a cluster/);
});

test('.env is read under the real environment', () => {
  const dir = tempDir();
  try {
    const path = join(dir.path, '.env');
    writeFileSync(path, 'PORT=7000\nEXRATES_QUOTA_PRO=5\n');
    const env = environmentWithDotenv({ PORT: '7001' }, path);
    const config = loadConfig(env);
    assert.equal(config.port, 7001);
    assert.equal(config.quota.pro, 5);
  } finally {
    dir.remove();
  }
});

test('docs/configuration.md matches the schema', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/config-doc.ts', '--check']);
  assert.match(stdout, /up to date/);
});

test('EXRATES_OLD_RATES_DAYS: a week unless set, a whole number of days from 1 to 3650', () => {
  assert.equal(loadConfig({}).oldRatesDays, 7);
  assert.equal(loadConfig({ EXRATES_OLD_RATES_DAYS: '30' }).oldRatesDays, 30);
  for (const bad of ['0', '3651', 'week']) {
    assert.throws(() => loadConfig({ EXRATES_OLD_RATES_DAYS: bad }), new RegExp(`EXRATES_OLD_RATES_DAYS: expected a whole number from 1 to 3650; got '${bad}'`));
  }
});

test('EXRATES_CONTACT_EMAIL: the placeholder unless set', async () => {
  const { PLACEHOLDER_CONTACT_EMAIL } = await import('../src/config.js');
  assert.equal(PLACEHOLDER_CONTACT_EMAIL, 'keys@exrates.invalid');
  assert.equal(loadConfig({}).contactEmail, PLACEHOLDER_CONTACT_EMAIL);
  assert.equal(loadConfig({ EXRATES_CONTACT_EMAIL: 'rates@example.org' }).contactEmail, 'rates@example.org');
});

test('EXRATES_CROSSCHECK_PERCENT: 2 unless set, a positive decimal of percent, kept as written', () => {
  assert.equal(loadConfig({}).crossCheckPercent, '2');
  assert.equal(loadConfig({ EXRATES_CROSSCHECK_PERCENT: '0.5' }).crossCheckPercent, '0.5');
  for (const bad of ['0', '0.0', '-1', '1e2', '2%', ' 2', '1000', '0.00001']) {
    assert.throws(() => loadConfig({ EXRATES_CROSSCHECK_PERCENT: bad }), new RegExp(`EXRATES_CROSSCHECK_PERCENT: expected a positive decimal of percent such as 2 or 0\\.5 .*; got '${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`), bad);
  }
});
