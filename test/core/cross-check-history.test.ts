/**
 * The cross-check covers every stored day a user can be served, not only the latest: a number
 * published ×1000 on a day months old is set aside on a real SQLite store, and a later check
 * that redoes only the changed days finds what a whole check finds.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { changedDays, crossCheck, parsePercent } from '../../src/core/cross-check.js';
import type { Clock, RateDocument, RateStore } from '../../src/core/ports.js';
import { applyDocument, buildProviderRates, type ProviderRates } from '../../src/core/rate-index.js';
import { createRateBook } from '../../src/core/rates.js';
import { addDays } from '../../src/core/time.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { D, formatRate } from '../e2e/independent.js';
import { tempDir } from '../helper.js';

const OLD = '2025-06-02';
const RECENT = '2026-03-05';
const clock: Clock = { now: () => new Date('2026-03-06T12:00:00Z') };

/** Each provider's dollar and zloty in its own terms (a reciprocal where it quotes per unit), agreeing within 2 %. */
const NUMBERS: Record<string, { base: string; rates: Record<string, string> }> = {
  ecb: { base: 'EUR', rates: { USD: '1.1612', PLN: '4.3107' } },
  cnb: { base: 'CZK', rates: { USD: '1/20.98', PLN: '1/5.683' } },
  nbu: { base: 'UAH', rates: { USD: '1/41.5', PLN: '1/11.18' } },
  boi: { base: 'ILS', rates: { USD: '1/3.072', PLN: '1/0.8277' } },
  nbp: { base: 'PLN', rates: { USD: '1/3.7123' } },
};

function documentOf(provider: string, days: Day[], rewrite: (provider: string, day: Day, rates: Record<string, string>) => Record<string, string> = (_p, _d, r) => r): RateDocument {
  const { base, rates } = NUMBERS[provider]!;
  return { provider, base, days: days.map((day) => ({ day, asOf: `${day}T15:00:00Z`, rates: rewrite(provider, day, rates) })) };
}
type Day = string;

/** A stored number ×1000: for one stored as `1/x`, x / 1000. */
const times1000 = (text: string) => (text.startsWith('1/') ? `1/${new D(text.slice(2)).div(1000).toFixed()}` : new D(text).mul(1000).toFixed());

/** A SQLite store, for the tests of one describe, holding every provider's numbers on `days`, the NBP's dollar of `wrongDay` ×1000. */
function storeWithWrongDollar(name: string, days: Day[], wrongDay: Day): { store: () => RateStore } {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  const wrong = (provider: string, day: Day, rates: Record<string, string>) => (provider === 'nbp' && day === wrongDay ? { USD: '1/3712.3' } : rates);
  before(async () => {
    database = await openDatabase(`sqlite:${join(dir.path, name)}`);
    await migrateToLatest(database.db);
    store = createRateStore(database.db);
    for (const provider of Object.keys(NUMBERS)) await store.saveDocument(documentOf(provider, days, wrong));
  });
  after(async () => {
    await database.close();
    dir.remove();
  });
  return { store: () => store };
}

describe('the cross-check of days older than the latest', () => {
  const held = storeWithWrongDollar('old-days.db', [OLD, RECENT], OLD);

  it('sets aside a number published ×1000 on a day months before the newest, and serves the next provider on that date', async () => {
    const book = createRateBook({ store: held.store(), providers: ['nbp', 'ecb', 'cnb', 'nbu', 'boi'], clock });
    const dated = await book.rateOnDate('PLN', 'USD', OLD);
    // The ECB quotes both: its dollars per zloty, 1.1612 / 4.3107, not the NBP's ×1000.
    assert.equal(dated.quote.rate, formatRate(new D('1.1612').div('4.3107')));
    assert.deepEqual(dated.quote.provenance?.providers, ['ecb']);
    assert.deepEqual(
      dated.quote.provenance?.setAside?.map((s) => [s.provider, s.currency, s.day, s.rate]),
      [['nbp', 'USD', OLD, '1/3712.3']],
    );
    // On the recent day the NBP's own number serves.
    const recent = await book.rateOnDate('PLN', 'USD', RECENT);
    assert.deepEqual(recent.quote.provenance?.providers, ['nbp']);
    // A correction of the old day, merged, is checked again: it serves.
    await book.apply(documentOf('nbp', [OLD]));
    assert.deepEqual((await book.rateOnDate('PLN', 'USD', OLD)).quote.provenance?.providers, ['nbp']);
    assert.deepEqual((await book.crossCheck()).findings, []);
  });
});

describe('the cross-check of a long history, read at once', () => {
  // 200 days to the newest: the older ones are checked in the background, or first when asked for.
  const days = Array.from({ length: 200 }, (_, i) => addDays('2025-08-18', i));
  const wrongDay = days[20]!;
  const held = storeWithWrongDollar('long.db', days, wrongDay);

  it('answers a date of it without the number set aside, at once after the first read, and shows it in the whole check', async () => {
    const book = createRateBook({ store: held.store(), providers: ['nbp', 'ecb', 'cnb', 'nbu', 'boi'], clock });
    const dated = await book.rateOnDate('PLN', 'USD', wrongDay);
    assert.deepEqual(dated.quote.provenance?.providers, ['ecb']);
    assert.equal(dated.quote.rate, formatRate(new D('1.1612').div('4.3107')));
    const check = await book.crossCheck();
    assert.equal(check.days.size, days.length);
    assert.deepEqual(
      check.findings.map((f) => [f.provider, f.currency, f.day, f.setAside]),
      [['nbp', 'USD', wrongDay, true]],
    );
  });
});

describe('a check that redoes only the changed days', () => {
  const percent = parsePercent('2');
  const days = Array.from({ length: 40 }, (_, i) => addDays('2026-01-05', i));
  const build = (provider: string, rewrite?: (p: string, d: Day, r: Record<string, string>) => Record<string, string>): ProviderRates => {
    const document = documentOf(provider, days, rewrite);
    const quotes = document.days.flatMap((d) => Object.entries(d.rates).map(([quote, rate]) => ({ provider, base: document.base, quote, day: d.day, asOf: d.asOf, rate })));
    return buildProviderRates(provider, document.base, quotes);
  };
  const sorted = (check: ReturnType<typeof crossCheck>) => check.findings.map((f) => `${f.provider} ${f.currency} ${f.day} ${f.setAside}`).sort();

  it('finds what a whole check finds, after a change of a day in the middle, at the end, and a provider removed', () => {
    const data = new Map(Object.keys(NUMBERS).map((id) => [id, build(id)]));
    let check = crossCheck(data.values(), percent);
    assert.deepEqual(sorted(check), []);
    assert.equal(check.days.size, days.length);
    // The CNB's dollar of one day in the middle ×1000, then the NBU's of the last day: each merged as a document.
    for (const [provider, day] of [['cnb', days[17]!], ['nbu', days.at(-1)!]] as const) {
      const document = documentOf(provider, [day], (_p, _d, rates) => ({ ...rates, USD: times1000(rates['USD']!) }));
      applyDocument(data.get(provider)!, document);
      check = crossCheck(data.values(), percent, { previous: check, changed: [day] });
      assert.deepEqual(sorted(check), sorted(crossCheck(data.values(), percent)));
    }
    // (Their zloty too: only the dollar bridges it to the others' numbers here, and that dollar is wrong.)
    assert.deepEqual(sorted(check).filter((f) => f.includes(' USD ')), [`cnb USD ${days[17]} true`, `nbu USD ${days.at(-1)} true`]);
    // The store read again: the CNB's series rebuilt without the wrong day, its changed days found by comparison.
    const rebuilt = build('cnb');
    const changed = changedDays(data.get('cnb'), rebuilt);
    assert.deepEqual([...changed], [days[17]]);
    data.set('cnb', rebuilt);
    check = crossCheck(data.values(), percent, { previous: check, changed });
    assert.deepEqual(sorted(check), sorted(crossCheck(data.values(), percent)));
    assert.deepEqual(sorted(check).filter((f) => f.startsWith('cnb ')), []);
    // A provider gone: its days change; with only three others the NBU's dollar is flagged, still set aside.
    const boi = data.get('boi')!;
    data.delete('boi');
    check = crossCheck(data.values(), percent, { previous: check, changed: changedDays(boi, undefined) });
    assert.deepEqual(sorted(check), sorted(crossCheck(data.values(), percent)));
  });
});
