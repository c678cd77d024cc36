import { parseCurrency } from './currencies.js';
import {
  compare,
  divide,
  formatSmall,
  fromInteger,
  mean,
  multiply,
  ONE,
  parseDecimal,
  parseSmallDecimal,
  parseSmallDecimals,
  quotientSignificant,
  roundSignificant,
  roundToScale,
  subtract,
  summarize,
  type Rational,
  type SmallDecimal,
} from './decimal.js';
import { DomainError } from './errors.js';
import { bridgeCurrency, formatRate, RATE_DIGITS, rateOn, sameProviderWhenPossible, today, type RateBook } from './rates.js';
import { daysOf, lowerBound, scaledSeries, type ProviderRates } from './rate-index.js';
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
  /** When the last point applies (as a rate's asOf): the history's Last-Modified. Not part of the body. */
  asOf: string;
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
  const { units, scales } = parseSmallDecimals(points.map((p) => p.rate));
  return statsOf(points, units, scales);
}

/** Statistics of points whose rates are also given as SmallDecimals (NaN units where one is not). */
function statsOf(points: readonly HistoryPoint[], units: Float64Array, scales: Int8Array): HistoryStats {
  if (points.length === 0) throw new RangeError('statistics of an empty history');
  let best = 0;
  let worst = 0;
  let exactMean: Rational;
  const summary = summarize(units, scales, points.length);
  if (summary) {
    ({ greatest: best, least: worst, mean: exactMean } = summary);
  } else {
    const values = points.map((p) => parseDecimal(p.rate)!);
    for (let i = 1; i < values.length; i++) {
      if (compare(values[i]!, values[best]!) >= 0) best = i;
      if (compare(values[i]!, values[worst]!) <= 0) worst = i;
    }
    exactMean = mean(values);
  }
  const first = parseDecimal(points[0]!.rate)!;
  const last = parseDecimal(points[points.length - 1]!.rate)!;
  return {
    best: points[best]!.rate,
    bestDate: points[best]!.date,
    worst: points[worst]!.rate,
    worstDate: points[worst]!.date,
    average: roundSignificant(exactMean, RATE_DIGITS),
    changePct: points.length === 1 ? 0 : percent(subtract(last, first), first),
    currentVsAveragePct: percent(subtract(last, exactMean), exactMean),
  };
}

/** RFC 4180 CSV with CRLF line ends and a `date,rate` header (SPEC §5). */
export function historyCsv(points: readonly HistoryPoint[]): string {
  let out = 'date,rate\r\n';
  for (const p of points) out += `${p.date},${p.rate}\r\n`;
  return out;
}

/**
 * A pair's history for a range. Not cached here: the HTTP layer caches the rendered bodies, which
 * are what is worth keeping (a few tens of kilobytes each, against the points' objects).
 */
export async function pairHistory(book: RateBook, fromInput: string, toInput: string, rangeInput: string | undefined, source?: string): Promise<History> {
  const from = parseCurrency(fromInput, 'from');
  const to = parseCurrency(toInput, 'to');
  const range = parseRange(rangeInput);
  return computeHistory(book, from, to, range, today(book.clock), source);
}

const noHistory = (from: string, to: string, range: HistoryRange) =>
  new DomainError('no_history', `No rates for ${from}/${to} are stored for the ${range} range.`);

async function computeHistory(book: RateBook, from: string, to: string, range: HistoryRange, end: Day, source?: string): Promise<History> {
  const start = rangeStart(range, end);

  let fromData = (await book.sourceFor(from, 'from', 'history', source)).data;
  let toData = (await book.sourceFor(to, 'to', 'history', source)).data;
  ({ fromData, toData } = sameProviderWhenPossible(fromData, from, toData, to));

  if (from !== to && fromData === toData) {
    const { points, units, scales } = sameProviderPoints(fromData, from, to, start, end);
    if (points.length === 0) throw noHistory(from, to, range);
    return { pair: from + to, from, to, range, count: points.length, points, stats: statsOf(points, units, scales), asOf: lastAsOf(fromData, toData, points) };
  }
  const bridge = bridgeCurrency(fromData, toData);
  const days = daysOf(fromData, from);
  const points: HistoryPoint[] = [];
  for (let i = lowerBound(days, start); i < days.length; i++) {
    const day = days[i]!;
    if (day > end) break;
    const value = from === to ? ONE : rateOn(fromData, from, toData, to, day, bridge);
    if (value) points.push({ date: day, rate: from === to ? '1' : formatRate(value) });
  }
  if (points.length === 0) throw noHistory(from, to, range);
  return { pair: from + to, from, to, range, count: points.length, points, stats: historyStats(points), asOf: lastAsOf(fromData, toData, points) };
}

/** The asOf of the last point, as a rate on that day has it: the earlier of the two providers'. */
function lastAsOf(fromData: ProviderRates, toData: ProviderRates, points: readonly HistoryPoint[]): string {
  const day = points[points.length - 1]!.date;
  const a = fromData.asOf.get(day)!;
  const b = toData.asOf.get(day) ?? a;
  return a < b ? a : b;
}

/**
 * The points of a pair one provider quotes both sides of, and their rates as SmallDecimals: the two
 * series walked side by side, each rate their quotient in exact double arithmetic (the BigInt way
 * only where that cannot be exact). The same points as rateOn and formatRate give day by day, a
 * few times faster: this runs for every pair and range clients ask for, over up to five years.
 */
function sameProviderPoints(data: ProviderRates, from: string, to: string, start: Day, end: Day): { points: HistoryPoint[]; units: Float64Array; scales: Int8Array } {
  const points: HistoryPoint[] = [];
  const f = scaledSeries(data, from);
  const t = scaledSeries(data, to);
  if (!f || !t) return { points, units: new Float64Array(0), scales: new Int8Array(0) };
  let i = lowerBound(f.days, start);
  let j = lowerBound(t.days, start);
  const units = new Float64Array(Math.min(f.days.length - i, t.days.length - j));
  const scales = new Int8Array(units.length);
  const rounded: SmallDecimal = { units: 0, scale: 0 };
  for (; i < f.days.length && j < t.days.length; i++) {
    const day = f.days[i]!;
    if (day > end) break;
    while (j < t.days.length && t.days[j]! < day) j++;
    if (t.days[j] !== day) continue;
    let rate: string;
    if (quotientSignificant(t.units[j]!, t.scales[j]!, f.units[i]!, f.scales[i]!, RATE_DIGITS, rounded)) {
      rate = formatSmall(rounded.units, rounded.scale);
    } else {
      rate = formatRate(rateOn(data, from, data, to, day, undefined)!);
      const parsed = parseSmallDecimal(rate);
      rounded.units = parsed ? parsed.units : Number.NaN;
      rounded.scale = parsed ? parsed.scale : 0;
    }
    units[points.length] = rounded.units;
    scales[points.length] = rounded.scale;
    points.push({ date: day, rate });
  }
  return { points, units, scales };
}
