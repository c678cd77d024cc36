import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { createNbuProvider, parseNbuRates } from '../../src/providers/nbu.js';
import { CENTRAL_BANKS_DIR, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { SHARED_DATA } from '../support/data.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const D = Decimal.clone({ precision: 40 });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};
const recordedUrl = (JSON.parse(readFileSync(`${CENTRAL_BANKS_DIR}/recordings.json`, 'utf8')) as Array<{ bank: string; recordings: Array<{ url: string }> }>).find((b) => b.bank === 'nbu')!.recordings[0]!.url;

interface Entry { exchangedate: string; cc: string; rate: number; units: number; rate_per_unit: number }
/** The raw literal of a field of the n-th entry, read from the bytes (never through a float). */
function literals(text: string, field: string): string[] {
  return [...text.matchAll(new RegExp(`"${field}":([0-9.eE+-]+)`, 'g'))].map((m) => m[1]!);
}

describe('NBU parser, on the recorded documents', () => {
  const text = recorded('nbu/01.json').toString('utf8');

  it('nbu/01.json (UTF-8, CRLF, 16 calendar days): hryvnias per unit, exact, per 10/100/1,000 made per unit, DD.MM.YYYY read as dates', () => {
    assert.ok(text.includes('\r\n'));
    const document = parseNbuRates(text);
    assert.equal(document.provider, 'nbu');
    assert.equal(document.base, 'UAH');
    // Every calendar day, weekends too (2026-03-01 is a Sunday).
    assert.deepEqual(document.days.map((d) => d.day), Array.from({ length: 16 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`));
    const entries = JSON.parse(text) as Entry[];
    const rates = literals(text, 'rate');
    const units = literals(text, 'units');
    const perUnit = literals(text, 'rate_per_unit');
    assert.equal(rates.length, entries.length);
    entries.forEach((entry, i) => {
      const day = `${entry.exchangedate.slice(6)}-${entry.exchangedate.slice(3, 5)}-${entry.exchangedate.slice(0, 2)}`;
      const stored = document.days.find((d) => d.day === day)!.rates[entry.cc]!;
      assert.match(stored, /^1\/\d+(\.\d+)?$/, `${entry.cc} ${day}: a reciprocal of the published hryvnias per unit`);
      const published = new D(rates[i]!).div(units[i]!);
      assert.ok(new D(stored.slice(2)).eq(published), `${entry.cc} ${day}: ${stored} vs ${rates[i]} / ${units[i]}`);
      assert.ok(published.eq(perUnit[i]!), `${entry.cc} ${day}: agrees with rate_per_unit`);
    });
    const first = document.days[0]!.rates;
    assert.equal(first['THB'], '1/1.39116');
    assert.equal(first['VND'], '1/0.0016565');
    assert.equal(first['USD'], '1/43.2081');
    assert.ok(validateDocument(document, clockAt('2026-03-17T12:00:00Z')).document.days.length === 16);
  });

  it('the archive copies in shared/data/nbu/raw (the older API, without units) read the same way; an empty day is an empty document', () => {
    const day = parseNbuRates(readFileSync(`${SHARED_DATA}/nbu/raw/20220721.json`, 'utf8'));
    assert.deepEqual(day.days.map((d) => d.day), ['2022-07-21']);
    assert.equal(day.days[0]!.rates['USD'], '1/29.2549');
    assert.equal(day.days[0]!.rates['IRR'], '1/0.00069655');
    assert.deepEqual(parseNbuRates(readFileSync(`${SHARED_DATA}/nbu/raw/20220302.json`, 'utf8')).days, []);
    // 2000-01-03 carries the non-ISO code "___", which is skipped.
    const old = parseNbuRates(readFileSync(`${SHARED_DATA}/nbu/raw/20000103.json`, 'utf8'));
    assert.equal(old.days[0]!.rates['___'], undefined);
  });

  it('a rate_per_unit that disagrees, a units count that is no whole number, or a bad date refuses the document', () => {
    const one = (fields: string) => `[{"exchangedate":"01.03.2026","cc":"THB",${fields}}]`;
    assert.throws(() => parseNbuRates(one('"rate":13.9116,"units":10,"rate_per_unit":1.3912')), feedError(/rate_per_unit/));
    assert.throws(() => parseNbuRates(one('"rate":13.9116,"units":2.5')), feedError(/not a whole number of units/));
    assert.throws(() => parseNbuRates(one('"rate":-1,"units":1')), feedError(/not a positive number/));
    assert.throws(() => parseNbuRates('[{"exchangedate":"2026-03-01","cc":"THB","rate":1}]'), feedError(/not DD\.MM\.YYYY/));
    assert.throws(() => parseNbuRates('[{"exchangedate":"31.02.2026","cc":"THB","rate":1}]'), feedError(/not DD\.MM\.YYYY/));
    assert.throws(() => parseNbuRates('{"error":"x"}'), feedError(/expected an array/));
    const thb = '{"exchangedate":"01.03.2026","cc":"THB","rate":13.9116,"units":10}';
    assert.throws(() => parseNbuRates(`[${thb},${thb}]`), feedError(/rate #1: THB is quoted twice on 2026-03-01/));
    // A quotation per 3 units has no exact decimal per unit (1/3) and is refused rather than rounded.
    assert.throws(() => parseNbuRates(one('"rate":1,"units":3')), feedError(/no exact per-unit decimal/));
    assert.deepEqual(parseNbuRates(one('"rate":1.5,"units":3')).days[0]!.rates, { THB: '1/0.5' });
  });
});

describe('NBU provider against a local stand-in', () => {
  let banks: CentralBankStandIns;
  before(async () => {
    banks = await startCentralBankStandIns('2026-03-17');
  });
  after(() => banks.close());
  const provider = (now: string) => createNbuProvider({ baseUrl: banks.nbu.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0 });

  it('latest: the rates of today, not those already set for tomorrow', async () => {
    const start = banks.requests.nbu.length;
    const document = await provider('2026-03-10T12:00:00Z').latest();
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-10']);
    const url = banks.requests.nbu[start]!;
    assert.equal(`${url.pathname}${url.search}`, '/NBU_Exchange/exchange_site?end=20260310&json=&order=asc&sort=exchangedate&start=20260303');
  });

  it('a range: the recorded request exactly, every day of it', async () => {
    const start = banks.requests.nbu.length;
    const document = await provider('2026-03-17T12:00:00Z').series({ from: '2026-03-01', to: '2026-03-16' });
    const url = banks.requests.nbu[start]!;
    const recorded = new URL(recordedUrl);
    assert.equal(`${url.pathname}${url.search}`, `${recorded.pathname}${recorded.search}`);
    assert.equal(document.days.length, 16);
    assert.deepEqual(document, parseNbuRates(readFileSync(`${CENTRAL_BANKS_DIR}/nbu/01.json`, 'utf8')));
  });

  it('a five-year range in spans of at most 92 days, nothing after today', async () => {
    const start = banks.requests.nbu.length;
    const document = await provider('2026-03-05T12:00:00Z').series({ from: '2021-02-05', to: '2026-03-31' });
    const asked = banks.requests.nbu.slice(start);
    assert.equal(asked.length, Math.ceil((Date.parse('2026-03-05') - Date.parse('2021-02-05')) / 86_400_000 / 92));
    for (const url of asked) {
      const days = (Date.parse(url.searchParams.get('end')!.replace(/(\d{4})(\d{2})(\d{2})/, '$1-$2-$3')) - Date.parse(url.searchParams.get('start')!.replace(/(\d{4})(\d{2})(\d{2})/, '$1-$2-$3'))) / 86_400_000 + 1;
      assert.ok(days <= 92);
    }
    assert.equal(asked.at(-1)!.searchParams.get('end'), '20260305');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05']);
  });
});
