/**
 * The service on local stand-ins for the ECB, Banca d'Italia and the eight national banks (each
 * serving its recorded documents) answers a pair whose currencies come from two providers with
 * exactly the cross of the numbers those providers published on one day, rounded once (SPEC §2,
 * §3), and a pair one bank quotes alone with the cross of its two published numbers through its
 * own currency. The expectations are computed here from the recorded bytes with decimal.js, not
 * with the service's parsers or arithmetic.
 *
 * The recordings are of different days, so the service runs on four dates: February (ECB, Banca
 * d'Italia, CNB), 6 March (ECB, NBU, NBP, CNB, Bank of Israel: its recording holds 2, 5 and 6
 * March), 18 March (Bank of Canada 12–18 March, Norges Bank from 16 March, Bank of England from 17
 * March, the NBU to 16 March, the CNB) and 25 March (the Riksbank from 24 March, Norges Bank to
 * 24 March, the CNB).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { BDI_DAYS, bdiRows, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { ECB_CSV } from '../support/data.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate, parseEcbCsv, type Dec } from '../e2e/independent.js';

/** The default order: Banca d'Italia last, so each other bank serves what it quotes first. */
const PROVIDERS = 'ecb,nbu,nbp,cnb,boc,norgesbank,riksbank,boe,boi,bancaditalia';
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

/** Canadian dollars per unit: the Valet value of the series labelled `<code>/CAD`. */
function bocOn(day: string, code: string): Dec {
  const valet = JSON.parse(recorded('boc/01.json').toString('utf8')) as { seriesDetail: Record<string, { label: string }>; observations: Array<Record<string, { v: string } | string>> };
  const series = Object.keys(valet.seriesDetail).find((name) => valet.seriesDetail[name]!.label === `${code}/CAD`)!;
  return new D((valet.observations.find((o) => o['d'] === day)![series] as { v: string }).v);
}
/** Kroner per unit: OBS_VALUE over 10^UNIT_MULT of the row `<code>,NOK` of that day. */
function nbOn(day: string, code: string): Dec {
  const row = recorded('nb/01.csv').toString('utf8').split('\n').map((line) => line.split(',')).find((f) => f[1] === code && f[2] === 'NOK' && f[8] === day)!;
  return new D(row[9]!).div(new D(10).pow(row[6]!));
}
/** Kronor per unit: the value of `SEK<code>PMI` that day. */
function rbOn(day: string, code: string): Dec {
  return new D(new RegExp(`"seriesId":"SEK${code}PMI","date":"${day}","value":([0-9.]+)`).exec(recorded('rb/01.json').toString('utf8'))![1]!);
}
/** Units per pound: the cell of the currency's "into sterling" series on that day. */
function boeOn(day: string, code: string): Dec {
  const series: Record<string, string> = { USD: 'XUDLUSS', CAD: 'XUDLCDS', NOK: 'XUDLNKS', SEK: 'XUDLSKS', ILS: 'XUDLBK78', SAR: 'XUDLSRS' };
  const [header, ...rows] = recorded('boe/01.csv').toString('utf8').trimEnd().split('\r\n').map((line) => line.split(','));
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const written = `${Number(day.slice(8))} ${months[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`;
  return new D(rows.find((r) => r[0] === written || r[0] === `0${written}`)![header!.indexOf(series[code]!)]!);
}
/** Shekels per unit: OBS_VALUE over 10^UNIT_MULT of the row `<code>,ILS` of that day. */
function boiOn(day: string, code: string): Dec {
  const row = recorded('boi/01.csv').toString('utf8').split('\n').map((line) => line.split(',')).find((f) => f[2] === code && f[3] === 'ILS' && f[12] === day)!;
  return new D(row[13]!).div(new D(10).pow(row[10]!));
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
      // Nothing the other banks' stand-ins hold is dated yet: their loads fail, which blocks nothing else.
      assert.deepEqual(ok, { ecb: true, nbu: false, nbp: false, cnb: true, boc: false, norgesbank: false, riksbank: false, boe: false, boi: false, bancaditalia: true });
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it("USD→AFN: USD from the ECB, AFN from Banca d'Italia's day document, through the euro on 2026-02-11", async () => {
      const answer = await rate(service, 'USD', 'AFN');
      assert.equal(answer.rate, formatRate(bdiOn('2026-02-11', 'AFN').div(ecbOn('2026-02-11', 'USD'))));
      assert.equal(answer.asOf, '2026-02-11T15:00:00Z');
      assert.equal(answer.stale, false);
      // A live answer needs the day document alone: no history is loaded for it.
      assert.ok(!banks.requests.bdi.some((u) => u.pathname.endsWith('/dailyTimeSeries')));
    });

    it("XDR→AFN: Banca d'Italia, which serves AFN, quotes the SDR too: its two numbers, not a cross with the CNB's", async () => {
      const answer = await rate(service, 'XDR', 'AFN');
      const day = '2026-02-11';
      // 1 XDR = 1 / s EUR = a / s AFN, s its SDRs per euro.
      assert.equal(answer.rate, formatRate(bdiOn(day, 'AFN').div(bdiOn(day, 'XDR'))));
      assert.equal(answer.asOf, `${day}T15:00:00Z`);
    });

    it("EUR→CZK is the CNB's published number: the koruna's own central bank serves it, and quotes the euro", async () => {
      const response = await service.get('/api/v1/rate?from=EUR&to=CZK&expand=provenance');
      const provenance = response.body.provenance as { providers: string[]; day: string };
      assert.deepEqual(provenance.providers, ['cnb']);
      assert.equal(response.body.rate, formatRate(cnbOn(provenance.day, 'EUR')));
    });
  });

  describe('on 6 March: ECB, NBU, NBP, CNB and the Bank of Israel publish', () => {
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
        // Banca d'Italia's recordings are of February: no document in the week to today.
        ['boc', 'norgesbank', 'riksbank', 'boe', 'bancaditalia'],
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

    it('JOD→UAH: the Jordanian dinar from the Bank of Israel, the hryvnia from the NBU, through the shekel the NBU quotes', async () => {
      // 1 JOD = j ILS = j × s UAH, s the NBU's hryvnias per shekel; 6 March is the last day both published.
      const answer = await rate(service, 'JOD', 'UAH');
      assert.equal(answer.rate, formatRate(boiOn('2026-03-06', 'JOD').mul(nbuOn('2026-03-06', 'ILS'))));
    });

    it('JOD→CZK: the dinar from the Bank of Israel, the koruna from its own central bank, the CNB, through the shekel the CNB quotes on 6 March', async () => {
      // 1 JOD = j ILS = j × s CZK, s the CNB's koruna per shekel.
      const both = '2026-03-06';
      const answer = await rate(service, 'JOD', 'CZK');
      assert.equal(answer.rate, formatRate(boiOn(both, 'JOD').mul(cnbOn(both, 'ILS'))));
    });
  });

  describe('on 18 March, the Bank of England preferred: the Bank of Canada, Norges Bank, the Bank of England, the NBU and the CNB publish', () => {
    let banks: CentralBankStandIns;
    let service: FeedsService;
    const day = '2026-03-18';
    before(async () => {
      fake.ecb.historyThrough = '2026-03-05';
      banks = await startCentralBankStandIns(day);
      const providers = 'boe,ecb,nbu,nbp,cnb,boc,norgesbank,riksbank,boi,bancaditalia';
      service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: providers, EXRATES_NOW: '2026-03-18T22:00:00Z' } });
      const outcomes = await service.deps.refresher.refreshAll();
      // The Riksbank recording starts on 24 March: nothing to load yet; Banca d'Italia's are of February.
      assert.deepEqual(
        outcomes.filter((o) => !o.ok).map((o) => o.provider),
        ['riksbank', 'bancaditalia'],
        JSON.stringify(outcomes.map((o) => [o.provider, o.error])),
      );
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it('CAD→NOK, though the Bank of England is first: the krone from its own central bank, Norges Bank, which quotes the Canadian dollar too', async () => {
      assert.equal((await rate(service, 'CAD', 'NOK')).rate, formatRate(nbOn(day, 'CAD')));
    });

    it("SEK→ILS: the Bank of Israel, the shekel's own bank, quotes the krona, but its last krona (of 2 March) is set aside by the cross-check; the Bank of England quotes both", async () => {
      const response = await service.get('/api/v1/rate?from=SEK&to=ILS&expand=provenance');
      assert.equal(response.body.rate, formatRate(boeOn(day, 'ILS').div(boeOn(day, 'SEK'))));
      assert.deepEqual((response.body.provenance as { providers: string[] }).providers, ['boe']);
      const providers = (await service.get('/api/v1/providers')).body.providers as Array<{ id: string; crossCheck: { outliers: Array<{ currency: string; day: string; setAside: boolean }> } }>;
      const boi = providers.find((p) => p.id === 'boi')!;
      assert.ok(boi.crossCheck.outliers.some((o) => o.currency === 'SEK' && o.day === '2026-03-02' && o.setAside));
    });

    it('USD→SAR, neither issued by a configured bank: both from the Bank of England, the first provider in the order quoting them', async () => {
      // 1 USD = 1 / u GBP = s / u SAR.
      assert.equal((await rate(service, 'USD', 'SAR')).rate, formatRate(boeOn(day, 'SAR').div(boeOn(day, 'USD'))));
    });

    it('GBP→UAH: the NBU quotes both, and its hryvnias per pound of 16 March are served as published', async () => {
      assert.equal((await rate(service, 'GBP', 'UAH')).rate, formatRate(nbuOn('2026-03-16', 'GBP')));
    });

    it('PEN→BYN: the sol from the Bank of Canada, the Belarusian rouble from Norges Bank, through the krone the Bank of Canada quotes', async () => {
      // 1 PEN = p CAD = p / k NOK = p / k / b BYN, k the Canadian dollars per krone, b the kroner per rouble.
      const answer = await rate(service, 'PEN', 'BYN');
      assert.equal(answer.rate, formatRate(bocOn(day, 'PEN').div(bocOn(day, 'NOK')).div(nbOn(day, 'BYN'))));
    });

    it('SAR→BYN: the riyal from the Bank of England, the Belarusian rouble from Norges Bank, through the krone', async () => {
      // 1 SAR = 1 / s GBP = n / s NOK = n / s / b BYN.
      const answer = await rate(service, 'SAR', 'BYN');
      assert.equal(answer.rate, formatRate(boeOn(day, 'NOK').div(boeOn(day, 'SAR')).div(nbOn(day, 'BYN'))));
    });

    it('RUB→XAU: the rouble from the Bank of Canada, gold from the NBU, through the Canadian dollar on 16 March, the last day both published', async () => {
      // 1 RUB = r CAD = r × c UAH = r × c / g XAU.
      const answer = await rate(service, 'RUB', 'XAU');
      const both = '2026-03-16';
      assert.equal(answer.rate, formatRate(bocOn(both, 'RUB').mul(nbuOn(both, 'CAD')).div(nbuOn(both, 'XAU'))));
    });
  });

  describe('on 25 March, the Riksbank preferred: the Riksbank, Norges Bank and the CNB publish', () => {
    let banks: CentralBankStandIns;
    let service: FeedsService;
    const day = '2026-03-25';
    before(async () => {
      fake.ecb.historyThrough = '2026-03-05';
      banks = await startCentralBankStandIns(day);
      const providers = 'riksbank,norgesbank,cnb,ecb,nbu,nbp,boc,boe,boi,bancaditalia';
      service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: providers, EXRATES_NOW: '2026-03-25T22:00:00Z' } });
      const outcomes = await service.deps.refresher.refreshAll();
      // Banca d'Italia's recordings are of February: no document in the week to today.
      assert.deepEqual(
        outcomes.filter((o) => !o.ok).map((o) => o.provider),
        ['bancaditalia'],
        JSON.stringify(outcomes.map((o) => [o.provider, o.error])),
      );
    });
    after(async () => {
      await service.close();
      await banks.close();
    });

    it('CAD→NOK, though the Riksbank is first: Norges Bank, the krone\'s own central bank, quotes both (24 March, its last day)', async () => {
      assert.equal((await rate(service, 'CAD', 'NOK')).rate, formatRate(nbOn('2026-03-24', 'CAD')));
    });

    it('SEK→CHF: the krona from the Riksbank, its own central bank and first in the order, which quotes the franc: the exact reciprocal of its kronor per franc', async () => {
      assert.equal((await rate(service, 'SEK', 'CHF')).rate, formatRate(new D(1).div(rbOn(day, 'CHF'))));
    });

    it('BYN→CZK: Norges Bank quotes both (the Riksbank no rouble), on 24 March, its last day', async () => {
      assert.equal((await rate(service, 'BYN', 'CZK')).rate, formatRate(nbOn('2026-03-24', 'BYN').div(nbOn('2026-03-24', 'CZK'))));
    });
  });
});
