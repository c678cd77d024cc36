import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { CBR_METADATA, cbrCurrencies, createCbrProvider, parseCbrDaily, parseCbrDynamic } from '../../src/providers/cbr.js';
import { decodeUtf8 } from '../../src/providers/fetch-bytes.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { cbrDynamics, cbrRecordings, cbrStandIn, dashed, field } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recordings = cbrRecordings;
const daily = recordings[0]!;
const decode = (bytes: Uint8Array) => new TextDecoder('windows-1251').decode(bytes);
const dailyText = decode(daily.body);
const dynamics = cbrDynamics;
/** `53,8359` or `5,39256E-05`, read independently with decimal.js. */
const comma = (text: string) => new Decimal(text.replace(',', '.'));

describe('Bank of Russia parsers, on the recorded documents', () => {
  it('cbr/01.xml (windows-1251, 54 currencies, 25 April): roubles per Nominal units with a decimal comma, made exact per-unit rates', () => {
    assert.throws(() => decodeUtf8(daily.body, 'x'), /not UTF-8/);
    const document = parseCbrDaily(dailyText);
    assert.equal(document.base, 'RUB');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-04-25']);
    const rates = document.days[0]!.rates;
    const valutes = dailyText.match(/<Valute ID="[^"]+">.*?<\/Valute>/g)!;
    assert.equal(valutes.length, 54);
    assert.equal(Object.keys(rates).length, 54);
    for (const valute of valutes) {
      const code = field(valute, 'CharCode');
      const stored = rates[code]!;
      assert.match(stored, /^1\/\d+(\.\d+)?$/, code);
      const perUnit = comma(field(valute, 'Value')).div(field(valute, 'Nominal'));
      assert.ok(new Decimal(stored.slice(2)).eq(perUnit), `${code}: ${stored}`);
      assert.ok(perUnit.eq(comma(field(valute, 'VunitRate'))), `${code}: agrees with VunitRate`);
    }
    assert.equal(rates['USD'], '1/75.5273');
    assert.equal(rates['AMD'], '1/0.203123');
    // Published per 10,000 with VunitRate in exponent notation (5,39256E-05).
    assert.ok(/<VunitRate>5,39256E-05<\/VunitRate>/.test(dailyText));
    assert.equal(rates['IRR'], '1/0.0000539256');
    assert.equal(validateDocument(document, clockAt('2026-04-26T12:00:00Z')).document.days.length, 1);
  });

  it('each currency\'s recorded series (1 to 5 March): the days rates were set for, Tuesday to Thursday, read exactly', () => {
    const currencies = cbrCurrencies(dailyText);
    assert.equal(dynamics.size, currencies.length);
    for (const currency of currencies) {
      const text = decode(dynamics.get(currency.id)!.body);
      const document = parseCbrDynamic(text, currency);
      const records = text.match(/<Record Date="[^"]+" Id="[^"]+">.*?<\/Record>/g) ?? [];
      assert.deepEqual(document.days.map((d) => d.day), records.map((r) => dashed(/Date="([^"]+)"/.exec(r)![1]!)), currency.code);
      records.forEach((record, i) => {
        const stored = document.days[i]!.rates[currency.code]!;
        assert.ok(new Decimal(stored.slice(2)).eq(comma(field(record, 'Value')).div(field(record, 'Nominal'))), `${currency.code} ${document.days[i]!.day}`);
      });
    }
    const aud = parseCbrDynamic(decode(dynamics.get('R01010')!.body), { id: 'R01010', code: 'AUD' });
    assert.deepEqual(aud.days.map((d) => [d.day, d.rates['AUD']]), [['2026-03-03', '1/54.7468'], ['2026-03-04', '1/55.1336'], ['2026-03-05', '1/54.4295']]);
  });

  it('a malformed document is refused whole', () => {
    const valute = (inner: string) => `<?xml version="1.0" encoding="windows-1251"?><ValCurs Date="25.04.2026" name="Foreign Currency Market"><Valute ID="R01235">${inner}</Valute></ValCurs>`;
    const usd = (nominal: string, value: string, unit: string) => valute(`<NumCode>840</NumCode><CharCode>USD</CharCode><Nominal>${nominal}</Nominal><Value>${value}</Value><VunitRate>${unit}</VunitRate>`);
    assert.deepEqual(parseCbrDaily(usd('1', '75,5273', '75,5273')).days[0]!.rates, { USD: '1/75.5273' });
    assert.throws(() => parseCbrDaily(usd('1', '75,5273', '75,5274')), feedError(/VunitRate is 75\.5274/));
    assert.throws(() => parseCbrDaily(usd('1', '75.5273', '75,5273')), feedError(/"75\.5273" is not a decimal with a comma/));
    assert.throws(() => parseCbrDaily(usd('1', '0,0000', '0')), feedError(/the rate is zero/));
    assert.throws(() => parseCbrDaily(usd('1,5', '75,5273', '75,5273')), feedError(/not a whole number of units/));
    assert.throws(() => parseCbrDaily(valute('<CharCode>USD</CharCode><Nominal>1</Nominal>')), feedError(/<Value> is missing/));
    assert.throws(() => parseCbrDaily(usd('1', '75,5273', '75,5273').replace('25.04.2026', '2026-04-25')), feedError(/ValCurs Date/));
    assert.throws(() => parseCbrDaily(usd('1', '75,5273', '75,5273').slice(0, -20)), feedError(/not well-formed/));
    assert.throws(() => parseCbrDaily('<html><body>Service unavailable</body></html>'), feedError(/HTML page/));
    assert.throws(() => parseCbrDaily('<?xml version="1.0"?><Metall/>'), feedError(/not a ValCurs document/));
    const record = (id: string) => `<Record Date="03.03.2026" Id="${id}"><Nominal>1</Nominal><Value>54,7468</Value><VunitRate>54,7468</VunitRate></Record>`;
    const series = (...records: string[]) => `<?xml version="1.0" encoding="windows-1251"?><ValCurs ID="R01010" DateRange1="01.03.2026" DateRange2="05.03.2026" name="Foreign Currency Market Dynamic">${records.join('')}</ValCurs>`;
    assert.throws(() => parseCbrDynamic(series(record('R01020A')), { id: 'R01010', code: 'AUD' }), feedError(/Id R01020A in the series of R01010/));
    assert.throws(() => parseCbrDynamic(series(record('R01010'), record('R01010')), { id: 'R01010', code: 'AUD' }), feedError(/AUD is quoted twice on 2026-03-03/));
    assert.deepEqual(parseCbrDynamic(series(), { id: 'R01010', code: 'AUD' }).days, []);
    // Older records carry no per-unit figure, or an empty one: Value per Nominal alone.
    const older = `<Record Date="03.03.2015" Id="R01010"><Nominal>1</Nominal><Value>44,0123</Value></Record><Record Date="04.03.2015" Id="R01010"><Nominal>1</Nominal><Value>44,1</Value><VunitRate></VunitRate></Record>`;
    assert.deepEqual(parseCbrDynamic(series(older), { id: 'R01010', code: 'AUD' }).days.map((d) => d.rates['AUD']), ['1/44.0123', '1/44.1']);
  });
});

describe('Bank of Russia provider against a local stand-in', () => {
  let server: BankServer;
  const logged: string[] = [];
  before(async () => {
    server = await startBankServer(cbrStandIn);
  });
  after(() => server.close());
  const provider = (now = '2026-04-26T22:00:00Z') =>
    createCbrProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0, log: { info: (_obj, msg) => logged.push(msg ?? '') } });

  it('latest: the rates in force today (UTC), asked by date, decoded from windows-1251', async () => {
    server.requests.length = 0;
    const document = await provider().latest();
    assert.deepEqual(server.requests, ['/scripts/XML_daily.asp?date_req=26/04/2026']);
    assert.deepEqual(document, parseCbrDaily(dailyText));
  });

  it('a range: the day\'s rates, then each currency\'s series exactly as recorded, gathered into days', async () => {
    server.requests.length = 0;
    const document = await provider().series({ from: '2026-03-01', to: '2026-03-05' });
    assert.equal(server.requests[0], '/scripts/XML_daily.asp?date_req=26/04/2026');
    assert.deepEqual(server.requests.slice(1), [...dynamics.values()].map((r) => r.pathAndQuery));
    assert.deepEqual(document.days.map((d) => [d.day, Object.keys(d.rates).length]), [['2026-03-03', 54], ['2026-03-04', 54], ['2026-03-05', 54]]);
  });

  it('five years: a year of a currency a request, nothing after today, with progress lines', async () => {
    server.requests.length = 0;
    logged.length = 0;
    const document = await provider().series({ from: '2021-04-27', to: '2026-05-31' });
    const spans = Math.ceil(((Date.parse('2026-04-26') - Date.parse('2021-04-27')) / 86_400_000 + 1) / 366);
    assert.equal(server.requests.length, 1 + spans * 54);
    for (const path of server.requests.slice(1)) {
      const q = new URL(path, 'http://x').searchParams;
      const [from, to] = [q.get('date_req1')!, q.get('date_req2')!].map((d) => Date.parse(`${d.slice(6)}-${d.slice(3, 5)}-${d.slice(0, 2)}`));
      assert.ok((to! - from!) / 86_400_000 + 1 <= 366, path);
    }
    assert.equal(server.requests.at(-1)!.endsWith('date_req2=26/04/2026'), true);
    assert.equal(document.days.length, 3);
    assert.ok(logged.includes('loading history in paced requests') && logged.includes('history loaded'));
  });

  it('describes itself', () => {
    assert.deepEqual([CBR_METADATA.base, CBR_METADATA.kind], ['RUB', 'central bank']);
    assert.match(CBR_METADATA.schedule, /Moscow/);
  });
});
