import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { divide, ONE, parseDecimal, roundSignificant } from '../../src/core/decimal.js';
import { DomainError } from '../../src/core/errors.js';
import { DEFAULT_RANGE, historyCsv, historyStats, pairHistory, parseRange, rangesFor, rangeStart, RANGES, type HistoryPoint } from '../../src/core/history.js';
import type { Clock, RateDocument, RateStore } from '../../src/core/ports.js';
import { createRateBook } from '../../src/core/rates.js';
import { ecbReferenceTime } from '../../src/core/time.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { tempDir } from '../helper.js';
import { domainError } from '../support/errors.js';

const points = (...pairs: Array<[string, string]>): HistoryPoint[] => pairs.map(([date, rate]) => ({ date, rate }));

describe('historyStats', () => {
  it('breaks ties for best and worst in favour of the most recent date', () => {
    const stats = historyStats(
      points(['2026-01-05', '1.5'], ['2026-01-06', '2'], ['2026-01-07', '1.5'], ['2026-01-08', '2'], ['2026-01-09', '1.75']),
    );
    // 2 appears on the 6th and 8th, 1.5 on the 5th and 7th: the later of each wins.
    assert.equal(stats.best, '2');
    assert.equal(stats.bestDate, '2026-01-08');
    assert.equal(stats.worst, '1.5');
    assert.equal(stats.worstDate, '2026-01-07');
    // (1.5 + 2 + 1.5 + 2 + 1.75) / 5 = 8.75 / 5 = 1.75
    assert.equal(stats.average, '1.75');
    // (1.75 − 1.5) / 1.5 × 100 = 16.6666… → 16.6667
    assert.equal(stats.changePct, 16.6667);
    // last equals the mean exactly
    assert.equal(stats.currentVsAveragePct, 0);
  });

  it('finds the extremes wherever they fall in the series', () => {
    const stats = historyStats(points(['2026-01-05', '3'], ['2026-01-06', '1'], ['2026-01-07', '2']));
    assert.deepEqual([stats.best, stats.bestDate, stats.worst, stats.worstDate], ['3', '2026-01-05', '1', '2026-01-06']);
    // (3 + 1 + 2) / 3 = 2; (2 − 3) / 3 × 100 = −33.3333…; (2 − 2) / 2 = 0
    assert.equal(stats.average, '2');
    assert.equal(stats.changePct, -33.3333);
    assert.equal(stats.currentVsAveragePct, 0);
  });

  it('answers a single point with zero change', () => {
    const stats = historyStats(points(['2026-03-05', '1.2345']));
    assert.deepEqual(stats, {
      best: '1.2345',
      bestDate: '2026-03-05',
      worst: '1.2345',
      worstDate: '2026-03-05',
      average: '1.2345',
      changePct: 0,
      currentVsAveragePct: 0,
    });
  });

  it('compares rates as numbers, not as text', () => {
    // As text "9.5" > "10.3" > "10.25"; as numbers 10.3 is highest and 9.5 lowest.
    const stats = historyStats(points(['2026-01-05', '10.25'], ['2026-01-06', '9.5'], ['2026-01-07', '10.3']));
    assert.equal(stats.best, '10.3');
    assert.equal(stats.worst, '9.5');
    // (10.25 + 9.5 + 10.3) / 3 = 30.05 / 3 = 10.016666… → 10.016667
    assert.equal(stats.average, '10.016667');
  });

  it('rounds the average half-to-even at the 8th significant digit', () => {
    // (1.0000001 + 1.0000002) / 2 = 1.00000015: the 8th digit 1 is odd, the tie goes up to 2.
    assert.equal(historyStats(points(['2026-01-05', '1.0000001'], ['2026-01-06', '1.0000002'])).average, '1.0000002');
    // (1.0000002 + 1.0000003) / 2 = 1.00000025: the 8th digit 2 is even, the tie stays.
    assert.equal(historyStats(points(['2026-01-05', '1.0000002'], ['2026-01-06', '1.0000003'])).average, '1.0000002');
    // (1234.5671 + 1234.5672) / 2 = 1234.56715 → 1234.5672 (1 odd, up)
    assert.equal(historyStats(points(['2026-01-05', '1234.5671'], ['2026-01-06', '1234.5672'])).average, '1234.5672');
    // (0.00012345672 + 0.00012345673) / 2 = 0.000123456725 → 0.00012345672 (2 even, stays)
    assert.equal(historyStats(points(['2026-01-05', '0.00012345672'], ['2026-01-06', '0.00012345673'])).average, '0.00012345672');
    // Just above a tie rounds up whatever the parity: (1.0000002 + 1.00000031) / 2 = 1.000000255 → 1.0000003
    assert.equal(historyStats(points(['2026-01-05', '1.0000002'], ['2026-01-06', '1.00000031'])).average, '1.0000003');
  });

  it('reports a falling series with negative percentages', () => {
    const stats = historyStats(points(['2026-01-05', '1.25'], ['2026-01-06', '1.1'], ['2026-01-07', '1']));
    // (1 − 1.25) / 1.25 × 100 = −20
    assert.equal(stats.changePct, -20);
    // mean = 3.35 / 3 = 1.11666…; 8 digits → 1.1166667
    assert.equal(stats.average, '1.1166667');
    // (1 − 67/60) / (67/60) × 100 = −7/67 × 100 = −10.447761… → −10.4478
    assert.equal(stats.currentVsAveragePct, -10.4478);
    assert.equal(stats.best, '1.25');
    assert.equal(stats.worst, '1');
  });

  it('rounds changePct half-to-even at the 4th decimal, both ways', () => {
    // (8.0001 − 8) / 8 × 100 = 0.00125: 2 is even, the tie stays at 0.0012.
    assert.equal(historyStats(points(['2026-01-05', '8'], ['2026-01-06', '8.0001'])).changePct, 0.0012);
    // (8.0003 − 8) / 8 × 100 = 0.00375: 7 is odd, the tie goes up to 0.0038.
    assert.equal(historyStats(points(['2026-01-05', '8'], ['2026-01-06', '8.0003'])).changePct, 0.0038);
    // (7.9999 − 8) / 8 × 100 = −0.00125 → −0.0012 (half-to-even on the magnitude)
    assert.equal(historyStats(points(['2026-01-05', '8'], ['2026-01-06', '7.9999'])).changePct, -0.0012);
    // (7.9997 − 8) / 8 × 100 = −0.00375 → −0.0038
    assert.equal(historyStats(points(['2026-01-05', '8'], ['2026-01-06', '7.9997'])).changePct, -0.0038);
    // (1.999999 − 2) / 2 × 100 = −0.00005 → a tie at zero: plain 0, never −0.
    assert.equal(historyStats(points(['2026-01-05', '2'], ['2026-01-06', '1.999999'])).changePct, 0);
    // (2.000003 − 2) / 2 × 100 = 0.00015 → 0.0002 (1 odd, up)
    assert.equal(historyStats(points(['2026-01-05', '2'], ['2026-01-06', '2.000003'])).changePct, 0.0002);
  });

  it('rounds currentVsAveragePct half-to-even at the 4th decimal against the exact mean', () => {
    // mean (3.99995 + 4.00005) / 2 = 4; (4.00005 − 4) / 4 × 100 = 0.00125 → 0.0012
    const even = historyStats(points(['2026-01-05', '3.99995'], ['2026-01-06', '4.00005']));
    assert.equal(even.currentVsAveragePct, 0.0012);
    // change: 0.0001 / 3.99995 × 100 = 0.00250003… → 0.0025
    assert.equal(even.changePct, 0.0025);
    assert.equal(even.average, '4');
    // mean 4; (4.00015 − 4) / 4 × 100 = 0.00375 → 0.0038
    const odd = historyStats(points(['2026-01-05', '3.99985'], ['2026-01-06', '4.00015']));
    assert.equal(odd.currentVsAveragePct, 0.0038);
    // change: 0.0003 / 3.99985 × 100 = 0.0075002… → 0.0075
    assert.equal(odd.changePct, 0.0075);
    // mean 4; (3.99995 − 4) / 4 × 100 = −0.00125 → −0.0012, and (3.99985 − 4) / 4 × 100 = −0.00375 → −0.0038
    assert.equal(historyStats(points(['2026-01-05', '4.00005'], ['2026-01-06', '3.99995'])).currentVsAveragePct, -0.0012);
    assert.equal(historyStats(points(['2026-01-05', '4.00015'], ['2026-01-06', '3.99985'])).currentVsAveragePct, -0.0038);
  });

  it('uses the unrounded mean for currentVsAveragePct', () => {
    const stats = historyStats(points(['2026-01-05', '1'], ['2026-01-06', '1.0000011']));
    // Exact mean 1.00000055; served average rounds the tie up (5 is odd) to 1.0000006.
    assert.equal(stats.average, '1.0000006');
    // Exact: 0.00000055 / 1.00000055 × 100 = 0.0000549999… → 0.0001.
    // (Against the rounded 1.0000006 it would be 0.0000499999… → 0, which is wrong.)
    assert.equal(stats.currentVsAveragePct, 0.0001);
    // 0.0000011 / 1 × 100 = 0.00011 → 0.0001
    assert.equal(stats.changePct, 0.0001);
  });

  it('refuses an empty series', () => {
    assert.throws(() => historyStats([]), RangeError);
  });
});

describe('rangeStart', () => {
  it('counts back calendar months and years from an ordinary day', () => {
    assert.equal(rangeStart('1m', '2026-03-15', 5), '2026-02-15');
    assert.equal(rangeStart('3m', '2026-03-15', 5), '2025-12-15');
    assert.equal(rangeStart('6m', '2026-03-15', 5), '2025-09-15');
    assert.equal(rangeStart('1y', '2026-03-15', 5), '2025-03-15');
    assert.equal(rangeStart('5y', '2026-03-15', 5), '2021-03-15');
    assert.equal(rangeStart('1m', '2026-01-15', 5), '2025-12-15');
  });

  it('clamps to the end of a shorter target month', () => {
    assert.equal(rangeStart('1m', '2026-03-31', 5), '2026-02-28');
    assert.equal(rangeStart('3m', '2026-03-31', 5), '2025-12-31');
    assert.equal(rangeStart('6m', '2026-03-31', 5), '2025-09-30');
    assert.equal(rangeStart('1y', '2026-03-31', 5), '2025-03-31');
    assert.equal(rangeStart('5y', '2026-03-31', 5), '2021-03-31');
    assert.equal(rangeStart('1m', '2026-05-31', 5), '2026-04-30');
    assert.equal(rangeStart('3m', '2026-05-31', 5), '2026-02-28');
  });

  it('handles leap days', () => {
    assert.equal(rangeStart('1y', '2024-02-29', 5), '2023-02-28');
    assert.equal(rangeStart('5y', '2024-02-29', 5), '2019-02-28');
    assert.equal(rangeStart('1m', '2024-02-29', 5), '2024-01-29');
    assert.equal(rangeStart('6m', '2024-02-29', 5), '2023-08-29');
    // 2024 is a leap year: March 31st minus a month clamps to the 29th, not the 28th.
    assert.equal(rangeStart('1m', '2024-03-31', 5), '2024-02-29');
    assert.equal(rangeStart('1y', '2025-02-28', 5), '2024-02-28');
    assert.equal(rangeStart('5y', '2029-02-28', 5), '2024-02-28');
  });
});

describe('parseRange', () => {
  it('defaults to 1y and accepts every listed range', () => {
    assert.equal(DEFAULT_RANGE, '1y');
    assert.equal(parseRange(undefined, 5), '1y');
    assert.deepEqual([...RANGES], ['1m', '3m', '6m', '1y', '5y']);
    for (const range of RANGES) assert.equal(parseRange(range, 5), range);
  });

  it('rejects anything else as invalid_range on the range parameter', () => {
    for (const input of ['', '2y', '1M', '1Y', '12m', ' 1m', '1m ', '1w', 'all', '1d', 'max']) {
      assert.throws(() => parseRange(input, 5), domainError('invalid_range', 'range'), JSON.stringify(input));
    }
  });

  it('takes 10y and max only where more than five years are kept', () => {
    for (const years of [1, 5] as const) {
      assert.deepEqual(rangesFor(years), RANGES);
      assert.throws(() => parseRange('10y', years), /range must be one of 1m, 3m, 6m, 1y, 5y\./);
    }
    for (const years of [6, 30, 'all'] as const) {
      assert.deepEqual(rangesFor(years), [...RANGES, '10y', 'max']);
      assert.equal(parseRange('10y', years), '10y');
      assert.equal(parseRange('max', years), 'max');
      assert.throws(() => parseRange('all', years), /range must be one of 1m, 3m, 6m, 1y, 5y, 10y, max\./);
    }
  });

  it('counts 10y back in calendar years and starts max at the oldest day kept', () => {
    assert.equal(rangeStart('10y', '2026-03-31', 'all'), '2016-03-31');
    assert.equal(rangeStart('10y', '2024-02-29', 12), '2014-02-28');
    assert.equal(rangeStart('max', '2026-03-31', 'all'), '1900-01-01');
    // Twelve years and the month of margin the store keeps.
    assert.equal(rangeStart('max', '2026-03-31', 12), '2014-02-28');
  });
});

describe('historyCsv', () => {
  it('writes a header and one CRLF-terminated row per point, as given', () => {
    const csv = historyCsv(points(['2026-01-12', '1.18'], ['2026-01-13', '0.000060477238'], ['2026-01-15', '150']));
    assert.equal(csv, 'date,rate\r\n2026-01-12,1.18\r\n2026-01-13,0.000060477238\r\n2026-01-15,150\r\n');
    assert.deepEqual(
      [...Buffer.from(csv, 'utf8').subarray(0, 11)],
      [0x64, 0x61, 0x74, 0x65, 0x2c, 0x72, 0x61, 0x74, 0x65, 0x0d, 0x0a],
    );
  });

  it('writes only the header for no points', () => {
    assert.equal(historyCsv([]), 'date,rate\r\n');
  });
});

/*
 * A small ECB-like history, EUR base. Gaps on purpose: JPY is missing on 01-13, USD on 01-14,
 * GBP on 01-15; CHF and SEK appear on one day each and never on the same day; NOK only on 01-09.
 * With the clock at 2026-02-12 the 1m range starts on 2026-01-12 (a stored day) and 3m on
 * 2025-11-12, so 2026-01-09 is inside 3m only.
 */
const DAYS: Record<string, Record<string, string>> = {
  '2026-01-09': { USD: '1.1700', JPY: '175.50', GBP: '0.86000', NOK: '11.0500' },
  '2026-01-12': { USD: '1.1800', JPY: '177.00', GBP: '0.86500' },
  '2026-01-13': { USD: '1.1850', GBP: '0.86800', CHF: '0.9300' },
  '2026-01-14': { JPY: '178.20', GBP: '0.87000', SEK: '10.950' },
  '2026-01-15': { USD: '1.2000', JPY: '180.00' },
  '2026-02-06': { USD: '1.1900', JPY: '182.5', GBP: '0.8700' },
};

const DOCUMENT: RateDocument = {
  provider: 'ecb',
  base: 'EUR',
  days: Object.entries(DAYS).map(([day, rates]) => ({ day, asOf: ecbReferenceTime(day), rates })),
};

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });

describe('pairHistory over a stored rate document', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  const bookAt = (iso: string) => createRateBook({ store, providers: ['ecb'], clock: clockAt(iso) });

  before(async () => {
    database = await openDatabase(`sqlite:${join(dir.path, 'history.db')}`);
    await migrateToLatest(database.db);
    store = createRateStore(database.db);
    assert.equal(await store.saveDocument(DOCUMENT), 18);
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('lists only the days on which both currencies have a rate, ascending', async () => {
    const history = await pairHistory(bookAt('2026-02-12T12:00:00Z'), 'USD', 'JPY', '1m');
    assert.equal(history.pair, 'USDJPY');
    assert.equal(history.from, 'USD');
    assert.equal(history.to, 'JPY');
    assert.equal(history.range, '1m');
    // 01-13 (no JPY) and 01-14 (no USD) are skipped; 01-09 is before the range.
    // 177 / 1.18 = 150; 180 / 1.2 = 150; 182.5 / 1.19 = 153.36134453… → 153.36134
    assert.deepEqual(history.points, points(['2026-01-12', '150'], ['2026-01-15', '150'], ['2026-02-06', '153.36134']));
    assert.equal(history.count, 3);
    assert.deepEqual(history.stats, {
      best: '153.36134',
      bestDate: '2026-02-06',
      // 150 twice: the later day wins
      worst: '150',
      worstDate: '2026-01-15',
      // (150 + 150 + 153.36134) / 3 = 151.120446666… → 151.12045
      average: '151.12045',
      // 3.36134 / 150 × 100 = 2.2408933… → 2.2409
      changePct: 2.2409,
      // (153.36134 − 151.1204466…) / 151.1204466… × 100 = 1.4828525… → 1.4829
      currentVsAveragePct: 1.4829,
    });
  });

  it('includes the range start day and widens with the range', async () => {
    const history = await pairHistory(bookAt('2026-02-12T12:00:00Z'), 'usd', 'jpy', '3m');
    // 175.5 / 1.17 = 150
    assert.deepEqual(
      history.points.map((p) => p.date),
      ['2026-01-09', '2026-01-12', '2026-01-15', '2026-02-06'],
    );
    assert.equal(history.points[0]!.rate, '150');
    assert.equal(history.pair, 'USDJPY');
    // Without a range the default 1y applies, which here holds the same four days.
    const byDefault = await pairHistory(bookAt('2026-02-12T12:00:00Z'), 'USD', 'JPY', undefined);
    assert.equal(byDefault.range, '1y');
    assert.equal(byDefault.count, 4);
  });

  it('treats the base currency as published on every day, as from and as to', async () => {
    const book = bookAt('2026-02-12T12:00:00Z');
    const eurUsd = await pairHistory(book, 'EUR', 'USD', '1m');
    assert.deepEqual(eurUsd.points, points(['2026-01-12', '1.18'], ['2026-01-13', '1.185'], ['2026-01-15', '1.2'], ['2026-02-06', '1.19']));
    // best 1.2 (01-15), worst 1.18 (01-12); mean (1.18 + 1.185 + 1.2 + 1.19) / 4 = 4.755 / 4 = 1.18875
    // change (1.19 − 1.18) / 1.18 × 100 = 0.8474576… → 0.8475
    // vs mean (1.19 − 1.18875) / 1.18875 × 100 = 0.1051524… → 0.1052
    assert.deepEqual(eurUsd.stats, {
      best: '1.2',
      bestDate: '2026-01-15',
      worst: '1.18',
      worstDate: '2026-01-12',
      average: '1.18875',
      changePct: 0.8475,
      currentVsAveragePct: 0.1052,
    });

    const usdEur = await pairHistory(book, 'USD', 'EUR', '1m');
    // 1 / 1.18 = 0.847457627… → 0.84745763; 1 / 1.185 = 0.843881856… → 0.84388186;
    // 1 / 1.2 = 0.8333… → 0.83333333; 1 / 1.19 = 0.840336134… → 0.84033613
    assert.deepEqual(
      usdEur.points,
      points(['2026-01-12', '0.84745763'], ['2026-01-13', '0.84388186'], ['2026-01-15', '0.83333333'], ['2026-02-06', '0.84033613']),
    );
    // Statistics come from the rounded points: best 0.84745763 (01-12), worst 0.83333333 (01-15),
    // mean 3.36500895 / 4 = 0.8412522375 → 0.84125224
    assert.equal(usdEur.stats.best, '0.84745763');
    assert.equal(usdEur.stats.worstDate, '2026-01-15');
    assert.equal(usdEur.stats.average, '0.84125224');
  });

  it('serves a cross pair without the base through the base', async () => {
    const history = await pairHistory(bookAt('2026-02-12T12:00:00Z'), 'GBP', 'USD', '1m');
    // Days with both: 01-12 and 02-06 (01-13 has both too; 01-14 lacks USD, 01-15 lacks GBP).
    // 1.18 / 0.865 = 1.36416184… → 1.3641618; 1.185 / 0.868 = 1.36520737… → 1.3652074;
    // 1.19 / 0.87 = 1.36781609… → 1.3678161
    assert.deepEqual(history.points, points(['2026-01-12', '1.3641618'], ['2026-01-13', '1.3652074'], ['2026-02-06', '1.3678161']));
  });

  it('answers the same currency on both sides with rate 1 on every published day', async () => {
    const book = bookAt('2026-02-12T12:00:00Z');
    const usdUsd = await pairHistory(book, 'USD', 'USD', '1m');
    assert.deepEqual(usdUsd.points, points(['2026-01-12', '1'], ['2026-01-13', '1'], ['2026-01-15', '1'], ['2026-02-06', '1']));
    assert.deepEqual(
      [usdUsd.stats.best, usdUsd.stats.bestDate, usdUsd.stats.worstDate, usdUsd.stats.average, usdUsd.stats.changePct, usdUsd.stats.currentVsAveragePct],
      ['1', '2026-02-06', '2026-02-06', '1', 0, 0],
    );
  });

  it('answers the base against itself on every day the provider published', async () => {
    // EUR is implicitly 1 in every ECB day, so EUR/EUR has a point on each of the five stored
    // days in range, including 01-14 when USD (and 01-13 when JPY, 01-15 when GBP) is missing.
    const eurEur = await pairHistory(bookAt('2026-02-12T12:00:00Z'), 'EUR', 'EUR', '1m');
    assert.equal(eurEur.pair, 'EUREUR');
    assert.deepEqual(
      eurEur.points,
      points(['2026-01-12', '1'], ['2026-01-13', '1'], ['2026-01-14', '1'], ['2026-01-15', '1'], ['2026-02-06', '1']),
    );
  });

  it('is no_history when the range holds no common day', async () => {
    // CHF (01-13 only) and SEK (01-14 only) never share a day.
    await assert.rejects(pairHistory(bookAt('2026-02-12T12:00:00Z'), 'CHF', 'SEK', '1m'), domainError('no_history'));
    // Months later, the 1m range (2026-05-01 … 2026-06-01) holds nothing stored.
    await assert.rejects(pairHistory(bookAt('2026-06-01T12:00:00Z'), 'USD', 'JPY', '1m'), domainError('no_history'));
  });

  it('is no_history, not unsupported, for a currency stored only before the range', async () => {
    const book = bookAt('2026-02-12T12:00:00Z');
    await assert.rejects(pairHistory(book, 'EUR', 'NOK', '1m'), domainError('no_history'));
    await assert.rejects(pairHistory(book, 'nok', 'USD', '1m'), domainError('no_history'));
    const wider = await pairHistory(book, 'EUR', 'NOK', '3m');
    assert.deepEqual(wider.points, points(['2026-01-09', '11.05']));
    // 1.17 / 11.05 = 0.105882352… → 0.10588235
    assert.deepEqual((await pairHistory(book, 'NOK', 'USD', '3m')).points, points(['2026-01-09', '0.10588235']));
  });

  it('is unsupported_currency for a valid code no provider has, on the right parameter', async () => {
    const book = bookAt('2026-02-12T12:00:00Z');
    await assert.rejects(pairHistory(book, 'BRL', 'USD', '1m'), domainError('unsupported_currency', 'from'));
    await assert.rejects(pairHistory(book, 'USD', 'brl', '1m'), domainError('unsupported_currency', 'to'));
  });

  it('is invalid_currency for codes that are not ISO 4217, before anything else', async () => {
    const book = bookAt('2026-02-12T12:00:00Z');
    await assert.rejects(pairHistory(book, 'XYZ', 'USD', '1m'), domainError('invalid_currency', 'from'));
    await assert.rejects(pairHistory(book, 'USD', 'usdd', '1m'), domainError('invalid_currency', 'to'));
    // A bad currency is reported even when the range is bad too.
    await assert.rejects(pairHistory(book, 'XYZ', 'USD', '2y'), domainError('invalid_currency', 'from'));
    await assert.rejects(pairHistory(book, 'USD', 'JPY', '2y'), domainError('invalid_range', 'range'));
  });

  it('is feed_unavailable when nothing is stored at all', async () => {
    const emptyDir = tempDir();
    const empty = await openDatabase(`sqlite:${join(emptyDir.path, 'empty.db')}`);
    try {
      await migrateToLatest(empty.db);
      const book = createRateBook({ store: createRateStore(empty.db), providers: ['ecb'], clock: clockAt('2026-02-12T12:00:00Z') });
      await assert.rejects(pairHistory(book, 'USD', 'JPY', '1m'), (error: unknown) => {
        assert.ok(error instanceof DomainError);
        assert.equal(error.code, 'feed_unavailable');
        assert.equal(error.retryAfterSeconds, 60);
        return true;
      });
    } finally {
      await empty.close();
      emptyDir.remove();
    }
  });
});

describe('pairHistory with rates too long for exact double arithmetic', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let store: RateStore;
  // 17 significant digits: not exact in a double, so these points are computed with BigInt.
  const LONG: Record<string, Record<string, string>> = {
    '2026-01-12': { USD: '1.1800', XAU: '0.00041234567890123456' },
    '2026-01-13': { USD: '1.1850', XAU: '0.00041334567890123457' },
    '2026-01-14': { USD: '1.1900', XAU: '0.0004' },
  };

  before(async () => {
    database = await openDatabase(`sqlite:${join(dir.path, 'long.db')}`);
    await migrateToLatest(database.db);
    store = createRateStore(database.db);
    await store.saveDocument({
      provider: 'ecb',
      base: 'EUR',
      days: Object.entries(LONG).map(([day, rates]) => ({ day, asOf: ecbReferenceTime(day), rates })),
    });
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('gives the exact rounding of every point and the statistics of the points as served', async () => {
    const book = createRateBook({ store, providers: ['ecb'], clock: clockAt('2026-02-12T12:00:00Z') });
    const history = await pairHistory(book, 'USD', 'XAU', '1m');
    const expected = Object.entries(LONG).map(([date, rates]) => ({
      date,
      rate: roundSignificant(divide(parseDecimal(rates.XAU!)!, parseDecimal(rates.USD!)!), 8),
    }));
    assert.deepEqual(history.points, expected);
    assert.deepEqual(
      history.points.map((p) => p.rate),
      ['0.00034944549', '0.00034881492', '0.00033613445'],
    );
    assert.deepEqual(history.stats, historyStats(expected));
    assert.equal(history.stats.best, '0.00034944549');
    assert.equal(history.stats.worst, '0.00033613445');
    const inverse = await pairHistory(book, 'XAU', 'EUR', '1m');
    assert.deepEqual(
      inverse.points.map((p) => p.rate),
      Object.values(LONG).map((rates) => roundSignificant(divide(ONE, parseDecimal(rates.XAU!)!), 8)),
    );
  });
});
