import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { createNbpProvider, parseNbpTables } from '../../src/providers/nbp.js';
import { CENTRAL_BANKS_DIR, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};
const nbpRecordings = (JSON.parse(readFileSync(`${CENTRAL_BANKS_DIR}/recordings.json`, 'utf8')) as Array<{ bank: string; recordings: Array<{ file: string; url: string }> }>).find((b) => b.bank === 'nbp')!.recordings;

describe('NBP parser, on the recorded documents', () => {
  it('nbp/01.json (table A): zlotys per unit as published, one table per business day', () => {
    const text = recorded('nbp/01.json').toString('utf8');
    const document = parseNbpTables(text);
    assert.equal(document.base, 'PLN');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05']);
    // Independently from the bytes: every "code","mid" pair of each table, the mid's literal text.
    const tables = text.split('{"table":"A"').slice(1);
    tables.forEach((table, i) => {
      const pairs = [...table.matchAll(/"code":"([A-Z]{3})","mid":([0-9.]+)/g)].map((m) => [m[1]!, `1/${m[2]!}`]);
      assert.equal(pairs.length, 32);
      assert.deepEqual(document.days[i]!.rates, Object.fromEntries(pairs));
    });
    assert.equal(document.days[0]!.rates['HUF'], '1/0.011155');
    assert.equal(document.days[0]!.rates['CAD'], '1/2.6410');
  });

  it('table B (another schedule and kind) and the gold prices are refused', () => {
    assert.throws(() => parseNbpTables(recorded('nbp/02.json').toString('utf8')), feedError(/table #0 is table the string "B", not A/));
    assert.throws(() => parseNbpTables(recorded('nbp/03.json').toString('utf8')), feedError(/not A/));
    assert.throws(() => parseNbpTables('[{"table":"A","no":"x","effectiveDate":"2026-03-02","rates":[{"code":"USD","mid":"3.6"}]}]'), feedError(/mid is the string/));
    assert.throws(() => parseNbpTables('[{"table":"A","effectiveDate":"02.03.2026","rates":[]}]'), feedError(/effectiveDate/));
  });
});

describe('NBP provider against a local stand-in', () => {
  let banks: CentralBankStandIns;
  before(async () => {
    banks = await startCentralBankStandIns('2026-03-06');
  });
  after(() => banks.close());
  const provider = () => createNbpProvider({ baseUrl: banks.nbp.origin, timeoutMs: 5000, clock: clockAt('2026-03-06T12:00:00Z'), paceMs: 0 });

  it('latest: the current table A', async () => {
    const start = banks.requests.nbp.length;
    const document = await provider().latest();
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-05']);
    assert.equal(banks.requests.nbp[start]!.pathname + banks.requests.nbp[start]!.search, '/api/exchangerates/tables/A/?format=json');
  });

  it('a range: the recorded request exactly', async () => {
    const start = banks.requests.nbp.length;
    const document = await provider().series({ from: '2026-03-01', to: '2026-03-05' });
    const recordedUrl = new URL(nbpRecordings.find((r) => r.file === 'nbp/01.json')!.url);
    assert.equal(banks.requests.nbp[start]!.pathname + banks.requests.nbp[start]!.search, recordedUrl.pathname + recordedUrl.search);
    assert.deepEqual(document, parseNbpTables(recorded('nbp/01.json').toString('utf8')));
  });

  it('a long range in spans of at most 93 days; a span without tables (404) is no failure', async () => {
    const start = banks.requests.nbp.length;
    const document = await provider().series({ from: '2025-06-01', to: '2026-03-31' });
    const asked = banks.requests.nbp.slice(start);
    // 2025-06-01 to today (2026-03-06) is 279 days: three spans of 93.
    assert.equal(asked.length, 3);
    for (const url of asked) {
      const [from, to] = url.pathname.split('/').slice(-3, -1) as [string, string];
      assert.ok((Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 <= 93);
    }
    assert.equal(asked.at(-1)!.pathname, '/api/exchangerates/tables/A/2025-12-04/2026-03-06/');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05']);
  });
});
