import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { createCnbProvider, parseCnbRates } from '../../src/providers/cnb.js';
import { CENTRAL_BANKS_DIR, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};
const cnbUrl = (JSON.parse(readFileSync(`${CENTRAL_BANKS_DIR}/recordings.json`, 'utf8')) as Array<{ bank: string; recordings: Array<{ url: string }> }>).find((b) => b.bank === 'cnb')!.recordings[0]!.url;

describe('CNB parser, on the recorded document', () => {
  it('cnb/01.json (2026 to 2 April): koruna per unit, per 100 and per 1,000 made exact per-unit rates', () => {
    const text = recorded('cnb/01.json').toString('utf8');
    const document = parseCnbRates(text);
    assert.equal(document.base, 'CZK');
    assert.equal(document.days.length, 65);
    assert.equal(document.days[0]!.day, '2026-01-02');
    assert.equal(document.days.at(-1)!.day, '2026-04-02');
    const rows = [...text.matchAll(/\{"currencyCode":"([A-Z]{3})","amount":(\d+),"validFor":"([\d-]+)","rate":([0-9.]+)\}/g)];
    assert.equal(rows.length, 1950);
    for (const [, code, amount, day, rate] of rows) {
      const stored = document.days.find((d) => d.day === day)!.rates[code!]!;
      assert.ok(new Decimal(stored.slice(2)).eq(new Decimal(rate!).div(amount!)), `${code} ${day}`);
      assert.ok(stored.startsWith('1/'));
    }
    const first = document.days[0]!.rates;
    assert.equal(first['HUF'], '1/0.06304');
    assert.equal(first['IDR'], '1/0.001233');
    assert.equal(first['EUR'], '1/24.170');
  });

  it('a malformed amount, rate or date refuses the document', () => {
    const one = (fields: string) => `{"rates":[{"currencyCode":"HUF",${fields}}]}`;
    assert.throws(() => parseCnbRates(one('"amount":"100","validFor":"2026-01-02","rate":6.304')), feedError(/amount is the string/));
    assert.throws(() => parseCnbRates(one('"amount":100,"validFor":"2026-01-02","rate":0')), feedError(/not a positive number/));
    assert.throws(() => parseCnbRates(one('"amount":100,"validFor":"02.01.2026","rate":6.304')), feedError(/validFor/));
    assert.throws(() => parseCnbRates('[]'), feedError(/expected an object/));
    const huf = '{"currencyCode":"HUF","amount":100,"validFor":"2026-01-02","rate":6.304}';
    assert.throws(() => parseCnbRates(`{"rates":[${huf},${huf}]}`), feedError(/rate #1: HUF is quoted twice on 2026-01-02/));
  });
});

describe('CNB provider against a local stand-in', () => {
  let banks: CentralBankStandIns;
  before(async () => {
    banks = await startCentralBankStandIns('2026-03-06');
  });
  after(() => banks.close());
  const provider = () => createCnbProvider({ baseUrl: banks.cnb.origin, timeoutMs: 5000, clock: clockAt('2026-03-06T18:00:00Z'), paceMs: 0 });

  it('latest: the current fixing', async () => {
    const document = await provider().latest();
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-06']);
    assert.equal(Object.keys(document.days[0]!.rates).length, 30);
  });

  it('a range: a year per request, as recorded, cut to the range', async () => {
    const start = banks.requests.cnb.length;
    const document = await provider().series({ from: '2025-12-20', to: '2026-01-06' });
    const asked = banks.requests.cnb.slice(start).map((u) => u.pathname + u.search);
    const recordedUrl = new URL(cnbUrl);
    assert.deepEqual(asked, ['/cnbapi/exrates/daily-year?lang=EN&year=2025', recordedUrl.pathname + recordedUrl.search]);
    assert.deepEqual(document.days.map((d) => d.day), ['2026-01-02', '2026-01-05', '2026-01-06']);
  });
});
