/**
 * The service on local stand-ins for the ECB, Banca d'Italia, the NBU, the NBP and the CNB (each
 * serving its recorded documents) answers a pair whose currencies come from two providers with
 * exactly the cross of the numbers those providers published on one day, rounded once (SPEC §2,
 * §3). The expectations are computed here from the recorded bytes with decimal.js, not with the
 * service's parsers or arithmetic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { BDI_DAYS, bdiRows, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { ECB_CSV } from '../support/data.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate, parseEcbCsv, type Dec } from '../e2e/independent.js';

const PROVIDERS = 'ecb,bancaditalia,nbu,nbp,cnb';
const ecb = parseEcbCsv(ECB_CSV);
const ecbOn = (day: string, code: string): Dec => ecb.days.find((d) => d.date === day)!.values.get(code)!;
const bdiOn = (day: string, code: string): Dec => new D(bdiRows(recorded(BDI_DAYS[day]!).toString('utf8')).find((r) => r.code === code)!.rate);
/** Koruna per unit: the published rate over the published amount. */
function cnbOn(day: string, code: string): Dec {
  const m = new RegExp(`\\{"currencyCode":"${code}","amount":(\\d+),"validFor":"${day}","rate":([0-9.]+)\\}`).exec(recorded('cnb/01.json').toString('utf8'))!;
  return new D(m[2]!).div(m[1]!);
}
/** Hryvnias per unit: the published rate over the published units. */
function nbuOn(day: string, code: string): Dec {
  const dotted = `${day.slice(8)}.${day.slice(5, 7)}.${day.slice(0, 4)}`;
  const m = new RegExp(`"exchangedate":"${dotted}","r030":\\d+,"cc":"${code}","txt":"[^"]*","enname":"[^"]*","rate":([0-9.]+),"units":(\\d+)`).exec(recorded('nbu/01.json').toString('utf8'))!;
  return new D(m[1]!).div(m[2]!);
}
/** Zlotys per unit in that day's table A. */
function nbpOn(day: string, code: string): Dec {
  const table = recorded('nbp/01.json').toString('utf8').split('{"table":"A"').find((t) => t.includes(`"effectiveDate":"${day}"`))!;
  return new D(new RegExp(`"code":"${code}","mid":([0-9.]+)`).exec(table)![1]!);
}

async function rate(service: FeedsService, from: string, to: string): Promise<{ rate: string; asOf: string; stale: boolean }> {
  const response = await service.get(`/api/v1/rate?from=${from}&to=${to}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body as { rate: string; asOf: string; stale: boolean };
}

describe('a cross between providers is the exact cross of their published numbers', () => {
  let fake: FakeUpstreams;
  before(async () => {
    fake = await startFakeUpstreams();
  });
  after(() => closeFakeFeeds(fake));

  describe("in February: ECB, Banca d'Italia and CNB publish (the NBU and NBP recordings are of March)", () => {
    let banks: CentralBankStandIns;
    let service: FeedsService;
    before(async () => {
      fake.ecb.historyThrough = '2026-02-11';
      banks = await startCentralBankStandIns('2026-02-12');
      service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: PROVIDERS, EXRATES_NOW: '2026-02-12T12:00:00Z' } });
      const outcomes = await service.deps.refresher.refreshAll();
      const ok = Object.fromEntries(outcomes.map((o) => [o.provider, o.ok]));
      // Nothing the NBU or NBP stand-in holds is dated yet: their loads fail, which blocks nothing else.
      assert.deepEqual(ok, { ecb: true, bancaditalia: true, nbu: false, nbp: false, cnb: true });
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it("USD→AFN: USD from the ECB, AFN loaded from Banca d'Italia on first request, through the euro on 2026-02-11", async () => {
      const answer = await rate(service, 'USD', 'AFN');
      assert.equal(answer.rate, formatRate(bdiOn('2026-02-11', 'AFN').div(ecbOn('2026-02-11', 'USD'))));
      assert.equal(answer.asOf, '2026-02-11T15:00:00Z');
      assert.equal(answer.stale, false);
      assert.ok(banks.requests.bdi.some((u) => u.pathname.endsWith('/dailyTimeSeries') && u.searchParams.get('baseCurrencyIsoCode') === 'AFN'));
    });

    it("XDR→AFN: XDR from the CNB (koruna per SDR), AFN from Banca d'Italia, through the euro the CNB also fixes", async () => {
      const answer = await rate(service, 'XDR', 'AFN');
      const day = '2026-02-11';
      // 1 XDR = k CZK = k / e EUR = a × k / e AFN.
      assert.equal(answer.rate, formatRate(bdiOn(day, 'AFN').mul(cnbOn(day, 'XDR')).div(cnbOn(day, 'EUR'))));
      assert.equal(answer.asOf, `${day}T00:00:00Z`);
    });

    it('EUR→CZK stays the ECB\'s published number (the first provider quoting both)', async () => {
      assert.equal((await rate(service, 'EUR', 'CZK')).rate, formatRate(ecbOn('2026-02-11', 'CZK')));
    });
  });

  describe('in March: ECB, NBU, NBP and CNB publish', () => {
    let banks: CentralBankStandIns;
    let service: FeedsService;
    const day = '2026-03-05';
    before(async () => {
      fake.ecb.historyThrough = '2026-03-05';
      banks = await startCentralBankStandIns('2026-03-06');
      service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: PROVIDERS, EXRATES_NOW: '2026-03-06T12:00:00Z' } });
      const outcomes = await service.deps.refresher.refreshAll();
      assert.deepEqual(
        outcomes.filter((o) => !o.ok).map((o) => o.provider),
        [],
        JSON.stringify(outcomes.map((o) => [o.provider, o.error])),
      );
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it('ISK→UAH: ISK from the ECB, the hryvnia from the NBU, through the euro on the last day both published', async () => {
      const answer = await rate(service, 'ISK', 'UAH');
      // 1 ISK = 1 / i EUR = u / i UAH, u the NBU's hryvnias per euro.
      assert.equal(answer.rate, formatRate(nbuOn(day, 'EUR').div(ecbOn(day, 'ISK'))));
    });

    it('XAU→CLP: gold from the NBU, the Chilean peso from the NBP, through the zloty the NBU also quotes', async () => {
      const answer = await rate(service, 'XAU', 'CLP');
      // 1 XAU = g UAH = g / z PLN = g / z / c CLP.
      assert.equal(answer.rate, formatRate(nbuOn(day, 'XAU').div(nbuOn(day, 'PLN')).div(nbpOn(day, 'CLP'))));
      assert.equal(answer.asOf, `${day}T00:00:00Z`);
    });

    it('XDR→ISK: the SDR from the NBU, ISK from the ECB', async () => {
      const answer = await rate(service, 'XDR', 'ISK');
      assert.equal(answer.rate, formatRate(nbuOn(day, 'XDR').div(nbuOn(day, 'EUR')).mul(ecbOn(day, 'ISK'))));
    });

    it('USD→UAH, both quoted by the NBU, is its published number exactly (the reciprocal stored is read back exactly)', async () => {
      // The ECB is preferred for USD but does not quote UAH; the NBU quotes both and serves the pair alone.
      const answer = await rate(service, 'USD', 'UAH');
      assert.equal(answer.rate, formatRate(nbuOn('2026-03-06', 'USD')));
    });
  });
});
