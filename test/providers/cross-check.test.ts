/**
 * Cross-checks on local stand-ins for the ECB and the central banks (6 March 2026: the ECB, NBU,
 * NBP, CNB and the Bank of Israel publish). The NBP, preferred, publishes a wrong dollar (×1000,
 * or inverted); the ECB, the NBU and the CNB, which quote both the dollar and the zloty, agree.
 * The wrong number is flagged (log, metric, /readyz, /providers) and not served: EUR→USD is the
 * ECB's published number, and provenance says why. With only two others, it is flagged but still
 * served, and named in `provenance.flagged` of an answer that uses it. Expectations are computed
 * from the recorded bytes with decimal.js.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { nbpOn, nbuOn, startCentralBankStandIns, TIMES_1000, wrongNbpDollar, wrongNbuDollar, type CentralBankStandIns } from '../support/central-banks.js';
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
        // Checks after earlier refreshes, with fewer others loaded, may have flagged it first; the last saw them all.
        const line = service.log.lines.findLast((l) => l['provider'] === 'nbp' && l['currency'] === 'USD' && l['day'] === DAY && l['served'] === false);
        assert.ok(line, JSON.stringify(service.log.lines.filter((l) => String(l['msg']).startsWith('cross-check'))));
        assert.equal(line['level'], 40);
        assert.equal(line['rate'], `1/${published}`);
        assert.match(String(line['msg']), new RegExp(`nbp's USD of ${DAY} \\(1/${published.replace('.', '\\.')} USD per PLN\\).*${String(line['median']).replace('.', '\\.')}`));
        // Logged once, by the first check that saw three others agree (the last one, with all four,
        // is asserted below in /providers): the Bank of Israel quotes no zloty, but the NBP quotes
        // its shekel, and it is compared through that.
        const others = line['others'] as string[];
        assert.ok(others.length >= 3 && others.every((o) => ['boi', 'cnb', 'ecb', 'nbu'].includes(o)), JSON.stringify(others));
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
          assert.deepEqual({ ...outlier, median: undefined }, { currency: 'USD', day: DAY, base: 'PLN', rate: `1/${published}`, median: undefined, others: ['boi', 'cnb', 'ecb', 'nbu'], agreeing: 4, setAside: true });
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
        assert.match(String(provenance.setAside[0]!['reason']), /4 of them agree, so it is not served/);
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
      // The number used is flagged all the same, in the answer that uses it.
      const flagged = provenance['flagged'] as Array<Record<string, unknown>>;
      assert.deepEqual(
        flagged.map((f) => [f['provider'], f['currency'], f['day'], f['rate'], f['agreeing']]),
        [['nbp', 'USD', DAY, `1/${published}`, 2]],
      );
      assert.match(String(flagged[0]!['reason']), /still served: fewer than 3 of them agree/);
      // Its euro agrees: an answer that uses only that carries no flag.
      const euro = await service.get('/api/v1/rate?from=PLN&to=EUR&expand=provenance');
      assert.equal((euro.body['provenance'] as Record<string, unknown>)['flagged'], undefined);
    });
  });
});

/**
 * The NBU (hryvnia base: of the others, only the NBP quotes the hryvnia) is preferred and publishes
 * its dollar ×1000 or inverted. Its dollar is compared with the ECB's, the CNB's, the NBP's and
 * the Bank of Israel's, each through a currency both quote, on each day, and on its newest day,
 * dated after the ECB's and the NBP's newest, with their newest numbers: it is set aside every
 * day, and EUR→USD is the ECB's number, live and on a date.
 */
describe('cross-checks of a provider whose base the others do not quote', () => {
  let fake: FakeUpstreams;
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = DAY;
  });
  after(() => closeFakeFeeds(fake));

  for (const [name, rewrite] of [
    ['×1000', TIMES_1000],
    ['inverted', (rate: Dec) => new D(1).div(rate).toDecimalPlaces(6).toFixed()],
  ] as const) {
    describe(`the NBU, preferred, publishes its dollar ${name}`, () => {
      let banks: CentralBankStandIns;
      let service: FeedsService;
      before(async () => {
        banks = await startCentralBankStandIns('2026-03-06', { nbu: wrongNbuDollar(rewrite) });
        service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: 'nbu,ecb,cnb,nbp,boi', EXRATES_NOW: '2026-03-06T12:00:00Z' } });
        await service.deps.refresher.refreshAll();
      });
      after(async () => {
        await service.close();
        await banks.close();
      });

      it('is set aside on every day the others published, and on its newest day, dated after the ECB\'s and the NBP\'s', async () => {
        const providers = (await service.get('/api/v1/providers')).body['providers'] as Array<ProviderView & { latestDay: string }>;
        const nbu = providers.find((p) => p.id === 'nbu')!;
        const usd = nbu.crossCheck.outliers.filter((o) => o.currency === 'USD');
        const newest = nbu.latestDay;
        assert.ok(newest > DAY, newest);
        for (const day of ['2026-03-02', '2026-03-03', '2026-03-04', DAY, newest]) {
          const outlier = usd.find((o) => o.day === day);
          assert.ok(outlier, `${day}: ${JSON.stringify(usd)}`);
          assert.equal(outlier.base, 'UAH');
          assert.equal(outlier.setAside, true, day);
          assert.ok(outlier.agreeing >= 3, day);
          for (const other of ['ecb', 'cnb', 'nbp']) assert.ok(outlier.others.includes(other), `${day}: ${outlier.others.join(',')}`);
        }
        // Nothing else of anyone's is set aside but what the recorded numbers hold without any
        // rewrite: on 2 March the shekel moved by more than 2 % between the NBU's fixing for that
        // day (made on 27 February) and the others', so the NBU's shekel and the Bank of Israel's
        // krona and rand of that day (each in shekels) differ from four others that agree.
        assert.deepEqual(
          providers.flatMap((p) => p.crossCheck.outliers.filter((o) => o.setAside && !(p.id === 'nbu' && o.currency === 'USD')).map((o) => `${p.id} ${o.currency} ${o.day}`)).sort(),
          ['boi SEK 2026-03-02', 'boi ZAR 2026-03-02', 'nbu ILS 2026-03-02'],
        );
        // The NBU's and the Bank of Israel's Egyptian and Lebanese pounds differ by more than 2 %,
        // and only the two quote them: flagged, still served.
        for (const o of nbu.crossCheck.outliers.filter((x) => x.currency === 'EGP' || x.currency === 'LBP')) assert.deepEqual([o.others, o.setAside], [['boi'], false], o.currency);
        assert.deepEqual([...new Set(nbu.crossCheck.outliers.map((o) => o.currency))].sort(), ['EGP', 'ILS', 'LBP', 'USD']);
      });

      it('is not served: EUR→USD is the ECB\'s number, live and on a date, and provenance says why', async () => {
        const live = await service.get('/api/v1/rate?from=EUR&to=USD&expand=provenance');
        assert.equal(live.status, 200, JSON.stringify(live.body));
        assert.equal(live.body['rate'], formatRate(ecbOn(DAY, 'USD')));
        const provenance = live.body['provenance'] as { providers: string[]; setAside: Array<Record<string, unknown>> };
        assert.deepEqual(provenance.providers, ['ecb']);
        assert.deepEqual(
          provenance.setAside.map((s) => [s['provider'], s['currency']]),
          [['nbu', 'USD']],
        );
        const dated = await service.get('/api/v1/rate?from=EUR&to=USD&date=2026-03-04');
        assert.equal(dated.body['rate'], formatRate(ecbOn('2026-03-04', 'USD')));
        // UAH→USD: the hryvnia is the NBU's alone, the dollar the ECB's, through the euro the NBU quotes.
        const uah = await service.get('/api/v1/rate?from=UAH&to=USD&date=2026-03-04');
        assert.equal(uah.body['rate'], formatRate(ecbOn('2026-03-04', 'USD').div(nbuOn('2026-03-04', 'EUR'))));
      });

      it('/currencies names the ECB as serving the dollar: the NBU, first in the order, is listed but its newest number is set aside', async () => {
        const listed = (await service.get('/api/v1/currencies')).body['currencies'] as Array<{ code: string; servedBy: string; providers: string[] }>;
        const usd = listed.find((c) => c.code === 'USD')!;
        assert.equal(usd.providers[0], 'nbu');
        assert.equal(usd.servedBy, 'ecb');
        // The hryvnia is the NBU's own currency: it serves it, whatever its dollar.
        assert.equal(listed.find((c) => c.code === 'UAH')!.servedBy, 'nbu');
      });

      it('is still what source=nbu answers', async () => {
        const answer = await service.get('/api/v1/rate?from=EUR&to=USD&date=2026-03-04&source=nbu');
        assert.equal(answer.body['rate'], formatRate(nbuOn('2026-03-04', 'EUR').div(rewrite(nbuOn('2026-03-04', 'USD')))));
      });
    });
  }
});
