/**
 * `source=<provider id>`: the answer uses that provider's published numbers alone (both
 * currencies through its base, on its days), over real HTTP on stand-ins for the ECB, Banca
 * d'Italia and the Czech National Bank serving their recorded documents. The expectations are
 * computed here from the recorded bytes with decimal.js, not with the service's parsers or
 * arithmetic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { BDI_DAYS, bdiRows, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { ECB_CSV } from '../support/data.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { convertResult, D, formatRate, parseEcbCsv, rangeStart, type Dec } from '../e2e/independent.js';

/** The ECB's and Banca d'Italia's newest day; the CNB publishes its rates for the day they are fixed, today. */
const DAY = '2026-02-11';
const TODAY = '2026-02-12';
const ecb = parseEcbCsv(ECB_CSV);
const ecbOn = (day: string, code: string): Dec => ecb.days.find((d) => d.date === day)!.values.get(code)!;
const bdiOn = (day: string, code: string): Dec => new D(bdiRows(recorded(BDI_DAYS[day]!).toString('utf8')).find((r) => r.code === code)!.rate);
const CNB = recorded('cnb/01.json').toString('utf8');
/** Koruna per unit: the published rate over the published amount. */
function cnbOn(day: string, code: string): Dec | undefined {
  const m = new RegExp(`\\{"currencyCode":"${code}","amount":(\\d+),"validFor":"${day}","rate":([0-9.]+)\\}`).exec(CNB);
  return m ? new D(m[2]!).div(m[1]!) : undefined;
}
const cnbDays = [...new Set([...CNB.matchAll(/"validFor":"([0-9-]{10})"/g)].map((m) => m[1]!))].sort();

describe('source=<provider id> answers from that provider alone', () => {
  let fake: FakeUpstreams;
  let banks: CentralBankStandIns;
  let service: FeedsService;
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = DAY;
    banks = await startCentralBankStandIns(TODAY);
    service = await createFeedsService(fake, {
      env: { ...banks.env(), EXRATES_PROVIDERS: 'ecb,cnb,bancaditalia', EXRATES_NOW: '2026-02-12T12:00:00Z' },
      tier: 'pro',
    });
    const outcomes = await service.deps.refresher.refreshAll();
    assert.deepEqual(
      outcomes.map((o) => [o.provider, o.ok]),
      [
        ['ecb', true],
        ['cnb', true],
        ['bancaditalia', true],
      ],
    );
  });
  after(async () => {
    await service?.close();
    await banks?.close();
    await closeFakeFeeds(fake);
  });

  const inject = (url: string) => service.app.inject({ method: 'GET', url, headers: { 'x-api-key': service.key } });

  it('/rate: each provider its own published numbers, crossed through its own base', async () => {
    const plain = await service.get('/api/v1/rate?from=USD&to=GBP');
    assert.equal(plain.status, 200);
    assert.equal(plain.body.rate, formatRate(ecbOn(DAY, 'GBP').div(ecbOn(DAY, 'USD'))));
    const cnb = await service.get('/api/v1/rate?from=USD&to=GBP&source=cnb');
    assert.equal(cnb.status, 200, JSON.stringify(cnb.body));
    // 1 USD = u CZK = u / g GBP.
    assert.equal(cnb.body.rate, formatRate(cnbOn(TODAY, 'USD')!.div(cnbOn(TODAY, 'GBP')!)));
    assert.equal(cnb.body.asOf, `${TODAY}T00:00:00Z`);
    assert.notEqual(cnb.body.rate, plain.body.rate);
    const bdi = await service.get('/api/v1/rate?from=USD&to=GBP&source=BancaDItalia');
    assert.equal(bdi.status, 200, JSON.stringify(bdi.body));
    assert.equal(bdi.body.rate, formatRate(bdiOn(DAY, 'GBP').div(bdiOn(DAY, 'USD'))));
    // EUR→CZK from the CNB is its own published number, inverted exactly; from the ECB, the ECB's.
    assert.equal((await service.get('/api/v1/rate?from=EUR&to=CZK&source=cnb')).body.rate, formatRate(cnbOn(TODAY, 'EUR')!));
    assert.equal((await service.get('/api/v1/rate?from=EUR&to=CZK&source=ecb')).body.rate, formatRate(ecbOn(DAY, 'CZK')));
  });

  it('/rate with a date: that provider\'s point of the latest of its days on or before it', async () => {
    const answer = await service.get('/api/v1/rate?from=GBP&to=JPY&date=2026-02-08&source=cnb');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const day = cnbDays.filter((d) => d <= '2026-02-08').at(-1)!;
    assert.equal(answer.body.rate, formatRate(cnbOn(day, 'GBP')!.div(cnbOn(day, 'JPY')!)));
    assert.equal(answer.body.asOf, `${day}T00:00:00Z`);
  });

  it('/convert: amount × the provider\'s rate, as /convert answers it', async () => {
    const answer = await service.get('/api/v1/convert?from=PLN&to=HUF&amount=1234.5&source=cnb');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const rate = formatRate(cnbOn(TODAY, 'PLN')!.div(cnbOn(TODAY, 'HUF')!));
    assert.equal(answer.body.rate, rate);
    assert.equal(answer.body.result, convertResult('1234.5', rate, 'HUF'));
  });

  it('/rates: every entry from the provider; without `to`, the currencies it quotes now', async () => {
    const named = await service.get('/api/v1/rates?from=CHF&to=USD,EUR,JPY&amount=10&source=cnb');
    assert.equal(named.status, 200, JSON.stringify(named.body));
    const entries = named.body.rates as Array<{ to: string; rate: string; result: string }>;
    assert.deepEqual(entries.map((e) => e.to), ['EUR', 'JPY', 'USD']);
    for (const entry of entries) {
      const rate = formatRate(cnbOn(TODAY, 'CHF')!.div(cnbOn(TODAY, entry.to)!));
      assert.equal(entry.rate, rate, entry.to);
      assert.equal(entry.result, convertResult('10', rate, entry.to), entry.to);
    }
    const all = await service.get('/api/v1/rates?from=EUR&source=cnb');
    assert.equal(all.status, 200);
    const quoted = [...CNB.matchAll(new RegExp(`"currencyCode":"([A-Z]{3})","amount":\\d+,"validFor":"${TODAY}"`, 'g'))].map((m) => m[1]!);
    const expected = [...quoted, 'CZK'].filter((c) => c !== 'EUR').sort();
    assert.deepEqual((all.body.rates as Array<{ to: string }>).map((e) => e.to), expected);
    for (const entry of all.body.rates as Array<{ to: string; rate: string }>) {
      const perEur = entry.to === 'CZK' ? cnbOn(TODAY, 'EUR')! : cnbOn(TODAY, 'EUR')!.div(cnbOn(TODAY, entry.to)!);
      assert.equal(entry.rate, formatRate(perEur), entry.to);
    }
  });

  it('/history: the provider\'s days and numbers only', async () => {
    const answer = await service.get('/api/v1/history?from=USD&to=NOK&range=1m&source=cnb');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const points = answer.body.points as Array<{ date: string; rate: string }>;
    const start = rangeStart(TODAY, '1m');
    const days = cnbDays.filter((d) => d >= start && d <= TODAY && cnbOn(d, 'USD') && cnbOn(d, 'NOK'));
    assert.deepEqual(points.map((p) => p.date), days);
    for (const point of points) assert.equal(point.rate, formatRate(cnbOn(point.date, 'USD')!.div(cnbOn(point.date, 'NOK')!)), point.date);
    const csv = await inject('/api/v1/history?from=USD&to=NOK&range=1m&source=cnb&format=csv');
    assert.equal(csv.statusCode, 200);
    assert.equal(csv.body, `date,rate\r\n${points.map((p) => `${p.date},${p.rate}\r\n`).join('')}`);
    const ecbHistory = await service.get('/api/v1/history?from=USD&to=NOK&range=1m');
    assert.equal(ecbHistory.status, 200);
    const ecbPoint = (ecbHistory.body.points as Array<{ date: string; rate: string }>).find((p) => p.date === DAY)!;
    assert.equal(ecbPoint.rate, formatRate(ecbOn(DAY, 'NOK').div(ecbOn(DAY, 'USD'))));
  });

  it('a source answer and the answer without one are kept apart: same bytes without it as before', async () => {
    for (const path of ['/api/v1/rate?from=USD&to=GBP', '/api/v1/convert?from=USD&to=GBP&amount=5', '/api/v1/rates?from=USD&to=GBP,JPY', '/api/v1/history?from=USD&to=GBP&range=1m', '/api/v1/rate?from=USD&to=GBP&date=2026-02-10']) {
      const before = await inject(path);
      const sourced = await inject(`${path}&source=cnb`);
      const after = await inject(path);
      const again = await inject(`${path}&source=cnb`);
      assert.equal(before.statusCode, 200, path);
      assert.equal(sourced.statusCode, 200, path);
      assert.equal(after.body, before.body, path);
      assert.equal(after.headers.etag, before.headers.etag, path);
      assert.equal(again.body, sourced.body, path);
      assert.notEqual(sourced.body, before.body, path);
      assert.notEqual(sourced.headers.etag, before.headers.etag, path);
    }
  });

  it('a provider that is not configured: 400 unsupported_source with param source', async () => {
    for (const path of ['/api/v1/rate?from=USD&to=GBP', '/api/v1/convert?from=USD&to=GBP&amount=1', '/api/v1/rates?from=USD', '/api/v1/history?from=USD&to=GBP', '/api/v1/rate?from=USD&to=GBP&date=2026-02-10']) {
      for (const source of ['frankfurter', 'nbu', 'no%20such', '']) {
        const answer = await service.get(`${path}&source=${source}`);
        assert.equal(answer.status, 400, `${path} ${source}`);
        assert.equal(answer.body.code, 'unsupported_source', `${path} ${source}`);
        assert.equal(answer.body.param, 'source', `${path} ${source}`);
      }
    }
    const detail = (await service.get('/api/v1/rate?from=USD&to=GBP&source=frankfurter')).body.detail as string;
    assert.match(detail, /frankfurter/);
    assert.match(detail, /ecb, cnb, bancaditalia/);
  });

  it('a currency the provider does not quote: 400 unsupported_currency naming the source and the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['/api/v1/rate?from=AFN&to=USD&source=cnb', 'from'],
      ['/api/v1/rate?from=USD&to=AFN&source=cnb', 'to'],
      ['/api/v1/convert?from=USD&to=AFN&amount=1&source=ecb', 'to'],
      ['/api/v1/rates?from=USD&to=GBP,AFN&source=cnb', 'to'],
      ['/api/v1/history?from=AFN&to=USD&source=cnb', 'from'],
      ['/api/v1/rate?from=USD&to=AFN&date=2026-02-10&source=cnb', 'to'],
    ];
    for (const [path, param] of cases) {
      const answer = await service.get(path);
      assert.equal(answer.status, 400, path);
      assert.equal(answer.body.code, 'unsupported_currency', path);
      assert.equal(answer.body.param, param, path);
      assert.match(answer.body.detail as string, /AFN.*source (cnb|ecb)/, path);
    }
    // Without a source the same pair is answered (AFN from Banca d'Italia).
    assert.equal((await service.get('/api/v1/rate?from=USD&to=AFN')).status, 200);
  });

  /** The published number's value per base, as a reader of the provenance would take it. */
  const valueOf = (n: { rate: string; reciprocalOf?: string }): Dec => (n.reciprocalOf === undefined ? new D(n.rate) : new D(1).div(n.reciprocalOf));
  const cnbText = (day: string, code: string) =>
    new RegExp(`\\{"currencyCode":"${code}","amount":(\\d+),"validFor":"${day}","rate":([0-9.]+)\\}`).exec(CNB)!;

  it('expand=provenance on /rate: the provider, the day and its published numbers, enough to recompute the rate', async () => {
    const plain = await inject('/api/v1/rate?from=USD&to=GBP&source=cnb');
    const expanded = await inject('/api/v1/rate?from=USD&to=GBP&source=cnb&expand=provenance');
    assert.equal(expanded.statusCode, 200, expanded.body);
    const body = expanded.json();
    // Everything else exactly as without it.
    const { provenance, ...rest } = body;
    assert.deepEqual(rest, plain.json());
    assert.equal(expanded.body, `${plain.body.slice(0, -1)},"provenance":${JSON.stringify(provenance)}}`);
    assert.notEqual(expanded.headers.etag, plain.headers.etag);
    // The CNB publishes koruna per unit (USD and GBP per 1): stored as their exact reciprocals.
    assert.deepEqual(provenance, {
      providers: ['cnb'],
      day: TODAY,
      bridge: null,
      numbers: ['USD', 'GBP'].map((code) => ({ provider: 'cnb', day: TODAY, base: 'CZK', currency: code, rate: `1/${cnbText(TODAY, code)[2]}`, reciprocalOf: cnbText(TODAY, code)[2] })),
    });
    const [f, t] = provenance.numbers.map(valueOf);
    assert.equal(body.rate, formatRate(t!.div(f!)));
    // A per-100 quotation: the published number over 100.
    const huf = (await service.get('/api/v1/rate?from=HUF&to=EUR&source=cnb&expand=provenance')).body;
    const hufNumber = (huf.provenance as { numbers: Array<{ currency: string; reciprocalOf: string }> }).numbers.find((n) => n.currency === 'HUF')!;
    const [, amount, published] = cnbText(TODAY, 'HUF');
    assert.equal(amount, '100');
    assert.ok(new D(hufNumber.reciprocalOf).eq(new D(published!).div(100)), hufNumber.reciprocalOf);
  });

  it("expand=provenance on a pair whose currencies the CNB and Banca d'Italia serve: the provider that quotes both, its two numbers", async () => {
    // XDR is the CNB's (preferred), AFN Banca d'Italia's, whose day document holds the SDR too: the
    // pair is one provider's, not a cross of two.
    const answer = await service.get('/api/v1/rate?from=XDR&to=AFN&expand=provenance');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const provenance = answer.body.provenance as { providers: string[]; day: string; bridge: string | null; numbers: Array<{ provider: string; currency: string; base: string; rate: string; reciprocalOf?: string }> };
    assert.deepEqual(provenance.providers, ['bancaditalia']);
    assert.equal(provenance.bridge, null);
    const day = provenance.day;
    assert.deepEqual(
      provenance.numbers.map((n) => [n.provider, n.currency, n.base]),
      [
        ['bancaditalia', 'XDR', 'EUR'],
        ['bancaditalia', 'AFN', 'EUR'],
      ],
    );
    assert.ok(new D(provenance.numbers[0]!.rate).eq(bdiOn(day, 'XDR')));
    assert.ok(new D(provenance.numbers[1]!.rate).eq(bdiOn(day, 'AFN')));
    const [f, t] = provenance.numbers.map(valueOf);
    assert.equal(answer.body.rate, formatRate(t!.div(f!)));
  });

  it('expand=provenance on /convert, /rates and a past date', async () => {
    const rate = (await service.get('/api/v1/rate?from=PLN&to=HUF&source=cnb&expand=provenance')).body;
    const plainConversion = await inject('/api/v1/convert?from=PLN&to=HUF&amount=1234.5&source=cnb');
    const conversion = await inject('/api/v1/convert?from=PLN&to=HUF&amount=1234.5&source=cnb&expand=provenance');
    assert.equal(conversion.statusCode, 200, conversion.body);
    assert.deepEqual(conversion.json().provenance, rate.provenance);
    assert.equal(conversion.body, `${plainConversion.body.slice(0, -1)},"provenance":${JSON.stringify(rate.provenance)}}`);
    const many = await service.get('/api/v1/rates?from=PLN&to=HUF,EUR&source=cnb&expand=provenance');
    assert.equal(many.status, 200, JSON.stringify(many.body));
    for (const entry of many.body.rates as Array<{ to: string; rate: string; provenance: { numbers: Array<{ rate: string; reciprocalOf?: string; currency: string }> } }>) {
      const values = new Map(entry.provenance.numbers.map((n) => [n.currency, valueOf(n)]));
      const to = entry.to === 'CZK' ? new D(1) : values.get(entry.to)!;
      assert.equal(entry.rate, formatRate(to.div(values.get('PLN')!)), entry.to);
    }
    const plainMany = await service.get('/api/v1/rates?from=PLN&to=HUF,EUR&source=cnb');
    assert.ok((plainMany.body.rates as object[]).every((e) => !('provenance' in e)));
    const dated = await service.get('/api/v1/rate?from=GBP&to=JPY&date=2026-02-08&source=cnb&expand=provenance');
    const day = cnbDays.filter((d) => d <= '2026-02-08').at(-1)!;
    assert.equal((dated.body.provenance as { day: string }).day, day);
    const bad = await service.get('/api/v1/rate?from=USD&to=GBP&expand=everything');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_format');
    assert.equal(bad.body.param, 'expand');
  });

  it('/currencies names the provider that serves each currency, and every provider that quotes it', async () => {
    const listed = (await service.get('/api/v1/currencies')).body.currencies as Array<{ code: string; servedBy: string | null; providers: string[]; onRequest: boolean }>;
    const entry = (code: string) => listed.find((c) => c.code === code)!;
    // The ECB is preferred: it serves what it quotes, but for the koruna, which its own central bank
    // serves first; the CNB what the ECB does not; Banca d'Italia the rest of its day document.
    assert.equal(entry('USD').servedBy, 'ecb');
    assert.ok(entry('USD').providers.includes('cnb'));
    assert.equal(entry('CZK').servedBy, 'cnb');
    assert.deepEqual(entry('CZK').providers.slice(0, 2), ['cnb', 'ecb']);
    assert.deepEqual(entry('XDR'), { ...entry('XDR'), servedBy: 'cnb', providers: ['cnb', 'bancaditalia'], onRequest: false });
    assert.equal(entry('AFN').servedBy, 'bancaditalia');
    const onRequest = listed.filter((c) => c.onRequest);
    assert.ok(onRequest.length > 0);
    assert.ok(onRequest.every((c) => c.servedBy === null && c.providers.includes('bancaditalia')));
    for (const c of listed.filter((x) => !x.onRequest)) {
      assert.equal(c.servedBy, c.providers[0], c.code);
      // Each provider listed for it is a source that answers for it.
      for (const source of c.providers) {
        const answer = await inject(`/api/v1/rate?from=${c.code}&to=${c.code}&source=${source}`);
        assert.equal(answer.statusCode, 200, `${c.code} ${source} ${answer.body}`);
      }
    }
  });

  it('is in the OpenAPI document on the four endpoints, and unsupported_source among the codes', async () => {
    const doc = (await inject('/api/v1/openapi.json')).json();
    for (const path of ['/api/v1/rate', '/api/v1/convert', '/api/v1/rates', '/api/v1/history']) {
      const parameter = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'source');
      assert.ok(parameter, path);
      assert.equal(parameter.in, 'query');
      assert.equal(parameter.required, false);
      assert.match(doc.paths[path].get.responses['400'].description, /unsupported_source/);
    }
    assert.ok(JSON.stringify(doc.components.schemas.Problem.properties.code).includes('unsupported_source'));
    for (const path of ['/api/v1/rate', '/api/v1/convert', '/api/v1/rates']) {
      assert.ok(doc.paths[path].get.parameters.some((p: { name: string }) => p.name === 'expand'), path);
    }
    assert.deepEqual(Object.keys(doc.components.schemas.Provenance.properties), ['providers', 'day', 'bridge', 'numbers', 'setAside', 'replaced', 'flagged']);
    // Present only when the cross-check passed over a provider's number, or flagged one used.
    assert.deepEqual(doc.components.schemas.Provenance.required, ['providers', 'day', 'bridge', 'numbers']);
    assert.equal(doc.components.schemas.Rate.properties.provenance.$ref, '#/components/schemas/Provenance');
  });
});
