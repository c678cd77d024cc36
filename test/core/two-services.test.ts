/**
 * Two services wired in one process (createDeps twice, each on its own SQLite file with its own
 * rates, keys and counts) share nothing: every cache, counter and parsed value belongs to the
 * Deps that made it. Each service is asked about the other's data after it has been read and
 * cached by the other.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { authenticateApiKey, hashApiKey, issueApiKey } from '../../src/core/api-keys.js';
import type { RateDocument } from '../../src/core/ports.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { tempDir } from '../helper.js';

const NOW = '2026-03-06T12:00:00Z';
const DAY = '2026-03-06';

const documentWith = (usd: string, jpy: string): RateDocument => ({
  provider: 'ecb',
  base: 'EUR',
  days: [{ day: DAY, asOf: `${DAY}T15:00:00Z`, rates: { USD: usd, JPY: jpy } }],
});

const dir = tempDir('exrates-two-services-');
let a: Deps;
let b: Deps;

async function service(name: string, document: RateDocument): Promise<Deps> {
  const deps = await createDeps(
    loadConfig({ EXRATES_DATABASE_URL: `sqlite:${join(dir.path, `${name}.db`)}`, EXRATES_LOG_LEVEL: 'silent', EXRATES_PROVIDERS: 'ecb', EXRATES_NOW: NOW, EXRATES_CONTACT_EMAIL: 'keys@example.org' }),
  );
  await deps.rates.saveDocument(document);
  deps.book.invalidate();
  return deps;
}

before(async () => {
  a = await service('a', documentWith('1.1000', '160.00'));
  b = await service('b', documentWith('1.2000', '170.00'));
});

after(async () => {
  await a?.close();
  await b?.close();
  dir.remove();
});

test('rates: each service answers from its own store, after the other has read and cached the same pairs', async () => {
  for (let round = 0; round < 2; round++) {
    assert.equal((await a.book.liveRate('EUR', 'USD')).rate, '1.1');
    assert.equal((await b.book.liveRate('EUR', 'USD')).rate, '1.2');
    // A cross rate through the base: parsed values of each service's own rates.
    assert.equal((await a.book.liveRate('USD', 'JPY')).rate, '145.45455');
    assert.equal((await b.book.liveRate('USD', 'JPY')).rate, '141.66667');
    assert.equal((await a.book.convert('EUR', 'JPY', '2')).result, '320');
    assert.equal((await b.book.convert('EUR', 'JPY', '2')).result, '340');
  }
});

test('keys: one key presented to both names each service its own record, or none where it was never issued', async () => {
  const onlyA = await issueApiKey(a.keys, { tier: 'free', owner: 'a@example.org' }, a.clock);
  assert.equal((await authenticateApiKey(a.keys, onlyA.key, a.keyHashes))?.id, onlyA.record.id);
  // Cached by the first service now: the second has no such key and must not find it.
  assert.equal(await authenticateApiKey(b.keys, onlyA.key, b.keyHashes), null);
  // One key issued to both, under a record of each one's own: each names its own, whoever asked first.
  const both = await issueApiKey(a.keys, { tier: 'free', owner: 'a@example.org' }, a.clock);
  await b.keys.insert({ ...both.record, id: 'b-own', tier: 'pro', hash: hashApiKey(both.key) });
  for (let round = 0; round < 2; round++) {
    assert.equal((await authenticateApiKey(a.keys, both.key, a.keyHashes))?.id, both.record.id);
    assert.deepEqual(await authenticateApiKey(b.keys, both.key, b.keyHashes), { ...both.record, id: 'b-own', tier: 'pro' });
  }
});

test('quotas: counts made by one service are not the other\'s', async () => {
  for (let i = 1; i <= 3; i++) assert.deepEqual(await a.quotas.consume('k', DAY, 5), { allowed: true, used: i });
  assert.equal(await b.quotas.used('k', DAY), 0);
  assert.deepEqual(await b.quotas.consume('k', DAY, 5), { allowed: true, used: 1 });
  assert.equal(await a.quotas.used('k', DAY), 3);
});
