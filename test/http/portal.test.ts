/**
 * The portal's page embeds the configured providers (id, name, kind, the currencies each quotes
 * now) exactly as /api/v1/providers lists them, so that a page load asks the API for nothing
 * else; what it embeds follows each refresh, and its ETag with it. On stand-ins for the ECB and
 * the Czech National Bank serving their recorded documents, refreshed one after the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { FEEDS_NOW, startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';

interface EmbeddedProvider {
  id: string;
  name: string;
  kind: string;
  currencies: string[];
}

describe('the portal page embeds the providers as /api/v1/providers lists them', () => {
  let fake: FakeUpstreams;
  let banks: CentralBankStandIns;
  let service: FeedsService;

  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = '2026-02-11';
    banks = await startCentralBankStandIns('2026-02-12');
    service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: 'ecb,cnb', EXRATES_NOW: FEEDS_NOW } });
  });

  after(async () => {
    await service?.close();
    await banks?.close();
    await closeFakeFeeds(fake);
  });

  /** The page, its ETag and the providers of the configuration it embeds. */
  async function page(): Promise<{ etag: string; providers: EmbeddedProvider[] }> {
    const response = await service.app.inject({ method: 'GET', url: '/' });
    assert.equal(response.statusCode, 200);
    const config = JSON.parse(/<script type="application\/json" id="portal-config">(.*?)<\/script>/s.exec(response.body)![1]!) as { providers: EmbeddedProvider[] };
    return { etag: String(response.headers['etag']), providers: config.providers };
  }

  /** What /api/v1/providers says of the same fields. */
  async function listed(): Promise<EmbeddedProvider[]> {
    const answer = await service.get('/api/v1/providers');
    assert.equal(answer.status, 200);
    return (answer.body['providers'] as EmbeddedProvider[]).map(({ id, name, kind, currencies }) => ({ id, name, kind, currencies }));
  }

  it('before, between and after the refreshes, with an ETag that changes with them', async () => {
    // Nothing stored yet: both providers, in order of preference, quoting nothing.
    const empty = await page();
    assert.deepEqual(empty.providers, [
      { id: 'ecb', name: 'European Central Bank', kind: 'central bank', currencies: [] },
      { id: 'cnb', name: 'Czech National Bank', kind: 'central bank', currencies: [] },
    ]);
    assert.deepEqual(empty.providers, await listed());
    const unchanged = await service.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': empty.etag } });
    assert.equal(unchanged.statusCode, 304, 'the page rendered once is answered by its ETag');

    // The ECB refreshed: its currencies are in the page, which the old ETag no longer matches.
    const [ecbProvider, cnbProvider] = service.deps.providers;
    assert.deepEqual([ecbProvider!.id, cnbProvider!.id], ['ecb', 'cnb']);
    assert.equal((await service.deps.refresher.refreshProvider(ecbProvider!)).ok, true);
    const afterEcb = await page();
    assert.notEqual(afterEcb.etag, empty.etag);
    assert.equal((await service.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': empty.etag } })).statusCode, 200);
    assert.deepEqual(afterEcb.providers, await listed());
    const ecbQuotes = afterEcb.providers[0]!.currencies;
    assert.ok(ecbQuotes.includes('EUR') && ecbQuotes.includes('USD') && !ecbQuotes.includes('XDR'), ecbQuotes.join(' '));
    assert.deepEqual(afterEcb.providers[1]!.currencies, []);

    // The CNB refreshed too: the SDR, which only it quotes, and its base, the koruna.
    assert.equal((await service.deps.refresher.refreshProvider(cnbProvider!)).ok, true);
    const afterCnb = await page();
    assert.notEqual(afterCnb.etag, afterEcb.etag);
    assert.deepEqual(afterCnb.providers, await listed());
    const cnbQuotes = afterCnb.providers[1]!.currencies;
    assert.ok(cnbQuotes.includes('CZK') && cnbQuotes.includes('XDR') && cnbQuotes.includes('USD'), cnbQuotes.join(' '));
    assert.deepEqual(cnbQuotes, [...cnbQuotes].sort());
    assert.equal((await service.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': afterCnb.etag } })).statusCode, 304);
  });
});
