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
import { acrossFamily, bridgeCurrency, formatRate, RATE_DIGITS, rateOn, sameProviderWhenPossible, today, type RateBook } from './rates.js';
import { daysOf, lowerBound, scaledSeries, type ProviderRates } from './rate-index.js';
import { pairSpans, type PairSpan } from './replaced-currencies.js';
import { keepsDeepHistory, oldestAskable, retainedFrom, retainedYearsText, type HistoryYears } from './retention.js';
import { dayNumber, subtractMonths, utcDay, type Day } from './time.js';

/** The interface's ranges (SPEC §5): the only ones while the service keeps five years or fewer. */
export const RANGES = ['1m', '3m', '6m', '1y', '5y'] as const;
/** Every range: the interface's five, then those that exist when more than five years are kept (keepsDeepHistory). */
export const ALL_RANGES = [...RANGES, '10y', 'max'] as const;
export type HistoryRange = (typeof ALL_RANGES)[number];
export const DEFAULT_RANGE: HistoryRange = '1y';
/** Calendar months each range counts back; `max` reaches the oldest day kept. */
const RANGE_MONTHS: Record<Exclude<HistoryRange, 'max'>, number> = { '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60, '10y': 120 };

/** The ranges /history takes with this much history kept (EXRATES_HISTORY_YEARS). */
export function rangesFor(years: HistoryYears): readonly HistoryRange[] {
  return keepsDeepHistory(years) ? ALL_RANGES : RANGES;
}

export const GROUPS = ['week', 'month'] as const;
/** Averages per ISO week (dated its Monday) or calendar month (dated its first day). */
export type HistoryGroup = (typeof GROUPS)[number];

/** The days a history covers: a fixed range counted back from today, or the dates asked for. */
export type HistoryWindow = HistoryRange | { start: Day; end: Day };

export interface HistoryPoint {
  date: Day;
  rate: string;
  /** Grouped points only: how many daily points the rate averages. */
  days?: number;
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
  /** What was served: a fixed range, or `<start>/<end>` for dates asked for. */
  range: string;
  group?: HistoryGroup;
  count: number;
  points: HistoryPoint[];
  stats: HistoryStats;
  /** When the last point applies (as a rate's asOf): the history's Last-Modified. Not part of the body. */
  asOf: string;
}

export function parseRange(input: string | undefined, years: HistoryYears): HistoryRange {
  if (input === undefined) return DEFAULT_RANGE;
  const ranges = rangesFor(years);
  if ((ranges as readonly string[]).includes(input)) return input as HistoryRange;
  throw new DomainError('invalid_range', `range must be one of ${ranges.join(', ')}.`, { param: 'range' });
}

export function parseGroup(input: string | undefined): HistoryGroup | undefined {
  if (input === undefined) return undefined;
  if ((GROUPS as readonly string[]).includes(input)) return input as HistoryGroup;
  throw new DomainError('invalid_range', `group must be one of ${GROUPS.join(', ')}.`, { param: 'group' });
}

/** A date a history is asked from or to: a calendar date, not after today. */
function parseDay(input: string, param: 'start' | 'end', todayDay: Day): Day {
  const number = dayNumber(input);
  if (number === undefined) {
    throw new DomainError('invalid_date', `${param} must be given once, as a calendar date written YYYY-MM-DD (for example 2026-03-02); got '${input.slice(0, 16)}'.`, { param });
  }
  if (input > todayDay) throw new DomainError('invalid_date', `${param} ${input} is after today (${todayDay}, UTC).`, { param });
  return input;
}

/**
 * The window a /history request asks for: `range` (default 1y), or `start` and an optional `end`
 * (default today) within the retained years (EXRATES_HISTORY_YEARS). The two ways exclude each other.
 */
export function parseWindow(
  query: { range?: string | undefined; start?: string | undefined; end?: string | undefined },
  todayDay: Day,
  years: HistoryYears,
): HistoryWindow {
  if (query.start === undefined) {
    if (query.end !== undefined) throw new DomainError('missing_parameter', 'end needs start: give start=YYYY-MM-DD, or a range without dates.', { param: 'start' });
    return parseRange(query.range, years);
  }
  if (query.range !== undefined) {
    throw new DomainError('invalid_range', 'range and start/end are alternatives: give a range, or start (and optionally end), not both.', { param: 'range' });
  }
  const start = parseDay(query.start, 'start', todayDay);
  const end = query.end === undefined ? todayDay : parseDay(query.end, 'end', todayDay);
  if (start > end) throw new DomainError('invalid_date', `start ${start} is after end ${end}.`, { param: 'start' });
  const oldest = oldestAskable(todayDay, years);
  if (start < oldest) throw new DomainError('invalid_date', `start must be within ${retainedYearsText(years)}: on or after ${oldest}.`, { param: 'start' });
  return { start, end };
}

/** The `range` field of an answer: the fixed range, or `<start>/<end>`. */
export function windowLabel(window: HistoryWindow): string {
  return typeof window === 'string' ? window : `${window.start}/${window.end}`;
}

/** The first day of a range, counted back from today (UTC) in calendar months or years; for `max`, the oldest day kept. */
export function rangeStart(range: HistoryRange, todayDay: Day, years: HistoryYears): Day {
  return range === 'max' ? retainedFrom(todayDay, years) : subtractMonths(todayDay, RANGE_MONTHS[range]);
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

/** The day a point's period starts: its ISO week's Monday, or its month's first day. */
export function periodStart(day: Day, group: HistoryGroup): Day {
  if (group === 'month') return `${day.slice(0, 8)}01`;
  const number = dayNumber(day)!;
  // Day 0 (1970-01-01) was a Thursday: (number + 3) mod 7 counts days since Monday.
  const sinceMonday = (((number + 3) % 7) + 7) % 7;
  return utcDay(new Date((number - sinceMonday) * 86_400_000));
}

/**
 * One point per period: the exact mean of the period's points as served, rounded once as rates
 * are, with the number of days it averages (fewer where the window cuts the period).
 */
export function groupPoints(points: readonly HistoryPoint[], group: HistoryGroup): HistoryPoint[] {
  const grouped: HistoryPoint[] = [];
  let i = 0;
  while (i < points.length) {
    const date = periodStart(points[i]!.date, group);
    const values: Rational[] = [];
    for (; i < points.length && periodStart(points[i]!.date, group) === date; i++) values.push(parseDecimal(points[i]!.rate)!);
    grouped.push({ date, rate: formatRate(mean(values)), days: values.length });
  }
  return grouped;
}

/** RFC 4180 CSV with CRLF line ends and a `date,rate` header (SPEC §5); grouped points add `days`. */
export function historyCsv(points: readonly HistoryPoint[]): string {
  const grouped = points.length > 0 && points[0]!.days !== undefined;
  let out = grouped ? 'date,rate,days\r\n' : 'date,rate\r\n';
  if (grouped) for (const p of points) out += `${p.date},${p.rate},${p.days}\r\n`;
  else for (const p of points) out += `${p.date},${p.rate}\r\n`;
  return out;
}

/** The fields of a history's body, in their order (asOf is a header, from and to are in pair). */
function bodyFields(history: History) {
  return { pair: history.pair, range: history.range, ...(history.group === undefined ? {} : { group: history.group }), count: history.count };
}

export function historyJson(history: History): string {
  return JSON.stringify({ ...bodyFields(history), points: history.points, stats: history.stats });
}

/** Newline-delimited JSON: one point per line, then one line with the statistics and the other fields. */
export function historyNdjson(history: History): string {
  let out = '';
  for (const p of history.points) out += `${JSON.stringify(p)}\n`;
  return `${out}${JSON.stringify({ ...bodyFields(history), stats: history.stats })}\n`;
}

/**
 * A pair's history for a range or the dates asked for (a window parseWindow gave), grouped per
 * week or month when asked, its statistics over the points served. Not cached here: the HTTP
 * layer caches the rendered bodies, which are what is worth keeping (a few tens of kilobytes
 * each, against the points' objects).
 */
export async function pairHistory(
  book: RateBook,
  fromInput: string,
  toInput: string,
  window: string | undefined | { start: Day; end: Day },
  group?: HistoryGroup,
  source?: string,
): Promise<History> {
  const from = parseCurrency(fromInput, 'from');
  const to = parseCurrency(toInput, 'to');
  const asked = typeof window === 'object' ? window : parseRange(window, book.historyYears);
  const history = await computeHistory(book, from, to, asked, today(book.clock), source);
  if (group === undefined) return history;
  const points = groupPoints(history.points, group);
  return { ...history, group, count: points.length, points, stats: historyStats(points) };
}

const noHistory = (from: string, to: string, window: HistoryWindow) =>
  new DomainError('no_history', typeof window === 'string' ? `No rates for ${from}/${to} are stored for the ${window} range.` : `No rates for ${from}/${to} are stored from ${window.start} to ${window.end}.`);

async function computeHistory(book: RateBook, from: string, to: string, window: HistoryWindow, todayDay: Day, source?: string): Promise<History> {
  const range = windowLabel(window);
  const start = typeof window === 'string' ? rangeStart(window, todayDay, book.historyYears) : window.start;
  const end = typeof window === 'string' ? todayDay : window.end;
  const spans = pairSpans(from, to, start, end);
  if (spans.length > 1 || spans[0]!.through !== undefined) return replacedHistory(book, from, to, window, spans, source);

  const { fromData, toData } = await book.historyPair(from, to, source, undefined, start);

  if (from !== to && fromData === toData) {
    const { points, units, scales } = sameProviderPoints(fromData, from, to, start, end);
    if (points.length === 0) throw noHistory(from, to, window);
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
  if (points.length === 0) throw noHistory(from, to, window);
  return { pair: from + to, from, to, range, count: points.length, points, stats: historyStats(points), asOf: lastAsOf(fromData, toData, points) };
}

/**
 * The history of a pair with a currency replaced at a fixed ratio: before the replacement, the
 * market numbers as published; from it on, the successors' points at the ratio, rounded once.
 * A stretch with nothing stored (the old code's history pruned or never published) has no points.
 */
async function replacedHistory(book: RateBook, from: string, to: string, window: HistoryWindow, spans: readonly PairSpan[], source?: string): Promise<History> {
  const points: HistoryPoint[] = [];
  let last: { fromData: ProviderRates; toData: ProviderRates } | undefined;
  for (const span of spans) {
    const pair = span.through ?? { from, to };
    let sides: { fromData: ProviderRates; toData: ProviderRates };
    try {
      sides = { fromData: (await book.sourceFor(pair.from, 'from', 'history', source)).data, toData: (await book.sourceFor(pair.to, 'to', 'history', source)).data };
    } catch (error) {
      // The old code before its replacement may have no stored history at all.
      if (span.through === undefined && error instanceof DomainError && error.code === 'unsupported_currency') continue;
      throw error;
    }
    const { fromData, toData } = sameProviderWhenPossible(sides.fromData, pair.from, sides.toData, pair.to, book.servable(source, undefined));
    const bridge = bridgeCurrency(fromData, toData);
    const days = daysOf(fromData, pair.from);
    const before = points.length;
    for (let i = lowerBound(days, span.start); i < days.length && days[i]! <= span.end; i++) {
      const day = days[i]!;
      const value = pair.from === pair.to ? ONE : rateOn(fromData, pair.from, toData, pair.to, day, bridge);
      if (value) points.push({ date: day, rate: formatRate(span.through ? multiply(value, span.through.factor) : value) });
    }
    if (points.length > before) last = { fromData, toData };
  }
  if (points.length === 0 || !last) throw noHistory(from, to, window);
  return { pair: from + to, from, to, range: windowLabel(window), count: points.length, points, stats: historyStats(points), asOf: lastAsOf(last.fromData, last.toData, points) };
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
 * few times faster: this runs for every pair and range clients ask for, over all the years kept.
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
