/**
 * Cross-checks on local stand-ins for the ECB and the central banks (6 March 2026: the ECB, NBU,
 * NBP, CNB and the Bank of Israel publish). The NBP, preferred, publishes a wrong dollar (×1000,
 * or inverted); the ECB, the NBU and the CNB, which quote both the dollar and the zloty, agree.
 * The wrong number is flagged (log, metric, /readyz, /providers) and not served: EUR→USD is the
 * ECB's published number, and provenance says why. With only two others, it is flagged but still
 * served. Expectations are computed from the recorded bytes with decimal.js.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { nbpOn, startCentralBankStandIns, TIMES_1000, wrongNbpDollar, type CentralBankStandIns } from '../support/central-banks.js';
import { ECB_CSV } from '../support/data.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate, parseEcbCsv, type Dec } from '../e2e/independent.js';

const DAY = '2026-03-05';
const ecb = parseEcbCsv(ECB_CSV);
const ecbOn = (day: string, code: string): Dec => ecb.days.find((d) => d.date === day)!.values.get(code)!;
const INVERTED = (mid: Dec) => new D(1).div(mid).toDecimalPlaces(6).toFixed();

interface Outlier {
  currency: string;
  day: string;
  base: string;
  rate: string;
  median: string;
  others: string[];
  agreeing: number;
  setAside: boolean;
}
type ProviderView = { id: string; crossCheck: { state: string; outliers: Outlier[] } };

async function startService(fake: FakeUpstreams, banks: CentralBankStandIns, providers: string): Promise<FeedsService> {
  const service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: providers, EXRATES_NOW: '2026-03-06T12:00:00Z' } });
  // Each refresh is followed by a cross-check; the last one sees every provider's numbers.
  await service.deps.refresher.refreshAll();
  await service.deps.refresher.refreshProvider(service.deps.providers.find((p) => p.id === 'nbp')!);
  return service;
}

describe('cross-checks between providers', () => {
  let fake: FakeUpstreams;
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = DAY;
  });
  after(() => closeFakeFeeds(fake));

  for (const [name, rewrite] of [
    ['×1000', TIMES_1000],
    ['inverted', INVERTED],
  ] as const) {
    describe(`the NBP publishes its dollar ${name}; the ECB, the NBU and the CNB agree with each other`, () => {
      let banks: CentralBankStandIns;
      let service: FeedsService;
      const published = rewrite(nbpOn(DAY, 'USD'));
      before(async () => {
        banks = await startCentralBankStandIns('2026-03-06', { nbp: wrongNbpDollar(rewrite) });
        service = await startService(fake, banks, 'nbp,ecb,bancaditalia,nbu,cnb,boc,norgesbank,riksbank,boe,boi');
      });
      after(async () => {
        await service.close();
        await banks.close();
      });

      it('is flagged in a warning log line naming the provider, the currency, the day and both numbers', () => {
        // Checks after earlier refreshes, with fewer others loaded, may have flagged it as still served first.
        const line = service.log.lines.find((l) => l['provider'] === 'nbp' && l['currency'] === 'USD' && l['day'] === DAY && l['served'] === false);
        assert.ok(line, JSON.stringify(service.log.lines.filter((l) => String(l['msg']).startsWith('cross-check'))));
        assert.equal(line['level'], 40);
        assert.equal(line['rate'], `1/${published}`);
        assert.match(String(line['msg']), new RegExp(`nbp's USD of ${DAY} \\(1/${published.replace('.', '\\.')} USD per PLN\\).*${String(line['median']).replace('.', '\\.')}`));
        assert.deepEqual(line['others'], ['cnb', 'ecb', 'nbu']);
      });

      it('is counted in exrates_cross_check_outliers', async () => {
        const text = await service.deps.metricsText();
        const setAside = /^exrates_cross_check_outliers\{provider="nbp",served="false"\} (\d+)$/m.exec(text);
        assert.ok(setAside, text.split('\n').filter((l) => l.includes('cross_check')).join('\n'));
        // Its dollar of each recorded day the others also published: 2 to 5 March.
        assert.equal(Number(setAside[1]), 4);
      });

      it('/readyz and /api/v1/providers show it in the NBP\'s cross-check state', async () => {
        const ready = await service.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200);
        const body = ready.json() as { providers: ProviderView[]; warnings: string[] };
        const providers = (await service.get('/api/v1/providers')).body['providers'] as ProviderView[];
        for (const view of [body.providers, providers]) {
          const nbp = view.find((p) => p.id === 'nbp')!;
          assert.equal(nbp.crossCheck.state, 'disagrees');
          const outlier = nbp.crossCheck.outliers.find((o) => o.currency === 'USD' && o.day === DAY)!;
          assert.deepEqual({ ...outlier, median: undefined }, { currency: 'USD', day: DAY, base: 'PLN', rate: `1/${published}`, median: undefined, others: ['cnb', 'ecb', 'nbu'], agreeing: 3, setAside: true });
          assert.ok(new D(outlier.median).sub(new D(1).div(nbpOn(DAY, 'USD'))).abs().lt(new D(1).div(nbpOn(DAY, 'USD')).mul('0.02')));
        }
        assert.ok(body.warnings.some((w) => w.startsWith(`cross-check: nbp's USD of ${DAY}`)), JSON.stringify(body.warnings));
        assert.equal(providers.find((p) => p.id === 'ecb')!.crossCheck.state !== 'unchecked', true);
      });

      it('is not served: EUR→USD is the ECB\'s published number, and provenance says why', async () => {
        const answer = await service.get('/api/v1/rate?from=EUR&to=USD&expand=provenance');
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body['rate'], formatRate(ecbOn(DAY, 'USD')));
        const provenance = answer.body['provenance'] as { providers: string[]; day: string; setAside: Array<Record<string, unknown>> };
        assert.deepEqual(provenance.providers, ['ecb']);
        assert.equal(provenance.day, DAY);
        assert.equal(provenance.setAside.length, 1);
        assert.equal(provenance.setAside[0]!['provider'], 'nbp');
        assert.equal(provenance.setAside[0]!['currency'], 'USD');
        assert.equal(provenance.setAside[0]!['rate'], `1/${published}`);
        assert.match(String(provenance.setAside[0]!['reason']), /3 of them agree, so it is not served/);
        // Without expand, the answer has no provenance, as before.
        assert.equal((await service.get('/api/v1/rate?from=EUR&to=USD')).body['provenance'], undefined);
      });

      it('is not served on a past date either, nor in /convert', async () => {
        const dated = await service.get('/api/v1/rate?from=EUR&to=USD&date=2026-03-04');
        assert.equal(dated.body['rate'], formatRate(ecbOn('2026-03-04', 'USD')));
        const converted = await service.get('/api/v1/convert?from=EUR&to=USD&amount=100');
        assert.equal(converted.body['rate'], formatRate(ecbOn(DAY, 'USD')));
      });

      it('is not served in /history either: the series is the ECB\'s, point for point', async () => {
        const answer = await service.get('/api/v1/history?from=EUR&to=USD&range=1m');
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const points = answer.body['points'] as Array<{ date: string; rate: string }>;
        assert.ok(points.length >= 15, `${points.length} points`);
        for (const point of points) assert.equal(point.rate, formatRate(ecbOn(point.date, 'USD')), point.date);
        assert.equal(points.at(-1)!.date, DAY);
      });

      it('is still what source=nbp answers: that provider\'s numbers as published', async () => {
        const answer = await service.get('/api/v1/rate?from=EUR&to=USD&source=nbp');
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        // 1 EUR = e PLN = e / w USD, w the wrong zlotys per dollar.
        assert.equal(answer.body['rate'], formatRate(nbpOn(DAY, 'EUR').div(published)));
      });
    });
  }

  describe('with only two others (the ECB and the CNB), the NBP\'s dollar ×1000 is flagged but still served', () => {
    let banks: CentralBankStandIns;
    let service: FeedsService;
    const published = TIMES_1000(nbpOn(DAY, 'USD'));
    before(async () => {
      banks = await startCentralBankStandIns('2026-03-06', { nbp: wrongNbpDollar(TIMES_1000) });
      service = await startService(fake, banks, 'nbp,ecb,cnb');
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it('flags it (log, /providers) without setting it aside', async () => {
      const line = service.log.lines.find((l) => l['provider'] === 'nbp' && l['currency'] === 'USD' && l['day'] === DAY);
      assert.ok(line);
      assert.equal(line['served'], true);
      const providers = (await service.get('/api/v1/providers')).body['providers'] as ProviderView[];
      const outlier = providers.find((p) => p.id === 'nbp')!.crossCheck.outliers.find((o) => o.currency === 'USD' && o.day === DAY)!;
      assert.equal(outlier.agreeing, 2);
      assert.equal(outlier.setAside, false);
    });

    it('serves it: EUR→USD is the NBP\'s cross of its euro and its (wrong) dollar', async () => {
      const answer = await service.get('/api/v1/rate?from=EUR&to=USD&expand=provenance');
      assert.equal(answer.body['rate'], formatRate(nbpOn(DAY, 'EUR').div(published)));
      const provenance = answer.body['provenance'] as Record<string, unknown>;
      assert.deepEqual(provenance['providers'], ['nbp']);
      assert.equal(provenance['setAside'], undefined);
    });
  });
});
