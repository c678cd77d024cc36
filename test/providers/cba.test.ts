import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { CBA_METADATA, cbaCurrencies, createCbaProvider, parseCbaLatest, parseCbaRange } from '../../src/providers/cba.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { CBA_ROWS, cbaLatest, cbaRange, cbaStandIn, field } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const [latest, range] = [cbaLatest, cbaRange];
const latestText = latest.body.toString('utf8');
const rangeText = range.body.toString('utf8');
const ROWS = CBA_ROWS;

describe('CBA parsers, on the recorded SOAP answers', () => {
  it('cba/01.xml (ExchangeRatesLatest, 18 March): drams per Amount units made exact per-unit rates, the per-gram metals left out', () => {
    const document = parseCbaLatest(latestText);
    assert.equal(document.base, 'AMD');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-18']);
    const rates = document.days[0]!.rates;
    const rows = latestText.match(/<ExchangeRate>.*?<\/ExchangeRate>/g)!;
    assert.equal(rows.length, 30);
    for (const row of rows) {
      const code = field(row, 'ISO');
      if (code === 'XAU' || code === 'XAG') {
        assert.equal(rates[code], undefined);
        continue;
      }
      assert.ok(new Decimal(rates[code]!.slice(2)).eq(new Decimal(field(row, 'Rate')).div(field(row, 'Amount'))), code);
    }
    assert.equal(Object.keys(rates).length, 28);
    assert.equal(rates['USD'], '1/377.39');
    assert.equal(rates['IRR'], '1/0.00028677');
    assert.equal(rates['JPY'], '1/2.3735');
    assert.deepEqual(cbaCurrencies(latestText), rows.map((row) => field(row, 'ISO')));
    assert.equal(validateDocument(document, clockAt('2026-03-19T12:00:00Z')).document.days.length, 1);
  });

  it('cba/02.xml (ExchangeRatesByDateRangeByISO, 1 to 19 March, a .NET DataSet): business days only, read exactly, meeting the latest answer on the 18th', () => {
    const document = parseCbaRange(rangeText);
    assert.deepEqual(document.days.map((d) => d.day), ['02', '03', '04', '05', '06', '09', '10', '11', '12', '13', '16', '17', '18'].map((d) => `2026-03-${d}`));
    const rows = rangeText.match(ROWS)!;
    assert.equal(rows.length, 13 * 30);
    for (const row of rows) {
      const code = field(row, 'ISO');
      const stored = document.days.find((d) => d.day === field(row, 'RateDate').slice(0, 10))!.rates[code];
      if (code === 'XAU' || code === 'XAG') assert.equal(stored, undefined);
      else assert.ok(new Decimal(stored!.slice(2)).eq(new Decimal(field(row, 'Rate')).div(field(row, 'Amount'))), `${code} ${field(row, 'RateDate')}`);
    }
    assert.deepEqual(document.days.at(-1)!.rates, parseCbaLatest(latestText).days[0]!.rates);
  });

  it('a fault, a cut-off answer or a malformed row is refused whole', () => {
    const row = (inner: string) => latestText.replace(/<Rates>.*<\/Rates>/, `<Rates><ExchangeRate>${inner}</ExchangeRate></Rates>`);
    assert.deepEqual(parseCbaLatest(row('<ISO>USD</ISO><Amount>1</Amount><Rate>377.39</Rate>')).days[0]!.rates, { USD: '1/377.39' });
    assert.throws(() => parseCbaLatest(row('<ISO>USD</ISO><Amount>1</Amount><Rate>377,39</Rate>')), feedError(/"377,39" is not a plain decimal/));
    assert.throws(() => parseCbaLatest(row('<ISO>USD</ISO><Amount>1.5</Amount><Rate>377.39</Rate>')), feedError(/not a whole number of units/));
    assert.throws(() => parseCbaLatest(row('<ISO>USD</ISO><Amount>1</Amount>')), feedError(/<Rate> is missing/));
    assert.throws(() => parseCbaLatest(latestText.replace('2026-03-18T00:00:00', '18.03.2026')), feedError(/CurrentDate: "18.03.2026" is not a date/));
    assert.throws(() => parseCbaLatest(latestText.slice(0, 2000)), feedError(/not well-formed/));
    const fault = '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Client</faultcode><faultstring>Server was unable to read request.</faultstring></soap:Fault></soap:Body></soap:Envelope>';
    assert.throws(() => parseCbaLatest(fault), feedError(/a fault: "Server was unable to read request\."/));
    assert.throws(() => parseCbaRange(latestText), feedError(/no ExchangeRatesByDateRangeByISOResult/));
    assert.deepEqual(parseCbaRange(rangeText.replace(/<DocumentElement xmlns="">.*<\/DocumentElement>/, '')).days, []);
  });
});

describe('CBA provider against a local SOAP stand-in', () => {
  let server: BankServer;
  const bodies: string[] = [];
  const logged: string[] = [];
  before(async () => {
    server = await startBankServer((url, request) => {
      if (request.method === 'POST') bodies.push(request.body);
      return cbaStandIn(url, request);
    });
  });
  after(() => server.close());
  const provider = () => createCbaProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt('2026-03-19T10:48:00Z'), paceMs: 0, log: { info: (_obj, msg) => logged.push(msg ?? '') } });

  it('latest: the recorded SOAP call exactly', async () => {
    bodies.length = 0;
    const document = await provider().latest();
    assert.deepEqual(bodies, [latest.requestBody]);
    assert.deepEqual(document, parseCbaLatest(latestText));
  });

  it('a range: the newest day\'s currencies, then the recorded range call exactly', async () => {
    bodies.length = 0;
    const document = await provider().series({ from: '2026-03-01', to: '2026-03-19' });
    assert.deepEqual(bodies, [latest.requestBody, range.requestBody]);
    assert.deepEqual(document, parseCbaRange(rangeText));
  });

  it('five years: a year a call for every currency, nothing after today, with progress lines', async () => {
    bodies.length = 0;
    logged.length = 0;
    const document = await provider().series({ from: '2021-03-20', to: '2026-04-30' });
    const ranges = bodies.slice(1).map((b) => /<DateFrom>([\d-]+)<\/DateFrom>\s*<DateTo>([\d-]+)<\/DateTo>/.exec(b)!.slice(1) as [string, string]);
    assert.equal(ranges.length, Math.ceil(((Date.parse('2026-03-19') - Date.parse('2021-03-20')) / 86_400_000 + 1) / 366));
    assert.equal(ranges.at(-1)![1], '2026-03-19');
    for (const [from, to] of ranges) assert.ok((Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 <= 366);
    assert.equal(document.days.length, 13);
    assert.ok(logged.includes('loading history in paced requests') && logged.includes('history loaded'));
  });

  it('describes itself', () => {
    assert.deepEqual([CBA_METADATA.base, CBA_METADATA.kind, CBA_METADATA.termsUrl], ['AMD', 'central bank', null]);
  });
});
