/**
 * The legal parities (`peg`): the table, the providers (one per anchor), the answers with
 * `source=peg` and without, on the shared ECB history (clock at 2026-03-06T12:00:00Z), and the
 * parities as comparators in the cross-check beside Banca d'Italia's recorded day.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { isoCurrency } from '../../src/core/currencies.js';
import { crossCheck, parsePercent } from '../../src/core/cross-check.js';
import type { RateDocument } from '../../src/core/ports.js';
import { applyDocument, emptyProviderRates } from '../../src/core/rate-index.js';
import { frozenClock } from '../../src/core/time.js';
import { parseBancaDItaliaDailyRates } from '../../src/providers/bancaditalia.js';
import { createPegProvider, PARITIES, PEG_ANCHORS, pegProviderId } from '../../src/providers/peg.js';
import { expandFamilies, PROVIDER_FAMILIES, providerEntry } from '../../src/providers/registry.js';
import { createTestApp, type TestApp } from '../helper.js';
import { SHARED_DATA } from '../support/data.js';
import { ecbRow } from '../support/upstreams.js';
import { BDI_DAYS, bdiRows, recorded } from '../support/central-banks.js';
import { D } from '../e2e/independent.js';

const clock = frozenClock(new Date('2026-03-06T12:00:00Z'));

describe('the table of legal parities', () => {
  it('holds each parity once per day, against a current ISO currency, exact, with its reference', () => {
    for (const p of PARITIES) {
      assert.ok(isoCurrency(p.currency), p.currency);
      assert.ok(isoCurrency(p.anchor) && isoCurrency(p.anchor)!.withdrawn === undefined, p.anchor);
      assert.match(p.rate, /^(1\/)?\d+(\.\d+)?$/, p.currency);
      assert.ok(p.reference.length > 20, p.currency);
      const overlapping = PARITIES.filter((q) => q.currency === p.currency && q !== p && q.since <= (p.until ?? '9999') && p.since <= (q.until ?? '9999'));
      assert.deepEqual(overlapping, [], p.currency);
    }
    // Bands and managed rates are not parities.
    for (const code of ['DKK', 'HKD', 'MOP', 'CNY']) assert.ok(!PARITIES.some((p) => p.currency === code), code);
  });

  it('is one provider per anchor, the euro and the dollar first, named together as peg', () => {
    assert.deepEqual(PEG_ANCHORS.slice(0, 2), ['EUR', 'USD']);
    assert.deepEqual(PROVIDER_FAMILIES.get('peg'), PEG_ANCHORS.map(pegProviderId));
    assert.equal(providerEntry('peg-usd')?.metadata.kind, 'peg');
    assert.equal(providerEntry('peg-usd')?.metadata.base, 'USD');
    assert.deepEqual(expandFamilies(['ecb', 'peg']), ['ecb', ...PEG_ANCHORS.map(pegProviderId)]);
  });

  it('is in the default providers, last, and EXRATES_PROVIDERS takes peg for all of them', () => {
    const defaults = loadConfig({ EXRATES_CONTACT_EMAIL: 'keys@example.org' }).providers;
    assert.deepEqual(defaults.slice(-PEG_ANCHORS.length), PEG_ANCHORS.map(pegProviderId));
    assert.deepEqual(loadConfig({ EXRATES_CONTACT_EMAIL: 'keys@example.org', EXRATES_PROVIDERS: 'peg, ecb' }).providers, [...PEG_ANCHORS.map(pegProviderId), 'ecb']);
    assert.deepEqual(loadConfig({ EXRATES_CONTACT_EMAIL: 'keys@example.org', EXRATES_PROVIDERS: 'ecb,peg-usd' }).providers, ['ecb', 'peg-usd']);
    assert.throws(() => loadConfig({ EXRATES_CONTACT_EMAIL: 'keys@example.org', EXRATES_PROVIDERS: 'peg,peg-usd' }), /names a provider twice/);
  });
});

describe('a parity provider', () => {
  it('publishes every calendar day, at the start of the day, each parity as the issuer states it', async () => {
    const euro = createPegProvider({ anchor: 'EUR', clock });
    const latest = await euro.latest();
    assert.equal(latest.base, 'EUR');
    assert.equal(latest.provider, 'peg-eur');
    assert.deepEqual(
      latest.days.map((d) => d.day),
      ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'],
    );
    assert.equal(latest.days.at(-1)!.asOf, '2026-03-06T00:00:00Z');
    assert.deepEqual(latest.days.at(-1)!.rates, { XOF: '655.957', XAF: '655.957', KMF: '491.96775', XPF: '1/0.00838', CVE: '110.265', BAM: '1.95583', STN: '24.5' });
    const dollar = await createPegProvider({ anchor: 'USD', clock }).series({ from: '2025-03-29', to: '2099-01-01' });
    // Nothing after today; ANG until 2025-03-30, XCG from 2025-03-31.
    assert.equal(dollar.days.at(-1)!.day, '2026-03-06');
    const on = (day: string) => dollar.days.find((d) => d.day === day)!.rates;
    assert.deepEqual([on('2025-03-30')['ANG'], on('2025-03-30')['XCG']], ['1.79', undefined]);
    assert.deepEqual([on('2025-03-31')['ANG'], on('2025-03-31')['XCG']], [undefined, '1.79']);
    assert.equal(on('2026-03-01')['AED'], '3.6725');
    assert.equal(on('2026-03-01')['OMR'], '1/2.6008');
  });
});

describe('answers from the parities, beside the ECB', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_PROVIDERS: 'file,peg' });
  });
  after(async () => {
    await t.close();
  });
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key } });
  const rate = async (query: string) => {
    const response = await get(`/api/v1/rate?${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().rate as string;
  };

  it('answers source=peg with the parities exactly', async () => {
    assert.equal(await rate('from=EUR&to=XOF&source=peg'), '655.957');
    assert.equal(await rate('from=USD&to=AED&source=peg'), '3.6725');
    assert.equal(await rate('from=USD&to=SAR&source=peg'), '3.75');
    assert.equal(await rate('from=EUR&to=BAM&source=peg'), '1.95583');
    assert.equal(await rate('from=XOF&to=XAF&source=peg'), '1');
    assert.equal(await rate('from=USD&to=XCG&source=peg'), '1.79');
    assert.equal(await rate('from=KYD&to=USD&source=peg'), '1.2');
    assert.equal(await rate('from=OMR&to=USD&source=peg'), '2.6008');
    assert.equal(await rate('from=ZAR&to=NAD&source=PEG'), '1');
    // 1,000 XPF = 8.38 EUR: 1000 / 8.38 = 119.3317422…, rounded once to 8 significant digits.
    assert.equal(await rate('from=EUR&to=XPF&source=peg'), '119.33174');
    assert.equal(await rate('from=XPF&to=EUR&source=peg'), '0.00838');
    // One anchor's provider by its own id.
    assert.equal(await rate('from=USD&to=QAR&source=peg-usd'), '3.64');
    const dated = (await get('/api/v1/rate?from=EUR&to=XOF&source=peg&date=2024-02-29&expand=provenance')).json();
    assert.equal(dated.rate, '655.957');
    assert.deepEqual(dated.provenance.numbers, [{ provider: 'peg-eur', day: '2024-02-29', base: 'EUR', currency: 'XOF', rate: '655.957' }]);
  });

  it('refuses source=peg for a pair of currencies fixed against different anchors, or not fixed at all', async () => {
    for (const query of ['from=EUR&to=AED', 'from=XOF&to=AED', 'from=EUR&to=JPY']) {
      for (const path of ['rate', 'history']) {
        const response = await get(`/api/v1/${path}?${query}&source=peg`);
        assert.equal(response.statusCode, 400, `${path} ${query}`);
        assert.equal(response.json().code, 'unsupported_currency', `${path} ${query}`);
      }
    }
  });

  it('lists, for /rates with source=peg and no targets, the currencies fixed against the same anchor', async () => {
    const response = await get('/api/v1/rates?from=USD&source=peg');
    assert.equal(response.statusCode, 200, response.body);
    const rates = response.json().rates as Array<{ to: string; rate: string }>;
    assert.deepEqual(
      rates.map((r) => r.to),
      PARITIES.filter((p) => p.anchor === 'USD' && p.until === undefined)
        .map((p) => p.currency)
        .sort(),
    );
    assert.equal(rates.find((r) => r.to === 'SAR')!.rate, '3.75');
  });

  it('gives a history of a parity on every calendar day, all of one number', async () => {
    const response = await get('/api/v1/history?from=EUR&to=XOF&range=1m&source=peg');
    assert.equal(response.statusCode, 200, response.body);
    const { points } = response.json() as { points: Array<{ date: string; rate: string }> };
    // 2026-02-06 to 2026-03-06, every day.
    assert.equal(points.length, 29);
    assert.deepEqual([points[0]!.date, points.at(-1)!.date], ['2026-02-06', '2026-03-06']);
    assert.ok(points.every((p) => p.rate === '655.957'));
  });

  it('serves a pegged currency nobody else quotes from its parity, and across anchors through the market numbers', async () => {
    // The ECB quotes no XOF: the parity serves it.
    assert.equal(await rate('from=EUR&to=XOF'), '655.957');
    // EUR→AED: the ECB's dollar of 2026-03-05 times the dirham's parity, crossed through USD.
    const body = (await get('/api/v1/rate?from=EUR&to=AED&expand=provenance')).json();
    const usd = ecbRow('2026-03-05')!.rates['USD']!;
    assert.equal(usd, '1.1618');
    assert.equal(body.rate, '4.2667105');
    assert.deepEqual([body.provenance.providers, body.provenance.bridge, body.provenance.day], [['file', 'peg-usd'], 'USD', '2026-03-05']);
  });

  it('lists each anchor as a provider of kind peg', async () => {
    const response = await get('/api/v1/providers');
    assert.equal(response.statusCode, 200, response.body);
    const providers = response.json().providers as Array<{ id: string; kind: string; base: string; currencies: string[] }>;
    const usd = providers.find((p) => p.id === 'peg-usd')!;
    assert.equal(usd.kind, 'peg');
    assert.equal(usd.base, 'USD');
    assert.ok(usd.currencies.includes('AED') && usd.currencies.includes('XCG') && !usd.currencies.includes('ANG'));
  });
});

describe("the parities against the recorded banks' numbers", () => {
  it("agree with Banca d'Italia's day documents within the rounding of its published decimals (STN 24.5 per euro exactly, JOD 0.709 and XCG 1.79 per dollar)", () => {
    // The Cayman dollar excepted: Banca d'Italia publishes 0.82 per dollar, not the 1/1.2 the
    // Monetary Authority states (1 KYD = 1.20 USD), 1.6 % apart: within the cross-check's 2 %.
    const compared = new Set<string>();
    for (const day of Object.keys(BDI_DAYS)) {
      const rows = new Map(bdiRows(recorded(BDI_DAYS[day]!).toString('utf8')).map((r) => [r.code, r.rate]));
      for (const p of PARITIES.filter((x) => x.until === undefined && (x.anchor === 'EUR' || x.anchor === 'USD') && x.currency !== 'KYD')) {
        const theirs = rows.get(p.currency);
        const anchor = p.anchor === 'EUR' ? '1' : rows.get(p.anchor);
        if (theirs === undefined || anchor === undefined || !/^[0-9.]+$/.test(theirs)) continue;
        const ours = p.rate.startsWith('1/') ? new D(1).div(p.rate.slice(2)) : new D(p.rate);
        const cross = new D(theirs).div(anchor);
        assert.ok(cross.sub(ours).abs().div(ours).lt('0.001'), `${day} ${p.currency}: ${cross.toFixed(8)} per ${p.anchor} against ${p.rate}`);
        compared.add(p.currency);
      }
      assert.equal(rows.get('STN'), '24.5000', day);
    }
    for (const code of ['STN', 'JOD', 'XCG', 'AED', 'SAR', 'XOF', 'XAF', 'BAM', 'DJF']) assert.ok(compared.has(code), code);
  });
});

describe('the parities in the cross-check', () => {
  /** Banca d'Italia's recorded day (2026-02-09) beside the dollar parities of that day. */
  async function held(tamper: (doc: RateDocument) => void = () => undefined) {
    const bdi = parseBancaDItaliaDailyRates(readFileSync(join(SHARED_DATA, 'central-banks', 'bdi', '01.csv'), 'utf8')).document;
    const document: RateDocument = { ...bdi, provider: 'bancaditalia' };
    tamper(document);
    const bank = emptyProviderRates('bancaditalia', 'EUR');
    applyDocument(bank, document);
    const peg = emptyProviderRates('peg-usd', 'USD');
    applyDocument(peg, await createPegProvider({ anchor: 'USD', clock: frozenClock(new Date('2026-02-09T20:00:00Z')) }).series({ from: '2026-02-09', to: '2026-02-09' }));
    return crossCheck([bank, peg], parsePercent('2'));
  }

  it("compares a parity with a bank's numbers like any provider's: they agree", async () => {
    const check = await held();
    assert.ok(check.compared.has('peg-usd'));
    assert.deepEqual(check.findings.filter((f) => f.day === '2026-02-09'), []);
  });

  it("flags the dirham when the bank's number is a thousand times the parity's cross", async () => {
    const check = await held((doc) => {
      const day = doc.days.find((d) => d.day === '2026-02-09')!;
      day.rates['AED'] = '4365.1';
    });
    const aed = check.findings.filter((f) => f.currency === 'AED' && f.day === '2026-02-09');
    assert.ok(aed.length > 0);
    assert.ok(aed.every((f) => [f.provider, ...f.others].includes('peg-usd') && [f.provider, ...f.others].includes('bancaditalia')));
    // Every other currency both quote still agrees.
    assert.deepEqual(check.findings.filter((f) => f.currency !== 'AED'), []);
  });
});
