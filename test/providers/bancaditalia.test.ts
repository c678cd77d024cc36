import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import { validateDocument } from '../../src/core/refresh.js';
import type { Clock } from '../../src/core/ports.js';
import {
  conventionOf,
  createBancaDItaliaProvider,
  csvFields,
  parseBancaDItaliaDailyRates,
  parseBancaDItaliaTimeSeries,
} from '../../src/providers/bancaditalia.js';
import { BDI_DAYS, bdiRows, CENTRAL_BANKS_DIR, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate } from '../e2e/independent.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

interface Recording {
  bank: string;
  recordings: Array<{ file: string; url: string }>;
}
const recordings = JSON.parse(readFileSync(`${CENTRAL_BANKS_DIR}/recordings.json`, 'utf8')) as Recording[];
const bdiRecordings = recordings.find((r) => r.bank === 'bdi')!.recordings;

describe("Banca d'Italia dailyRates parser, on every recorded document", () => {
  for (const [day, file] of Object.entries(BDI_DAYS)) {
    it(`${file}: every quoted currency exactly as published, N.A. and the trailer left out`, () => {
      const csv = recorded(file).toString('utf8');
      const rows = bdiRows(csv);
      const { document, skipped } = parseBancaDItaliaDailyRates(csv);
      assert.equal(document.provider, 'bancaditalia');
      assert.equal(document.base, 'EUR');
      assert.deepEqual(document.days.map((d) => d.day), [day]);
      assert.equal(document.days[0]!.asOf, `${day}T15:00:00Z`);
      const rates = document.days[0]!.rates;
      // Independently: every code with a number, each once (XOF, XAF and XCD have a row per country).
      const quoted = new Map(rows.filter((r) => r.rate !== 'N.A.').map((r) => [r.code, r.rate]));
      assert.ok(quoted.size >= 150, `${quoted.size} currencies`);
      assert.deepEqual(Object.keys(rates).sort(), [...quoted.keys()].sort());
      for (const [code, rate] of quoted) assert.equal(rates[code], rate, code);
      // Trailing zeros are the bank's digits and stay.
      assert.match(rates['BBD']!, /^2\.3\d{3}00$/);
      for (const code of ['BYN', 'IRR', 'KPW', 'RUB']) assert.equal(rates[code], undefined, code);
      assert.deepEqual(skipped.map((s) => s.code).sort(), ['BYN', 'IRR', 'KPW', 'RUB']);
      // The core takes it as it is (ISO codes, positive decimals, not in the future).
      const report = validateDocument(document, clockAt('2026-02-12T12:00:00Z'));
      assert.equal(Object.keys(report.document.days[0]!.rates).length + report.dropped.length, quoted.size);
    });
  }

  it('the recordings were requested with the documented path and query, which the adapter reproduces', () => {
    for (const [day, file] of Object.entries(BDI_DAYS)) {
      const url = new URL(bdiRecordings.find((r) => r.file === file)!.url);
      assert.equal(`${url.pathname}${url.search}`, `/terzevalute-wf-web/rest/v1.0/dailyRates?currencyIsoCode=EUR&lang=en&referenceDate=${day}`);
    }
  });

  const header = 'Country,Currency,ISO Code,UIC Code,Rate,Rate convention,Reference date (CET)';
  const line = (code: string, rate: string, convention = 'Foreign currency amount for 1 Euro.', day = '2026-02-11') =>
    `SOMEWHERE,Money,${code},001,${rate},${convention},${day}`;

  it('a row quoted as euros per unit is stored as the exact reciprocal of the published number', () => {
    const { document } = parseBancaDItaliaDailyRates([header, line('USD', '1.1886'), line('GBP', '1.1472', 'Euro amount for 1 unit of foreign currency.'), ''].join('\n'));
    assert.deepEqual(document.days[0]!.rates, { USD: '1.1886', GBP: '1/1.1472' });
    assert.equal(conventionOf('I'), 'euro-per-unit');
    assert.equal(conventionOf('C'), 'per-euro');
  });

  it('an unknown convention, a malformed rate or a currency published twice with two values refuses the document', () => {
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('USD', '1.1886', 'Dollars per something')].join('\n')), feedError(/unknown rate convention/));
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('USD', '1,1886')].join('\n')), feedError(/has 8 fields/));
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('USD', '-1.2')].join('\n')), feedError(/"-1.2" is not a plain decimal/));
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('USD', '0.0000')].join('\n')), feedError(/the rate is zero/));
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('XOF', '655.957'), line('XOF', '655.958')].join('\n')), feedError(/XOF on 2026-02-11 is published as both/));
    assert.throws(() => parseBancaDItaliaDailyRates([header, line('USD', '1.1886', undefined, '11/02/2026')].join('\n')), feedError(/not a date/));
    assert.throws(() => parseBancaDItaliaDailyRates('Paese,Valuta,Codice ISO\nX,Y,USD'), feedError(/no "iso code" column/));
    assert.throws(() => parseBancaDItaliaDailyRates('<html><body>Service Unavailable</body></html>'), feedError(/HTML/));
  });

  it('the same value in two rows (a currency of several countries) is kept once; a header alone is a day without rates', () => {
    const { document } = parseBancaDItaliaDailyRates([header, line('XOF', '655.957'), line('XOF', '655.9570')].join('\r\n'));
    assert.deepEqual(document.days[0]!.rates, { XOF: '655.957' });
    assert.deepEqual(parseBancaDItaliaDailyRates(`${header}\n\n# DISCLAIMER\n`).document.days, []);
    assert.deepEqual(csvFields('"KOREA, Rep.",Won,KRW,"1,2"""'), ['KOREA, Rep.', 'Won', 'KRW', '1,2"']);
  });
});

describe("Banca d'Italia dailyTimeSeries parser (documented layout, read defensively)", () => {
  const series = (rows: string, info = '{"totalRecords":2,"isoCode":"AFN","exchangeConventionCode":"C"}') => `{"resultsInfo":${info},"rates":[${rows}]}`;

  it('keeps each value as written, string or number, and skips N.A.', () => {
    const { document, skipped } = parseBancaDItaliaTimeSeries(
      series('{"referenceDate":"2026-02-10","avgRate":"75.5197","exchangeConvention":"Foreign currency amount for 1 Euro"},{"referenceDate":"2026-02-11","avgRate":7.55e1},{"referenceDate":"2026-02-12","avgRate":"N.A."}'),
      'AFN',
    );
    assert.deepEqual(document.days.map((d) => [d.day, d.rates]), [['2026-02-10', { AFN: '75.5197' }], ['2026-02-11', { AFN: '75.5' }]]);
    assert.deepEqual(skipped, [{ code: 'AFN', day: '2026-02-12' }]);
  });

  it('reads the convention from the row, else from the results info; the other direction is stored as a reciprocal', () => {
    const { document } = parseBancaDItaliaTimeSeries(series('{"referenceDate":"2026-02-10","avgRate":"1.1472"}', '{"isoCode":"GBP","exchangeConventionCode":"I"}'), 'GBP');
    assert.deepEqual(document.days[0]!.rates, { GBP: '1/1.1472' });
  });

  it('an empty range is an empty document; another currency, no convention or a bad value refuses the answer', () => {
    assert.deepEqual(parseBancaDItaliaTimeSeries('{"resultsInfo":{"totalRecords":0}}', 'AFN').document.days, []);
    assert.deepEqual(parseBancaDItaliaTimeSeries(series(''), 'AFN').document.days, []);
    assert.throws(() => parseBancaDItaliaTimeSeries(series('', '{"isoCode":"USD"}'), 'AFN'), feedError(/asked for the AFN series/));
    assert.throws(() => parseBancaDItaliaTimeSeries(series('{"referenceDate":"2026-02-10","avgRate":"1"}', '{}'), 'AFN'), feedError(/missing rate convention/));
    assert.throws(() => parseBancaDItaliaTimeSeries(series('{"referenceDate":"2026-02-10","avgRate":null}'), 'AFN'), feedError(/avgRate is null/));
    assert.throws(() => parseBancaDItaliaTimeSeries(series('{"referenceDate":"10/02/2026","avgRate":"1"}'), 'AFN'), feedError(/referenceDate/));
    assert.throws(() => parseBancaDItaliaTimeSeries('{"resultsInfo":{"totalRecords":3}}', 'AFN'), feedError(/no "rates"/));
    assert.throws(() => parseBancaDItaliaTimeSeries('[]', 'AFN'), feedError(/expected a time-series object/));
  });
});

describe("Banca d'Italia provider against a local stand-in", () => {
  let banks: CentralBankStandIns;
  before(async () => {
    banks = await startCentralBankStandIns('2026-02-12');
  });
  after(() => banks.close());
  const provider = (options: { paceMs?: number; log?: { info(obj: object, msg?: string): void } } = {}) =>
    createBancaDItaliaProvider({ baseUrl: banks.bdi.origin, timeoutMs: 5000, clock: clockAt('2026-02-12T12:00:00Z'), paceMs: 0, ...options });
  const since = () => banks.requests.bdi.length;

  it('latest is the newest published day, found by asking back from today, as the recorded request', async () => {
    const start = since();
    const document = await provider().latest();
    assert.deepEqual(document.days.map((d) => d.day), ['2026-02-11']);
    assert.deepEqual(document.days[0]!.rates, parseBancaDItaliaDailyRates(recorded('bdi/03.csv').toString('utf8')).document.days[0]!.rates);
    const recordedUrl = new URL(bdiRecordings.find((r) => r.file === 'bdi/03.csv')!.url);
    const asked = banks.requests.bdi.slice(start).map((u) => `${u.pathname}${u.search}`);
    assert.deepEqual(asked, ['/terzevalute-wf-web/rest/v1.0/dailyRates?currencyIsoCode=EUR&lang=en&referenceDate=2026-02-12', `${recordedUrl.pathname}${recordedUrl.search}`]);
    // The day document is kept whole, whatever currencies are asked for: each is a comparator.
    const asking = await provider().latest({ currencies: ['AFN', 'ngn'] });
    assert.deepEqual(asking.days[0]!.rates, document.days[0]!.rates);
    await assert.rejects(provider().latest({ currencies: ['AF'] }), RangeError);
    assert.equal(createBancaDItaliaProvider({ baseUrl: banks.bdi.origin, timeoutMs: 5000, clock: clockAt('2026-02-12T12:00:00Z') }).keepsWholeDays, true);
  });

  it('lists the currencies of the newest day (N.A. ones left out)', async () => {
    const codes = await provider().listCurrencies();
    assert.ok(codes.length >= 150);
    assert.ok(codes.includes('AFN') && codes.includes('ZWG') && !codes.includes('RUB') && !codes.includes('EUR'));
  });

  it('a first load of one currency over five years: one time-series call per 366 days, each as documented', async () => {
    const start = since();
    const document = await provider().series({ from: '2021-01-12', to: '2026-02-12' }, { currencies: ['AFN'] });
    const asked = banks.requests.bdi.slice(start);
    assert.equal(asked.length, 6);
    for (const url of asked) {
      assert.equal(url.pathname, '/terzevalute-wf-web/rest/v1.0/dailyTimeSeries');
      const days = (Date.parse(url.searchParams.get('endDate')!) - Date.parse(url.searchParams.get('startDate')!)) / 86_400_000 + 1;
      assert.ok(days <= 366, `${days} days`);
      assert.equal(url.searchParams.get('baseCurrencyIsoCode'), 'AFN');
      assert.equal(url.searchParams.get('currencyIsoCode'), 'EUR');
    }
    assert.equal(asked[0]!.searchParams.get('startDate'), '2021-01-12');
    assert.equal(asked.at(-1)!.searchParams.get('endDate'), '2026-02-12');
    const expected = Object.entries(BDI_DAYS).map(([day, file]) => [day, { AFN: bdiRows(recorded(file).toString('utf8')).find((r) => r.code === 'AFN')!.rate }]);
    assert.deepEqual(document.days.map((d) => [d.day, d.rates]), expected);
  });

  it('a short catch-up of many currencies reads the day documents instead (fewer requests), and keeps them whole', async () => {
    const start = since();
    const document = await provider().series({ from: '2026-02-07', to: '2026-02-12' }, { currencies: ['AFN', 'USD', 'XOF', 'RUB'] });
    const asked = banks.requests.bdi.slice(start).map((u) => u.searchParams.get('referenceDate'));
    assert.deepEqual(asked, ['2026-02-09', '2026-02-10', '2026-02-11', '2026-02-12']);
    assert.deepEqual(document.days.map((d) => d.day), ['2026-02-09', '2026-02-10', '2026-02-11']);
    for (const d of document.days) {
      assert.deepEqual(d.rates, parseBancaDItaliaDailyRates(recorded(BDI_DAYS[d.day]!).toString('utf8')).document.days[0]!.rates, d.day);
    }
    // Without currencies, a range is read from its day documents alone.
    const all = await provider().series({ from: '2026-02-09', to: '2026-02-10' });
    const whole = (day: string) => parseBancaDItaliaDailyRates(recorded(BDI_DAYS[day]!).toString('utf8')).document.days[0]!.rates;
    assert.deepEqual(
      all.days.map((d) => [d.day, d.rates]),
      ['2026-02-09', '2026-02-10'].map((day) => [day, whole(day)]),
    );
  });

  it('paces its requests and logs the progress of a long load', async () => {
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const log = { info: (obj: object, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
    const started = performance.now();
    await provider({ paceMs: 40, log }).series({ from: '2021-01-12', to: '2026-02-12' }, { currencies: ['AFN'] });
    assert.ok(performance.now() - started >= 5 * 40 - 5, 'five pauses between six requests');
    assert.equal(lines[0]!.msg, 'loading history in paced requests');
    assert.equal(lines[0]!.obj['requests'], 6);
    assert.equal(lines.at(-1)!.msg, 'history loaded');
  });

  it('a range in the future or for no currency asks nothing', async () => {
    const start = since();
    assert.deepEqual((await provider().series({ from: '2026-03-01', to: '2026-03-05' }, { currencies: ['AFN'] })).days, []);
    assert.deepEqual((await provider().series({ from: '2026-02-01', to: '2026-02-05' }, { currencies: [] })).days, []);
    assert.equal(since(), start);
  });

  it('no publication within a week is a feed failure', async () => {
    const late = createBancaDItaliaProvider({ baseUrl: banks.bdi.origin, timeoutMs: 5000, clock: clockAt('2026-03-06T12:00:00Z'), paceMs: 0 });
    await assert.rejects(late.latest(), feedError(/no rates published in the 7 days to 2026-03-06/));
  });
});

/**
 * Banca d'Italia in the service, after the ECB and the CNB (the default order's), on local
 * stand-ins in February 2026: each refresh reads the day's document (one request) and keeps every
 * currency of it; a currency it serves has its history loaded on its first request, once.
 */
describe("Banca d'Italia's whole day in the service", () => {
  let fake: FakeUpstreams;
  let banks: CentralBankStandIns;
  let service: FeedsService;
  const DAY = '2026-02-11';
  const bdiOn = (day: string, code: string) => new D(bdiRows(recorded(BDI_DAYS[day]!).toString('utf8')).find((r) => r.code === code)!.rate);
  // Its SDR ×1000: a currency only it and the CNB quote.
  const wrongSdr = (text: string) => text.replace(/,XDR,188,([0-9.]+),/g, (_, rate: string) => `,XDR,188,${new D(rate).mul(1000).toFixed()},`);
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = DAY;
    banks = await startCentralBankStandIns('2026-02-12', { bdi: wrongSdr });
    service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: 'ecb,cnb,bancaditalia', EXRATES_NOW: '2026-02-12T12:00:00Z' } });
    const outcomes = await service.deps.refresher.refreshAll();
    assert.deepEqual(outcomes.map((o) => [o.provider, o.ok]), [['ecb', true], ['cnb', true], ['bancaditalia', true]]);
  });
  after(async () => {
    await service.close();
    await banks.close();
    await closeFakeFeeds(fake);
  });

  it('its first refresh reads the newest day document alone and keeps every currency of it', async () => {
    assert.deepEqual(
      banks.requests.bdi.map((u) => [u.pathname.split('/').at(-1), u.searchParams.get('referenceDate')]),
      [
        ['dailyRates', '2026-02-12'],
        ['dailyRates', DAY],
      ],
    );
    const stored = await service.deps.rates.quotesOn('bancaditalia', DAY);
    const published = parseBancaDItaliaDailyRates(wrongSdr(recorded(BDI_DAYS[DAY]!).toString('utf8'))).document.days[0]!.rates;
    const iso = validateDocument({ provider: 'bancaditalia', base: 'EUR', days: [{ day: DAY, asOf: `${DAY}T15:00:00Z`, rates: published }] }, clockAt('2026-02-12T12:00:00Z'));
    assert.deepEqual(Object.fromEntries(stored.map((q) => [q.quote, q.rate])), iso.document.days[0]!.rates);
  });

  it('is a comparator for every currency it publishes: a currency only it and the CNB quote is flagged when they disagree', async () => {
    const providers = (await service.get('/api/v1/providers')).body['providers'] as Array<{ id: string; crossCheck: { state: string; outliers: Array<Record<string, unknown>> } }>;
    const bdi = providers.find((p) => p.id === 'bancaditalia')!;
    const sdr = bdi.crossCheck.outliers.find((o) => o['currency'] === 'XDR' && o['day'] === DAY)!;
    assert.deepEqual([sdr['others'], sdr['agreeing'], sdr['setAside']], [['cnb'], 1, false]);
    const cnb = providers.find((p) => p.id === 'cnb')!;
    assert.ok(cnb.crossCheck.outliers.some((o) => o['currency'] === 'XDR' && o['day'] === DAY && (o['others'] as string[]).includes('bancaditalia')));
    // Each of the three compared its numbers with the others'.
    for (const p of providers) assert.notEqual(p.crossCheck.state, 'unchecked', p.id);
  });

  it('serves a currency the ECB and the CNB do not quote from its day document, and loads its history on the first request that needs it, once', async () => {
    const series = (code = 'AFN') => banks.requests.bdi.filter((u) => u.pathname.endsWith('/dailyTimeSeries') && u.searchParams.get('baseCurrencyIsoCode') === code).length;
    const live = await service.get('/api/v1/rate?from=EUR&to=AFN');
    assert.equal(live.status, 200, JSON.stringify(live.body));
    assert.equal(live.body['rate'], formatRate(bdiOn(DAY, 'AFN')));
    // Its own day needs no history.
    assert.equal((await service.get(`/api/v1/rate?from=EUR&to=AFN&date=${DAY}`)).body['rate'], formatRate(bdiOn(DAY, 'AFN')));
    assert.equal(series(), 0);
    // Every currency on an earlier date, none named: what has no history yet is left out, nothing is loaded.
    const all = await service.get('/api/v1/rates?from=EUR&date=2026-02-10');
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const listed = (all.body['rates'] as Array<{ to: string }>).map((r) => r.to);
    assert.ok(listed.includes('USD') && !listed.includes('AFN'), listed.join(','));
    assert.equal(banks.requests.bdi.filter((u) => u.pathname.endsWith('/dailyTimeSeries')).length, 0);
    const dated = await service.get('/api/v1/rate?from=EUR&to=AFN&date=2026-02-09');
    const loads = series();
    assert.ok(loads > 0);
    assert.equal(dated.status, 200, JSON.stringify(dated.body));
    assert.equal(dated.body['rate'], formatRate(bdiOn('2026-02-09', 'AFN')));
    const history = await service.get('/api/v1/history?from=EUR&to=AFN&range=1m');
    assert.deepEqual((history.body['points'] as Array<{ date: string }>).map((p) => p.date), Object.keys(BDI_DAYS));
    assert.equal(series(), loads);
  });

  it('a pair of a currency it serves and one of its currencies another provider serves first is its own two numbers', async () => {
    // USD is the ECB's; Banca d'Italia, which serves AFN, quotes USD too, and its history of it
    // loads for a date before its first refreshed day.
    const dated = await service.get('/api/v1/rate?from=USD&to=AFN&date=2026-02-10');
    assert.equal(dated.status, 200, JSON.stringify(dated.body));
    assert.equal(dated.body['rate'], formatRate(bdiOn('2026-02-10', 'AFN').div(bdiOn('2026-02-10', 'USD'))));
  });
});

/**
 * Banca d'Italia with every year kept (EXRATES_HISTORY_YEARS=all): a currency's series loads back
 * as far as the bank serves it, five years at a time, newest first, ending at the first five years
 * with nothing; a later process asks only for the days before those it holds.
 */
describe("Banca d'Italia's per-currency series with every year kept", () => {
  let fake: FakeUpstreams;
  let banks: CentralBankStandIns;
  const env = () => ({ ...banks.env(), EXRATES_PROVIDERS: 'ecb,bancaditalia', EXRATES_NOW: '2026-02-12T12:00:00Z', EXRATES_HISTORY_YEARS: 'all' });
  const seriesAsked = (from: number) =>
    banks.requests.bdi
      .slice(from)
      .filter((u) => u.pathname.endsWith('/dailyTimeSeries') && u.searchParams.get('baseCurrencyIsoCode') === 'AFN')
      .map((u) => [u.searchParams.get('startDate')!, u.searchParams.get('endDate')!] as const);
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = '2026-02-11';
    banks = await startCentralBankStandIns('2026-02-12');
  });
  after(async () => {
    await banks.close();
    await closeFakeFeeds(fake);
  });

  it('loads back until five years hold nothing; a later process asks only for what lies before the held days', async () => {
    const first = await createFeedsService(fake, { env: env() });
    const dated = async (service: FeedsService) => {
      await service.deps.refresher.refreshAll();
      const answer = await service.get('/api/v1/rate?from=EUR&to=AFN&date=2026-02-09');
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body['rate'], formatRate(new D(bdiRows(recorded(BDI_DAYS['2026-02-09']!).toString('utf8')).find((r) => r.code === 'AFN')!.rate)));
    };
    let mark = banks.requests.bdi.length;
    await dated(first);
    const asked = seriesAsked(mark);
    // Before the day document it holds (2026-02-11): five years with the two recorded days, then
    // the five before them, with nothing, where the load ends; each year one request.
    const ends = asked.map(([, to]) => to).sort();
    const starts = asked.map(([from]) => from).sort();
    assert.equal(ends.at(-1), '2026-02-10');
    // Each part five years and a month: 2021-01-10 to 2026-02-10, then 2015-12-09 to 2021-01-09.
    assert.deepEqual([starts[0], starts.includes('2021-01-10'), ends.includes('2021-01-09')], ['2015-12-09', true, true]);
    assert.ok(asked.length >= 10 && asked.length <= 12, JSON.stringify(asked));
    await first.close();

    const again = await createFeedsService(fake, { databaseFile: first.databaseFile, env: env() });
    try {
      mark = banks.requests.bdi.length;
      await again.deps.refresher.refreshAll();
      // Every stored day of the currency: its history, held from 2026-02-09, is asked for before that day.
      const max = await again.get('/api/v1/history?from=EUR&to=AFN&range=max');
      assert.equal(max.status, 200, JSON.stringify(max.body));
      assert.deepEqual((max.body['points'] as Array<{ date: string }>).map((p) => p.date), Object.keys(BDI_DAYS));
      const later = seriesAsked(mark);
      assert.ok(later.length > 0 && later.length <= 6, JSON.stringify(later));
      assert.equal(later.map(([, to]) => to).sort().at(-1), '2026-02-08');
    } finally {
      await again.close();
    }
  });
});
