import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Rational } from '../../src/core/decimal.js';
import { DomainError } from '../../src/core/errors.js';
import type { Clock, RateDocument, RateStore } from '../../src/core/ports.js';
import { AMOUNT_PATTERN, bridgeCurrency, createRateBook, formatRate, parseAmount, rateOn } from '../../src/core/rates.js';
import { buildProviderRates, type ProviderRates } from '../../src/core/rate-index.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { tempDir } from '../helper.js';
import { domainError } from '../support/errors.js';
import { waitFor } from '../support/wait.js';


/** One provider's rates on one day, as the in-memory index holds them. */
function table(provider: string, base: string, day: string, rates: Record<string, string>): ProviderRates & { day: string } {
  const quotes = Object.entries(rates).map(([quote, rate]) => ({ provider, base, quote, day, asOf: `${day}T15:00:00Z`, rate }));
  return Object.assign(buildProviderRates(provider, base, quotes), { day });
}

/** The exact cross rate the service serves from two providers' data on their day (SPEC §2). */
function crossRate(fromData: ProviderRates & { day: string }, from: string, toData: ProviderRates & { day: string }, to: string): Rational | null {
  return rateOn(fromData, from, toData, to, fromData.day, bridgeCurrency(fromData, toData)) ?? null;
}

/** Exact equality of rationals: a/b = c/d ⇔ a·d = c·b (denominators positive). */
function assertExact(actual: Rational | null, num: bigint, den: bigint): void {
  assert.ok(actual, 'expected a rate');
  assert.ok(actual.den > 0n);
  assert.equal(actual.num * den, num * actual.den, `${actual.num}/${actual.den} ≠ ${num}/${den}`);
}

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });

describe('crossRate', () => {
  const ecb = table('ecb', 'EUR', '2026-03-05', { USD: '1.1900', GBP: '0.86990', JPY: '182.5' });

  it('divides within one table', () => {
    // JPY per USD = 182.5 / 1.19 = 18250 / 119
    assertExact(crossRate(ecb, 'USD', ecb, 'JPY'), 18250n, 119n);
    // EUR → USD is the published value itself; USD → EUR its inverse
    assertExact(crossRate(ecb, 'EUR', ecb, 'USD'), 119n, 100n);
    assertExact(crossRate(ecb, 'USD', ecb, 'EUR'), 100n, 119n);
    assertExact(crossRate(ecb, 'GBP', ecb, 'GBP'), 1n, 1n);
    // GBP → JPY = 182.5 / 0.8699 = 1825000 / 8699
    assertExact(crossRate(ecb, 'GBP', ecb, 'JPY'), 1825000n, 8699n);
  });

  it('gives the same rate from two copies of one provider’s day', () => {
    const copy = table('ecb', 'EUR', '2026-03-05', { USD: '1.19', GBP: '0.8699' });
    // 0.8699 / 1.19 = 8699 / 11900
    assertExact(crossRate(ecb, 'USD', copy, 'GBP'), 8699n, 11900n);
  });

  it('goes through the other table’s base when the first table quotes it', () => {
    const usdBased = table('other', 'USD', '2026-03-05', { BRL: '5.2', EUR: '0.84' });
    // GBP → USD from ecb (1.19 / 0.8699), then USD → BRL from the other table (5.2):
    // 11900/8699 × 52/10 = 61880 / 8699
    assertExact(crossRate(ecb, 'GBP', usdBased, 'BRL'), 61880n, 8699n);
    // BRL → EUR from the USD table (0.84 / 5.2), then EUR → GBP from ecb (0.8699):
    // 84/520 × 8699/10000 = 182679 / 1300000
    assertExact(crossRate(usdBased, 'BRL', ecb, 'GBP'), 182679n, 1300000n);
  });

  it('goes through the first table’s base when only the second quotes it', () => {
    const usdOnly = table('other', 'USD', '2026-03-05', { BRL: '5.2' });
    // The USD table has no EUR, but ecb quotes USD: BRL → USD (1 / 5.2), USD → GBP (0.8699 / 1.19)
    // = 10/52 × 8699/11900 = 8699 / 61880
    assertExact(crossRate(usdOnly, 'BRL', ecb, 'GBP'), 8699n, 61880n);
  });

  it('falls back to any currency both tables quote', () => {
    const chf = table('third', 'CHF', '2026-03-05', { JPY: '160', BRL: '5.5' });
    const sek = table('fourth', 'SEK', '2026-03-05', { JPY: '15', NOK: '1.1' });
    // BRL → JPY = 160 / 5.5, JPY → NOK = 1.1 / 15: 160 × 1.1 / (5.5 × 15) = 176 / 82.5 = 32 / 15
    assertExact(crossRate(chf, 'BRL', sek, 'NOK'), 32n, 15n);
    assert.equal(formatRate(crossRate(chf, 'BRL', sek, 'NOK')!), '2.1333333');
  });

  it('is null without a bridge or without one of the currencies', () => {
    const chf = table('third', 'CHF', '2026-03-05', { BRL: '5.5' });
    const sek = table('fourth', 'SEK', '2026-03-05', { NOK: '1.1' });
    assert.equal(crossRate(chf, 'BRL', sek, 'NOK'), null);
    assert.equal(crossRate(ecb, 'BRL', ecb, 'USD'), null);
    assert.equal(crossRate(ecb, 'USD', ecb, 'BRL'), null);
  });
});

describe('parseAmount', () => {
  it('accepts plain non-negative decimals and strips leading zeros', () => {
    assert.equal(AMOUNT_PATTERN, '^[0-9]{1,18}(\\.[0-9]{1,12})?$');
    const cases: Array<[string, string, bigint, bigint]> = [
      ['100', '100', 100n, 1n],
      ['007.50', '7.50', 750n, 100n],
      ['00.5', '0.5', 5n, 10n],
      ['0', '0', 0n, 1n],
      ['000', '0', 0n, 1n],
      ['0.000000000001', '0.000000000001', 1n, 1_000_000_000_000n],
      ['999999999999999999', '999999999999999999', 999999999999999999n, 1n],
      ['999999999999999999.999999999999', '999999999999999999.999999999999', 999999999999999999999999999999n, 1_000_000_000_000n],
    ];
    for (const [input, text, num, den] of cases) {
      const parsed = parseAmount(input);
      assert.equal(parsed.text, text, input);
      assertExact(parsed.value, num, den);
    }
  });

  it('rejects every other shape as invalid_amount on the amount parameter', () => {
    const bad = [
      '-1',
      '+1',
      '-0',
      '1e3',
      '1E3',
      '1e-3',
      ' 1',
      '1 ',
      '1 000',
      '1,000',
      '1,5',
      '1234567890123456789', // 19 integer digits
      '1.1234567890123', // 13 decimals
      '',
      '.5',
      '5.',
      '1.2.3',
      '1_000',
      '0x10',
      'NaN',
      'Infinity',
      '١٢', // Arabic-Indic digits
      '12\n',
    ];
    for (const input of bad) {
      assert.throws(
        () => parseAmount(input),
        (error: unknown) => {
          domainError('invalid_amount', 'amount')(error);
          // The detail states the accepted form.
          assert.match((error as Error).message, /18 integer digits/);
          assert.match((error as Error).message, /12 decimals/);
          return true;
        },
        JSON.stringify(input),
      );
    }
  });
});

/*
 * One ECB-like provider, EUR base, two days. The older day has different values so that a
 * result from the wrong day would show. KWD and XAU are not ECB currencies; they are here for
 * their minor units (3 and none).
 */
const ECB_DOC: RateDocument = {
  provider: 'ecb',
  base: 'EUR',
  days: [
    { day: '2026-03-04', asOf: '2026-03-04T15:00:00Z', rates: { USD: '1.1600', JPY: '180', GBP: '0.8700' } },
    {
      day: '2026-03-05',
      asOf: '2026-03-05T15:00:00Z',
      rates: { USD: '1.1900', JPY: '182.5', GBP: '0.86990', KWD: '0.35250', XAU: '0.00041234', CHF: '0.9136', IDR: '19992.00' },
    },
  ],
};

async function openStore(dir: string, name: string): Promise<{ database: OpenDatabase; store: RateStore }> {
  const database = await openDatabase(`sqlite:${join(dir, name)}`);
  await migrateToLatest(database.db);
  return { database, store: createRateStore(database.db) };
}

describe('rate book over a stored document', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  const clock = clockAt('2026-03-06T12:00:00Z');
  const book = () => createRateBook({ store, providers: ['ecb'], clock });

  before(async () => {
    ({ database, store } = await openStore(dir.path, 'rates.db'));
    assert.equal(await store.saveDocument(ECB_DOC), 10);
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('runs the cross-check when what it holds changes, never while answering; a flagged number used is named in provenance', async () => {
    const b = createRateBook({ store, providers: ['ecb', 'cnb'], clock });
    await b.liveRate('EUR', 'USD');
    const first = (await b.crossCheck()).findings;
    assert.deepEqual(first, []);
    for (let i = 0; i < 200; i++) {
      await b.liveRate(['EUR', 'USD', 'GBP'][i % 3]!, ['JPY', 'CHF', 'KWD'][i % 3]!);
      await b.rateOnDate('GBP', 'USD', '2026-03-05');
    }
    assert.equal((await b.crossCheck()).findings, first, 'answering ran the check again');
    // The CNB's dollar ×1000 arrives: the check runs as it is merged, and flags both dollars (only
    // two quote it). Its euro is compared through the pound, the yen and the dollar the ECB
    // quotes too, by the median of those crosses: its wrong dollar moves nothing.
    const cnb: RateDocument = {
      provider: 'cnb',
      base: 'CZK',
      days: [{ day: '2026-03-05', asOf: '2026-03-05T12:30:00Z', rates: { EUR: '1/24.36', USD: '1/20470', GBP: '1/28.003', JPY: '1/0.13348' } }],
    };
    await store.saveDocument(cnb);
    await b.apply(cnb);
    const findings = (await b.crossCheck()).findings;
    assert.notEqual(findings, first);
    assert.deepEqual(findings.map((f) => [f.provider, f.currency, f.agreeing, f.setAside]).sort(), [
      ['cnb', 'USD', 1, false],
      ['ecb', 'USD', 1, false],
    ]);
    const quote = await b.liveRate('EUR', 'USD');
    assert.deepEqual(quote.provenance!.providers, ['ecb']);
    assert.deepEqual(
      quote.provenance!.flagged!.map((f) => [f.provider, f.currency, f.day, f.rate]),
      [['ecb', 'USD', '2026-03-05', '1.1900']],
    );
    assert.match(quote.provenance!.flagged![0]!.reason, /still served: fewer than 3 of them agree/);
    assert.equal((await b.liveRate('EUR', 'JPY')).provenance!.flagged, undefined);
  });

  /** A number as the stored document published it, as a quote's provenance names it. */
  const ecbNumber = (currency: string, rate: string) => ({ provider: 'ecb', day: '2026-03-05', base: 'EUR', currency, rate });

  it('returns a directly published rate as published, trailing zeros removed', async () => {
    const quote = await book().liveRate('EUR', 'USD');
    // The provenance names the number exactly as stored, trailing zeros and all; the euro, the base, counts 1.
    const provenance = { providers: ['ecb'], day: '2026-03-05', bridge: null, numbers: [ecbNumber('USD', '1.1900')] };
    assert.deepEqual(quote, { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.19', asOf: '2026-03-05T15:00:00Z', stale: false, provenance });
    assert.equal((await book().liveRate('EUR', 'XAU')).rate, '0.00041234');
    assert.equal((await book().liveRate('EUR', 'IDR')).rate, '19992');
    assert.equal((await book().liveRate('EUR', 'GBP')).rate, '0.8699');
  });

  it('accepts lower-case codes and answers upper-case', async () => {
    const quote = await book().liveRate('usd', 'jpy');
    // 182.5 / 1.19 = 153.3613445… → 153.36134
    const provenance = { providers: ['ecb'], day: '2026-03-05', bridge: null, numbers: [ecbNumber('USD', '1.1900'), ecbNumber('JPY', '182.5')] };
    assert.deepEqual(quote, { pair: 'USDJPY', from: 'USD', to: 'JPY', rate: '153.36134', asOf: '2026-03-05T15:00:00Z', stale: false, provenance });
  });

  it('inverts and crosses to 8 significant digits, half-to-even', async () => {
    // 1 / 1.19 = 0.840336134… → 0.84033613
    assert.equal((await book().liveRate('USD', 'EUR')).rate, '0.84033613');
    // 1.19 / 0.8699 = 1.36797333… → 1.3679733
    assert.equal((await book().liveRate('GBP', 'USD')).rate, '1.3679733');
    // 1.19 / 182.5 = 0.00652054794… → 0.0065205479
    assert.equal((await book().liveRate('JPY', 'USD')).rate, '0.0065205479');
    // 1.19 / 0.00041234 = 2885.96789… → 2885.9679
    assert.equal((await book().liveRate('XAU', 'USD')).rate, '2885.9679');
    // 0.00041234 / 1.19 = 0.000346504201… → 0.00034650420 → trailing zero removed
    assert.equal((await book().liveRate('USD', 'XAU')).rate, '0.0003465042');
  });

  it('answers 1 for the same currency on both sides', async () => {
    const quote = await book().liveRate('usd', 'USD');
    const provenance = { providers: ['ecb'], day: '2026-03-05', bridge: null, numbers: [] };
    assert.deepEqual(quote, { pair: 'USDUSD', from: 'USD', to: 'USD', rate: '1', asOf: '2026-03-05T15:00:00Z', stale: false, provenance });
    assert.equal((await book().liveRate('EUR', 'eur')).rate, '1');
    // 1234.5 × 1 at 0 decimals: a tie, 4 is even
    assert.equal((await book().convert('JPY', 'JPY', '1234.5')).result, '1234');
    assert.equal((await book().convert('EUR', 'EUR', '10')).result, '10.00');
  });

  it('rounds results half-to-even to the target currency’s minor units', async () => {
    const b = book();
    // JPY, 0 decimals: 1 × 182.5 = 182.5 → 182 (2 even); 3 × 182.5 = 547.5 → 548 (7 odd)
    assert.equal((await b.convert('EUR', 'JPY', '1')).result, '182');
    assert.equal((await b.convert('EUR', 'JPY', '3')).result, '548');
    // USD, 2 decimals: 0.5 × 1.19 = 0.595 → 0.60 (9 odd); 1.5 × 1.19 = 1.785 → 1.78 (8 even)
    assert.equal((await b.convert('EUR', 'USD', '0.5')).result, '0.60');
    assert.equal((await b.convert('EUR', 'USD', '1.5')).result, '1.78');
    // KWD, 3 decimals: 1 × 0.3525 → 0.352 (2 even); 3 × 0.3525 = 1.0575 → 1.058 (7 odd)
    assert.equal((await b.convert('EUR', 'KWD', '1')).result, '0.352');
    assert.equal((await b.convert('EUR', 'KWD', '3')).result, '1.058');
    // XAU, no minor units → 8 decimals: 0.25 × 0.00041234 = 0.000103085 → 0.00010308 (8 even)
    assert.equal((await b.convert('EUR', 'XAU', '0.25')).result, '0.00010308');
    // 1234.56 × 0.00041234 = 0.5090584704 → 0.50905847
    assert.equal((await b.convert('EUR', 'XAU', '1234.56')).result, '0.50905847');
    // Exactly 8 decimals even with a trailing zero: 1000 × 0.0003465042 = 0.3465042
    assert.equal((await b.convert('USD', 'XAU', '1000')).result, '0.34650420');
    // IDR has 2 minor units: an integer result is still written with two decimals
    assert.equal((await b.convert('EUR', 'IDR', '1')).result, '19992.00');
  });

  it('multiplies by the rounded rate it returns', async () => {
    const conversion = await book().convert('usd', 'kwd', '1000');
    // rate 0.3525 / 1.19 = 0.296218487… → 0.29621849; 1000 × 0.29621849 = 296.21849 → 296.218
    assert.deepEqual(conversion, {
      from: 'USD',
      to: 'KWD',
      amount: '1000',
      rate: '0.29621849',
      result: '296.218',
      asOf: '2026-03-05T15:00:00Z',
      stale: false,
    });
    // 250 × 1.3679733 = 341.993325 → 341.99
    assert.equal((await book().convert('GBP', 'USD', '250')).result, '341.99');
    // 100 × 0.84033613 = 84.033613 → 84.03
    assert.equal((await book().convert('USD', 'EUR', '100')).result, '84.03');
    // 1000 × 153.36134 = 153361.34 → 153361
    assert.equal((await book().convert('USD', 'JPY', '1000')).result, '153361');
  });

  it('normalises the amount it echoes', async () => {
    const conversion = await book().convert('EUR', 'USD', '007.50');
    // 7.50 × 1.19 = 8.925 → 8.92 (2 even)
    assert.equal(conversion.amount, '7.50');
    assert.equal(conversion.rate, '1.19');
    assert.equal(conversion.result, '8.92');
    assert.equal((await book().convert('EUR', 'USD', '0')).result, '0.00');
  });

  it('rejects a bad amount as invalid_amount', async () => {
    for (const amount of ['-1', '1e3', '1,5', ' 1', '', '.5', '5.', '1234567890123456789', '1.1234567890123']) {
      await assert.rejects(book().convert('EUR', 'USD', amount), domainError('invalid_amount', 'amount'), JSON.stringify(amount));
    }
  });

  it('rejects codes that are not ISO 4217 and codes nobody quotes', async () => {
    await assert.rejects(async () => book().liveRate('XYZ', 'USD'), domainError('invalid_currency', 'from'));
    await assert.rejects(async () => book().liveRate('USD', 'usdd'), domainError('invalid_currency', 'to'));
    await assert.rejects(book().convert('EUR', 'XYZ', '1'), domainError('invalid_currency', 'to'));
    // BRL is ISO 4217 but was never stored.
    await assert.rejects(async () => book().liveRate('BRL', 'USD'), domainError('unsupported_currency', 'from'));
    await assert.rejects(async () => book().liveRate('usd', 'brl'), domainError('unsupported_currency', 'to'));
    await assert.rejects(book().convert('USD', 'BRL', '1'), domainError('unsupported_currency', 'to'));
  });

  it('serves stored rates as stale while the provider’s last attempt failed', async () => {
    const b = book();
    assert.equal((await b.liveRate('EUR', 'USD')).stale, false);
    assert.equal(await b.isStale('ecb'), false);

    await store.recordAttempt('ecb', { at: '2026-03-06T12:10:00Z', ok: false, error: 'HTTP 500' });
    b.invalidate();
    const stale = await b.liveRate('EUR', 'USD');
    assert.equal(stale.stale, true);
    assert.equal(stale.rate, '1.19');
    assert.equal(stale.asOf, '2026-03-05T15:00:00Z');
    assert.equal((await b.convert('USD', 'JPY', '1')).stale, true);
    assert.equal((await b.liveRate('JPY', 'JPY')).stale, true);
    assert.equal(await b.isStale('ecb'), true);

    await store.recordAttempt('ecb', { at: '2026-03-06T12:20:00Z', ok: true });
    b.invalidate();
    assert.equal((await b.liveRate('EUR', 'USD')).stale, false);
    assert.equal((await b.convert('USD', 'JPY', '1')).stale, false);
    assert.equal(await b.isStale('ecb'), false);
  });

  it('picks up newly stored days after invalidate()', async () => {
    const b = book();
    assert.equal((await b.liveRate('EUR', 'USD')).rate, '1.19');
    await store.saveDocument({ provider: 'ecb', base: 'EUR', days: [{ day: '2026-03-06', asOf: '2026-03-06T15:00:00Z', rates: { USD: '1.2000' } }] });
    try {
      b.invalidate();
      const quote = await b.liveRate('EUR', 'USD');
      assert.equal(quote.rate, '1.2');
      assert.equal(quote.asOf, '2026-03-06T15:00:00Z');
    } finally {
      await database.db.deleteFrom('rates').where('day', '=', '2026-03-06').execute();
    }
  });
});

describe('rate book on an empty store', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;

  before(async () => {
    ({ database, store } = await openStore(dir.path, 'empty.db'));
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('is feed_unavailable with a Retry-After when nothing was ever stored', async () => {
    const book = createRateBook({ store, providers: ['ecb'], clock: clockAt('2026-03-06T12:00:00Z') });
    const check = (error: unknown): boolean => {
      domainError('feed_unavailable')(error);
      const retry = (error as DomainError).retryAfterSeconds;
      assert.ok(retry !== undefined && retry > 0, `retryAfterSeconds ${retry}`);
      return true;
    };
    await assert.rejects(async () => book.liveRate('EUR', 'USD'), check);
    await assert.rejects(async () => book.liveRate('USD', 'USD'), check);
    await assert.rejects(book.convert('EUR', 'USD', '1'), check);
    // Input errors still come first.
    await assert.rejects(async () => book.liveRate('XYZ', 'USD'), domainError('invalid_currency', 'from'));
    await assert.rejects(book.convert('EUR', 'USD', '1e3'), domainError('invalid_amount', 'amount'));
  });

  it('reads the store again, not only after its check interval, when it held nothing and another process has filled it', async () => {
    const book = createRateBook({ store, providers: ['ecb'], clock: clockAt('2026-03-06T12:00:00Z'), cacheTtlMs: 60_000 });
    await assert.rejects(async () => book.liveRate('EUR', 'USD'), domainError('feed_unavailable'));
    // Another process (its own connection to the same file) stores the rates: this book is not told.
    const other = await openStore(dir.path, 'empty.db');
    try {
      assert.equal(await other.store.saveDocument(ECB_DOC), 10);
    } finally {
      await other.database.close();
    }
    assert.equal((await book.liveRate('EUR', 'USD')).rate, '1.19');
  });
});

describe('rate book on its clock', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('reads the store again once its check interval has passed on its clock, however little real time passed', async () => {
    const { database, store } = await openStore(dir.path, 'clocked.db');
    try {
      await store.saveDocument({ ...ECB_DOC, days: [ECB_DOC.days[0]!] });
      let now = Date.parse('2026-03-06T12:00:00Z');
      const book = createRateBook({ store, providers: ['ecb'], clock: { now: () => new Date(now) }, cacheTtlMs: 60_000 });
      assert.equal((await book.liveRate('EUR', 'USD')).rate, '1.16');
      // Another process (its own connection to the same file) stores a newer day: this book is not told.
      const other = await openStore(dir.path, 'clocked.db');
      try {
        await other.store.saveDocument(ECB_DOC);
      } finally {
        await other.database.close();
      }
      assert.equal((await book.liveRate('EUR', 'USD')).rate, '1.16', 'within the interval, the book answers from what it holds');
      now += 60_001;
      await waitFor(async () => (await book.liveRate('EUR', 'USD')).rate === '1.19', 2_000, 'the book to read the newer day');
    } finally {
      await database.close();
    }
  });
});

describe('rate book across two providers with different bases', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  const book = () => createRateBook({ store, providers: ['ecb', 'other'], clock: clockAt('2026-03-06T12:00:00Z') });

  before(async () => {
    ({ database, store } = await openStore(dir.path, 'two.db'));
    await store.saveDocument(ECB_DOC);
    // A USD-based provider that quotes BRL, one day behind ECB.
    await store.saveDocument({ provider: 'other', base: 'USD', days: [{ day: '2026-03-04', asOf: '2026-03-04T21:00:00Z', rates: { BRL: '5.2000' } }] });
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('crosses on the newest day both providers have, to the base of the other', async () => {
    // On 03-04: BRL → USD = 1 / 5.2, USD → EUR = 1 / 1.16: 1 / 6.032 = 0.165782493… → 0.16578249
    const quote = await book().liveRate('BRL', 'EUR');
    assert.equal(quote.rate, '0.16578249');
    // The older of the two tables' asOf.
    assert.equal(quote.asOf, '2026-03-04T15:00:00Z');
  });

  it('crosses on the newest day both providers have, for a non-base currency', async () => {
    // On 03-04: GBP → USD = 1.16 / 0.87 = 4/3, USD → BRL = 5.2: 20.8 / 3 = 6.93333… → 6.9333333
    const quote = await book().liveRate('GBP', 'BRL');
    assert.equal(quote.rate, '6.9333333');
    assert.equal(quote.asOf, '2026-03-04T15:00:00Z');
  });

  it('crosses on the same day once both providers have it, and reports either provider’s staleness', async () => {
    await store.saveDocument({ provider: 'other', base: 'USD', days: [{ day: '2026-03-05', asOf: '2026-03-05T21:00:00Z', rates: { BRL: '5.3000' } }] });
    const b = book();
    // GBP → USD = 1.19 / 0.8699, USD → BRL = 5.3: 63070 / 8699 = 7.25025865… → 7.2502587
    const quote = await b.liveRate('GBP', 'BRL');
    assert.equal(quote.rate, '7.2502587');
    assert.equal(quote.asOf, '2026-03-05T15:00:00Z');
    assert.equal(quote.stale, false);

    await store.recordAttempt('other', { at: '2026-03-06T12:10:00Z', ok: false, error: 'timeout' });
    b.invalidate();
    assert.equal((await b.liveRate('GBP', 'BRL')).stale, true);
    assert.equal((await b.liveRate('BRL', 'gbp')).stale, true);
    // A pair served by ECB alone is not affected.
    assert.equal((await b.liveRate('GBP', 'USD')).stale, false);
    // 10 × 7.2502587 = 72.502587 → 72.50
    assert.equal((await b.convert('GBP', 'BRL', '10')).result, '72.50');
  });
});
