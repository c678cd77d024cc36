import { parseCurrency } from './currencies.js';
import { compare, divide, mean, parseDecimal, roundSignificant, roundToScale, subtract, fromInteger, multiply, type Rational } from './decimal.js';
import { DomainError } from './errors.js';
import { crossRate, formatRate, RATE_DIGITS, tableFromQuotes, today, type DayTable, type RateBook } from './rates.js';
import { subtractMonths, type Day } from './time.js';

export const RANGES = ['1m', '3m', '6m', '1y', '5y'] as const;
export type HistoryRange = (typeof RANGES)[number];
export const DEFAULT_RANGE: HistoryRange = '1y';
const RANGE_MONTHS: Record<HistoryRange, number> = { '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60 };

export interface HistoryPoint {
  date: Day;
  rate: string;
}

export interface HistoryStats {
  best: string;
  bestDate: Day;
  worst: string;
  worstDate: Day;
  average: string;
  changePct: number;
  currentVsAveragePct: number;
}

export interface History {
  pair: string;
  from: string;
  to: string;
  range: HistoryRange;
  count: number;
  points: HistoryPoint[];
  stats: HistoryStats;
}

export function parseRange(input: string | undefined): HistoryRange {
  if (input === undefined) return DEFAULT_RANGE;
  if ((RANGES as readonly string[]).includes(input)) return input as HistoryRange;
  throw new DomainError('invalid_range', `range must be one of ${RANGES.join(', ')}.`, { param: 'range' });
}

/** The first day of a range, counted back from today (UTC) in calendar months or years. */
export function rangeStart(range: HistoryRange, todayDay: Day): Day {
  return subtractMonths(todayDay, RANGE_MONTHS[range]);
}

function percent(numerator: Rational, denominator: Rational): number {
  const value = multiply(divide(numerator, denominator), fromInteger(100));
  return Number(roundToScale(value, 4));
}

/**
 * Statistics from the points exactly as served (SPEC §3): best is the highest rate, worst the
 * lowest, the most recent date winning ties; the average is the exact mean, rounded once.
 */
export function historyStats(points: readonly HistoryPoint[]): HistoryStats {
  if (points.length === 0) throw new RangeError('statistics of an empty history');
  const values = points.map((p) => parseDecimal(p.rate)!);
  let best = 0;
  let worst = 0;
  for (let i = 1; i < values.length; i++) {
    if (compare(values[i]!, values[best]!) >= 0) best = i;
    if (compare(values[i]!, values[worst]!) <= 0) worst = i;
  }
  const exactMean = mean(values);
  const first = values[0]!;
  const last = values[values.length - 1]!;
  return {
    best: points[best]!.rate,
    bestDate: points[best]!.date,
    worst: points[worst]!.rate,
    worstDate: points[worst]!.date,
    average: roundSignificant(exactMean, RATE_DIGITS),
    changePct: values.length === 1 ? 0 : percent(subtract(last, first), first),
    currentVsAveragePct: percent(subtract(last, exactMean), exactMean),
  };
}

/** RFC 4180 CSV with CRLF line ends and a `date,rate` header (SPEC §5). */
export function historyCsv(points: readonly HistoryPoint[]): string {
  let out = 'date,rate\r\n';
  for (const p of points) out += `${p.date},${p.rate}\r\n`;
  return out;
}

function groupByDay(provider: string, base: string, rows: Awaited<ReturnType<RateBook['store']['series']>>): Map<Day, DayTable> {
  const byDay = new Map<Day, typeof rows>();
  for (const row of rows) {
    let list = byDay.get(row.day);
    if (!list) byDay.set(row.day, (list = []));
    list.push(row);
  }
  const tables = new Map<Day, DayTable>();
  for (const [day, quotes] of byDay) tables.set(day, tableFromQuotes(provider, base, day, quotes));
  return tables;
}

/** Which provider's stored series serves a currency: one that quotes it today, else any with history. */
async function historyProviderFor(book: RateBook, code: string, end: Day): Promise<{ provider: string; base: string } | null> {
  const tables = await book.latestTables();
  for (const provider of book.providers) {
    const table = tables.get(provider);
    if (table?.values.has(code)) return { provider, base: table.base };
  }
  for (const provider of book.providers) {
    const table = tables.get(provider);
    if (!table) continue;
    // Any retained day counts: a currency with history outside the range is a 404, not a 400.
    const rows = await book.store.series(provider, [code], { from: rangeStart('5y', end), to: end });
    if (rows.length > 0) return { provider, base: table.base };
  }
  return null;
}

export async function pairHistory(book: RateBook, fromInput: string, toInput: string, rangeInput: string | undefined): Promise<History> {
  const from = parseCurrency(fromInput, 'from');
  const to = parseCurrency(toInput, 'to');
  const range = parseRange(rangeInput);
  const end = today(book.clock);
  const span = { from: rangeStart(range, end), to: end };

  const tables = await book.latestTables();
  if (tables.size === 0) {
    throw new DomainError('feed_unavailable', 'No rates have been loaded yet and the rate feed could not be reached. Try again shortly.', {
      retryAfterSeconds: 60,
    });
  }
  const fromSource = await historyProviderFor(book, from, end);
  if (!fromSource) throw new DomainError('unsupported_currency', `No configured rate provider has rates for ${from}.`, { param: 'from' });
  const toSource = await historyProviderFor(book, to, end);
  if (!toSource) throw new DomainError('unsupported_currency', `No configured rate provider has rates for ${to}.`, { param: 'to' });

  const points: HistoryPoint[] = [];
  if (fromSource.provider === toSource.provider) {
    const { provider, base } = fromSource;
    const wanted = [...new Set([from, to].filter((c) => c !== base))];
    if (wanted.length === 0) {
      // Base to base: the base is implicitly published on every day the provider published anything.
      for (const day of await book.store.publishedDays(provider, span)) points.push({ date: day, rate: '1' });
    } else {
      for (const [day, table] of groupByDay(provider, base, await book.store.series(provider, wanted, span))) {
        const value = crossRate(table, from, table, to);
        if (value) points.push({ date: day, rate: formatRate(value) });
      }
    }
  } else {
    const fromTables = groupByDay(fromSource.provider, fromSource.base, await book.store.series(fromSource.provider, [from, toSource.base], span));
    const toTables = groupByDay(toSource.provider, toSource.base, await book.store.series(toSource.provider, [to, fromSource.base], span));
    for (const [day, fromTable] of fromTables) {
      const toTable = toTables.get(day);
      if (!toTable) continue;
      const value = crossRate(fromTable, from, toTable, to);
      if (value) points.push({ date: day, rate: formatRate(value) });
    }
  }
  points.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  if (points.length === 0) {
    throw new DomainError('no_history', `No rates for ${from}/${to} are stored for the ${range} range.`);
  }
  return { pair: from + to, from, to, range, count: points.length, points, stats: historyStats(points) };
}
