/**
 * The service configured with one of the newer banks alone (EXRATES_PROVIDERS and its
 * EXRATES_<ID>_URL pointed at a local stand-in serving the bank's recorded document) loads it
 * through the registry, the refresh and the store, and answers USD in the bank's own currency with
 * the bank's published number exactly, rounded once. The expectations are read from the recorded
 * bytes with decimal.js. The banks whose first load is one request per day or per currency and
 * month (NBG, NBK, BNM) and the SARB's 23 series are left to their own tests: at the real pace a
 * service-level first load of them takes minutes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { providerEntry } from '../../src/providers/registry.js';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate, type Dec } from '../e2e/independent.js';

const text = (bank: string) => recordingsOf(bank)[0]!.body.toString('utf8');

interface Case {
  id: string;
  base: string;
  now: string;
  day: string;
  /** Units of the bank's currency per US dollar on `day`, from the recorded bytes. */
  published: () => Dec;
}

const CASES: Case[] = [
  // A$1 = USD 0.7088 on 20 March: the dollar is 1/0.7088 Australian dollars.
  { id: 'rba', base: 'AUD', now: '2026-03-20T12:00:00Z', day: '2026-03-20', published: () => new D(1).div(text('rba').split('\n').find((l) => l.startsWith('20-Mar-2026,'))!.split(',')[1]!) },
  { id: 'dnb', base: 'DKK', now: '2026-03-31T18:00:00Z', day: '2026-03-31', published: () => new D(/USD;KBH;2026M03D31;([\d.]+)/.exec(text('dnb'))![1]!).div(100) },
  { id: 'bnr', base: 'RON', now: '2026-08-19T16:00:00Z', day: '2026-08-19', published: () => new D(/<Cube date="2026-08-19">.*?<Rate currency="USD">([\d.]+)</.exec(text('bnr'))![1]!) },
  { id: 'mnb', base: 'HUF', now: '2025-03-28T13:00:00Z', day: '2025-03-28', published: () => new D(/date="2025-03-28"&gt;.*?curr="USD"&gt;([\d,]+)&lt;/.exec(text('mnb'))![1]!.replace(',', '.')) },
  { id: 'nbrm', base: 'MKD', now: '2026-05-29T12:00:00Z', day: '2026-05-29', published: () => new D(/"datum":"2026-05-29T00:00:00","valuta":"840","oznaka":"USD","drzava":"[^"]*","nomin":1,"sreden":([\d.]+)/.exec(text('nbrm'))![1]!) },
];

describe('the newer banks, each alone behind a local stand-in, answer USD in their own currency as published', () => {
  let fake: FakeUpstreams;
  before(async () => {
    fake = await startFakeUpstreams();
  });
  after(() => closeFakeFeeds(fake));

  for (const bank of CASES) {
    describe(bank.id, () => {
      let server: BankServer;
      let service: FeedsService;
      before(async () => {
        // Whatever the provider asks for, the recorded document: the provider keeps the days it asked for.
        const recording = recordingsOf(bank.id)[0]!;
        server = await startBankServer(() => ({ body: recording.body, contentType: recording.contentType }));
        service = await createFeedsService(fake, { env: { EXRATES_PROVIDERS: bank.id, [`EXRATES_${bank.id.toUpperCase()}_URL`]: server.origin, EXRATES_NOW: bank.now } });
        const outcomes = await service.deps.refresher.refreshAll();
        assert.deepEqual(outcomes.map((o) => [o.provider, o.ok]), [[bank.id, true]], JSON.stringify(outcomes));
      });
      after(async () => {
        await service.close();
        await server.close();
      });

      it(`USD→${bank.base} is the bank's number of ${bank.day}, rounded once`, async () => {
        const response = await service.get(`/api/v1/rate?from=USD&to=${bank.base}`);
        assert.equal(response.status, 200, JSON.stringify(response.body));
        const answer = response.body as { rate: string; asOf: string; stale: boolean };
        assert.equal(answer.rate, formatRate(bank.published()));
        assert.equal(answer.asOf.slice(0, 10), bank.day);
        assert.equal(answer.stale, false);
      });

      it('the provider list names it with its terms and schedule', async () => {
        const response = await service.get('/api/v1/providers');
        assert.equal(response.status, 200);
        const [listed] = (response.body as { providers: Array<Record<string, unknown>> }).providers;
        const metadata = providerEntry(bank.id)!.metadata;
        assert.deepEqual([listed!['id'], listed!['base'], listed!['latestDay'], listed!['termsUrl'], listed!['schedule']], [bank.id, bank.base, bank.day, metadata.termsUrl, metadata.schedule]);
        assert.ok(typeof listed!['termsUrl'] === 'string' && String(listed!['termsUrl']).startsWith('https://'));
      });
    });
  }
});
