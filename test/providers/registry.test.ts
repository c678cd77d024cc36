import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createProviders } from '../../src/deps.js';
import { PROVIDER_REGISTRY, providerEntry, urlVariableOf } from '../../src/providers/registry.js';

const clock = { now: () => new Date('2026-03-06T12:00:00Z') };

test('each registry entry makes the provider it describes', () => {
  const ids = PROVIDER_REGISTRY.map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  for (const entry of PROVIDER_REGISTRY) {
    const provider = entry.create({ baseUrl: entry.defaultUrl ?? '', timeoutMs: 1000, clock, oxrAppId: 'abcdefgh12', fileUrl: '/nowhere.csv' });
    assert.equal(provider.id, entry.id);
    if (entry.metadata.base !== null) assert.equal(provider.base, entry.metadata.base, entry.id);
    // A provider that loads currencies on first request is one that can list them.
    assert.equal(provider.listCurrencies !== undefined, entry.loadsOnRequest, entry.id);
    assert.ok(entry.metadata.name && entry.metadata.label && entry.metadata.quotes && entry.metadata.schedule, entry.id);
    assert.ok(['central bank', 'peg', 'aggregator', 'commercial', 'file'].includes(entry.metadata.kind));
    if (entry.defaultUrl !== undefined) assert.match(entry.defaultUrl, /^https:\/\//);
  }
});

test('the origin setting is EXRATES_<ID>_URL, except the three that predate the rule', () => {
  const legacy: Record<string, string> = { ecb: 'EXRATES_ECB_URL', frankfurter: 'EXRATES_FRANKFURTER_URL', openexchangerates: 'EXRATES_OXR_URL' };
  for (const entry of PROVIDER_REGISTRY) {
    if (entry.defaultUrl === undefined) continue;
    assert.equal(entry.urlVariable, legacy[entry.id] ?? urlVariableOf(entry.id), entry.id);
  }
  assert.equal(urlVariableOf('bancaditalia'), 'EXRATES_BANCADITALIA_URL');
  assert.equal(providerEntry('nope'), undefined);
});

test('the defaults name no aggregator, and createProviders makes the configured ones in order', () => {
  const defaults = loadConfig({}).providers;
  // First-hand only: central banks, then the legal parities.
  for (const id of defaults) assert.ok(['central bank', 'peg'].includes(providerEntry(id)!.metadata.kind), id);
  assert.equal(providerEntry(defaults.at(-1)!)!.metadata.kind, 'peg');
  const config = loadConfig({ EXRATES_PROVIDERS: 'cnb,ecb,frankfurter', EXRATES_CNB_URL: 'http://127.0.0.1:9' });
  assert.deepEqual(createProviders(config, clock).map((p) => p.id), ['cnb', 'ecb', 'frankfurter']);
});
