import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { DomainError } from '../../src/core/errors.js';
import { groupPoints, historyCsv, historyNdjson, historyStats, parseGroup, parseWindow, periodStart, type History, type HistoryPoint } from '../../src/core/history.js';

/** decimal.js with room for every digit of these means: the reference the service is checked against. */
const Exact = Decimal.clone({ precision: 200, toExpNeg: -100, toExpPos: 100 });

/** The mean of rates as decimal.js computes it, rounded half-to-even to 8 significant digits. */
function expectedMean(rates: readonly string[]): string {
  const sum = rates.reduce((total, rate) => total.plus(rate), new Exact(0));
  return sum.div(rates.length).toSignificantDigits(8, Decimal.ROUND_HALF_EVEN).toString();
}

const points = (...pairs: Array<[string, string]>): HistoryPoint[] => pairs.map(([date, rate]) => ({ date, rate }));

function domainError(code: string, param: string | undefined) {
  return (error: unknown) => error instanceof DomainError && error.code === code && error.param === param;
}

describe('periodStart', () => {
  it('dates a day by its ISO week Monday', () => {
    // 2026-03-05 is a Thursday, 2026-03-09 a Monday, 2026-03-08 a Sunday.
    assert.equal(periodStart('2026-03-05', 'week'), '2026-03-02');
    assert.equal(periodStart('2026-03-09', 'week'), '2026-03-09');
    assert.equal(periodStart('2026-03-08', 'week'), '2026-03-02');
    // ISO week 1 of 2026 starts on Monday 2025-12-29: the week crosses the year.
    assert.equal(periodStart('2026-01-02', 'week'), '2025-12-29');
    // Before 1970 the weekday arithmetic still holds (1969-12-31 was a Wednesday).
    assert.equal(periodStart('1969-12-31', 'week'), '1969-12-29');
  });

  it('dates a day by its month first day', () => {
    assert.equal(periodStart('2024-02-29', 'month'), '2024-02-01');
    assert.equal(periodStart('2026-03-01', 'month'), '2026-03-01');
  });
});

describe('groupPoints', () => {
  it('gives each period the exact mean of its points, rounded once, and its day count', () => {
    const daily = points(
      ['2026-02-26', '1.0842'],
      ['2026-02-27', '1.0851'],
      ['2026-03-02', '1.0863'],
      ['2026-03-03', '1.0871'],
      ['2026-03-04', '1.0869'],
    );
    const monthly = groupPoints(daily, 'month');
    assert.deepEqual(monthly, [
      { date: '2026-02-01', rate: expectedMean(['1.0842', '1.0851']), days: 2 },
      { date: '2026-03-01', rate: expectedMean(['1.0863', '1.0871', '1.0869']), days: 3 },
    ]);
    // (1.0863 + 1.0871 + 1.0869) / 3 = 3.2603 / 3 = 1.08676666… → 1.0867667
    assert.equal(monthly[1]!.rate, '1.0867667');
    const weekly = groupPoints(daily, 'week');
    assert.deepEqual(
      weekly.map((p) => [p.date, p.days]),
      [
        ['2026-02-23', 2],
        ['2026-03-02', 3],
      ],
    );
  });

  it('rounds the mean half-to-even at the 8th significant digit, once', () => {
    // 1.00000015 → 1.0000002 (1 is odd, up); 1.00000025 → 1.0000002 (2 is even, stays).
    assert.equal(groupPoints(points(['2026-01-05', '1.0000001'], ['2026-01-06', '1.0000002']), 'week')[0]!.rate, '1.0000002');
    assert.equal(groupPoints(points(['2026-01-05', '1.0000002'], ['2026-01-06', '1.0000003']), 'week')[0]!.rate, '1.0000002');
    // Small and large rates keep 8 significant digits, trailing zeros removed.
    const small = ['0.000060477238', '0.000060477241', '0.000060477239'];
    assert.equal(groupPoints(points(['2026-01-05', small[0]!], ['2026-01-06', small[1]!], ['2026-01-07', small[2]!]), 'month')[0]!.rate, expectedMean(small));
    assert.equal(groupPoints(points(['2026-01-05', '19644.7'], ['2026-01-06', '19644.9']), 'month')[0]!.rate, '19644.8');
  });

  it('matches decimal.js on a long series of awkward rates', () => {
    // A deterministic series of 8-significant-digit rates over 400 days: every period's mean is
    // checked against decimal.js computing from the same texts.
    const daily: HistoryPoint[] = [];
    let seed = 12345;
    for (let day = 0; day < 400; day++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const date = new Date(Date.UTC(2024, 0, 1 + day)).toISOString().slice(0, 10);
      daily.push({ date, rate: new Exact(10_000_000 + (seed % 90_000_000)).div(10 ** ((seed >> 8) % 12)).toSignificantDigits(8).toString() });
    }
    for (const group of ['week', 'month'] as const) {
      const grouped = groupPoints(daily, group);
      let counted = 0;
      for (const point of grouped) {
        const members = daily.filter((p) => periodStart(p.date, group) === point.date);
        assert.equal(point.days, members.length);
        assert.equal(point.rate, expectedMean(members.map((p) => p.rate)), `${group} ${point.date}`);
        counted += members.length;
      }
      assert.equal(counted, daily.length, 'every day in exactly one period');
    }
  });

  it('is empty for no points, and statistics run over the grouped points', () => {
    assert.deepEqual(groupPoints([], 'month'), []);
    const grouped = groupPoints(points(['2026-01-05', '2'], ['2026-01-06', '3'], ['2026-02-02', '1']), 'month');
    const stats = historyStats(grouped);
    assert.deepEqual([stats.best, stats.bestDate, stats.worst, stats.worstDate, stats.average], ['2.5', '2026-01-01', '1', '2026-02-01', '1.75']);
    // (1 − 2.5) / 2.5 × 100 = −60
    assert.equal(stats.changePct, -60);
  });
});

describe('parseWindow', () => {
  const today = '2026-03-06';

  it('keeps the fixed ranges, 1y by default', () => {
    assert.equal(parseWindow({}, today, 5), '1y');
    assert.equal(parseWindow({ range: '3m' }, today, 5), '3m');
  });

  it('takes start and end, end defaulting to today', () => {
    assert.deepEqual(parseWindow({ start: '2025-01-01', end: '2025-06-30' }, today, 5), { start: '2025-01-01', end: '2025-06-30' });
    assert.deepEqual(parseWindow({ start: '2026-03-06' }, today, 5), { start: '2026-03-06', end: '2026-03-06' });
    // The oldest start is today five years back.
    assert.deepEqual(parseWindow({ start: '2021-03-06', end: '2021-03-06' }, today, 5), { start: '2021-03-06', end: '2021-03-06' });
  });

  it('refuses what cannot be served, naming the parameter', () => {
    assert.throws(() => parseWindow({ range: '1y', start: '2025-01-01' }, today, 5), domainError('invalid_range', 'range'));
    assert.throws(() => parseWindow({ end: '2025-01-01' }, today, 5), domainError('missing_parameter', 'start'));
    assert.throws(() => parseWindow({ start: '2025-07-01', end: '2025-06-30' }, today, 5), domainError('invalid_date', 'start'));
    assert.throws(() => parseWindow({ start: '2026-03-07' }, today, 5), domainError('invalid_date', 'start'));
    assert.throws(() => parseWindow({ start: '2026-01-01', end: '2026-03-07' }, today, 5), domainError('invalid_date', 'end'));
    assert.throws(() => parseWindow({ start: '2025-02-29' }, today, 5), domainError('invalid_date', 'start'));
    assert.throws(() => parseWindow({ start: '2025-01-01', end: '2025-13-01' }, today, 5), domainError('invalid_date', 'end'));
    assert.throws(() => parseWindow({ start: '2021-03-05' }, today, 5), domainError('invalid_date', 'start'));
  });

  it('reaches as far back as EXRATES_HISTORY_YEARS keeps', () => {
    assert.throws(() => parseWindow({ start: '2016-03-05' }, today, 10), /start must be within the retained 10 years: on or after 2016-03-06\./);
    assert.deepEqual(parseWindow({ start: '2016-03-06' }, today, 10), { start: '2016-03-06', end: today });
    assert.deepEqual(parseWindow({ start: '1999-01-04', end: '2000-12-31' }, today, 'all'), { start: '1999-01-04', end: '2000-12-31' });
    assert.throws(() => parseWindow({ start: '2021-03-05' }, today, 5), /start must be within the retained 5 years: on or after 2021-03-06\./);
    assert.equal(parseWindow({ range: 'max' }, today, 'all'), 'max');
    assert.throws(() => parseWindow({ range: 'max' }, today, 5), domainError('invalid_range', 'range'));
  });
});

describe('parseGroup', () => {
  it('takes week and month, nothing else', () => {
    assert.equal(parseGroup(undefined), undefined);
    assert.equal(parseGroup('week'), 'week');
    assert.equal(parseGroup('month'), 'month');
    assert.throws(() => parseGroup('year'), domainError('invalid_range', 'group'));
    assert.throws(() => parseGroup('Month'), domainError('invalid_range', 'group'));
  });
});

describe('grouped output', () => {
  const grouped = groupPoints(points(['2026-01-05', '2'], ['2026-01-06', '3'], ['2026-02-02', '1']), 'month');
  const history: History = {
    pair: 'EURUSD',
    from: 'EUR',
    to: 'USD',
    range: '2026-01-05/2026-02-02',
    group: 'month',
    count: grouped.length,
    points: grouped,
    stats: historyStats(grouped),
    asOf: '2026-02-02T15:00:00Z',
  };

  it('adds a days column to the CSV', () => {
    assert.equal(historyCsv(grouped), 'date,rate,days\r\n2026-01-01,2.5,2\r\n2026-02-01,1,1\r\n');
    assert.equal(historyCsv(points(['2026-01-05', '2'])), 'date,rate\r\n2026-01-05,2\r\n');
  });

  it('writes NDJSON: a point per line, then the other fields and the statistics', () => {
    const lines = historyNdjson(history).split('\n');
    assert.equal(lines.pop(), '', 'every line ends with a newline');
    assert.deepEqual(lines.slice(0, 2).map((line) => JSON.parse(line)), grouped);
    assert.deepEqual(JSON.parse(lines[2]!), { pair: 'EURUSD', range: '2026-01-05/2026-02-02', group: 'month', count: 2, stats: history.stats });
    assert.equal(lines.length, 3);
  });
});
