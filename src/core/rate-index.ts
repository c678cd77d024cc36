import { LRUCache } from 'lru-cache';
import { ONE, parseRate, parseSmallDecimals, type Rational } from './decimal.js';
import type { RateDocument, StoredQuote } from './ports.js';
import { addDays, type Day } from './time.js';

/** A currency is quoted now by a provider when its newest rate is at most this many days older than the provider's newest day. */
export const CURRENT_WITHIN_DAYS = 14;

/** One currency's published rates against its provider's base, ascending by day. */
export interface CurrencySeries {
  days: Day[];
  rates: string[];
}

/**
 * Everything one provider has stored, held in memory: lookups by currency and day are binary
 * searches, so serving a rate or a history never touches the store.
 */
export interface ProviderRates {
  provider: string;
  base: string;
  /** Every day the provider published anything, ascending; its base is implicitly 1 on each. */
  days: Day[];
  asOf: Map<Day, string>;
  series: Map<string, CurrencySeries>;
  /** Rate texts parsed (they repeat across days and requests), at most PARSED_RATES. */
  parsed: LRUCache<string, Rational>;
  /**
   * Series as SmallDecimals, by the series (or, for the base, the days array): both are replaced,
   * never changed, when rates arrive or are pruned, so an entry can never go out of date, and it
   * goes with the series it was made from.
   */
  scaled: WeakMap<object, ScaledSeries>;
}

/** Distinct rate texts kept parsed per provider: more than a long history of its currencies holds. */
const PARSED_RATES = 200_000;

function indexOfDay(days: readonly Day[], day: Day): number {
  let lo = 0;
  let hi = days.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const d = days[mid]!;
    if (d === day) return mid;
    if (d < day) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Index of the first day on or after `day`. */
export function lowerBound(days: readonly Day[], day: Day): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (days[mid]! < day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function emptyProviderRates(provider: string, base: string): ProviderRates {
  return { provider, base, days: [], asOf: new Map(), series: new Map(), parsed: new LRUCache({ max: PARSED_RATES }), scaled: new WeakMap() };
}

/** Builds a provider's index from stored quotes (any order). */
export function buildProviderRates(provider: string, base: string, quotes: readonly StoredQuote[]): ProviderRates {
  const data = emptyProviderRates(provider, base);
  mergeQuotes(
    data,
    quotes.map((q) => ({ day: q.day, asOf: q.asOf, quote: q.quote, rate: q.rate })),
  );
  return data;
}

/** Merges a document just written to the store into the index, replacing same-day values. */
export function applyDocument(data: ProviderRates, document: RateDocument): void {
  const entries: Array<{ day: Day; asOf: string; quote: string; rate: string }> = [];
  for (const day of document.days) for (const [quote, rate] of Object.entries(day.rates)) entries.push({ day: day.day, asOf: day.asOf, quote, rate });
  mergeQuotes(data, entries);
}

function mergeQuotes(data: ProviderRates, entries: ReadonlyArray<{ day: Day; asOf: string; quote: string; rate: string }>): void {
  const touched = new Map<string, Map<Day, string>>();
  const newDays = new Set<Day>();
  for (const e of entries) {
    if (e.quote === data.base) continue;
    let values = touched.get(e.quote);
    if (!values) {
      values = new Map();
      const existing = data.series.get(e.quote);
      if (existing) existing.days.forEach((d, i) => values!.set(d, existing.rates[i]!));
      touched.set(e.quote, values);
    }
    values.set(e.day, e.rate);
    if (!data.asOf.has(e.day) || data.asOf.get(e.day)! < e.asOf) data.asOf.set(e.day, e.asOf);
    newDays.add(e.day);
  }
  for (const [quote, values] of touched) {
    const days = [...values.keys()].sort();
    data.series.set(quote, { days, rates: days.map((d) => values.get(d)!) });
  }
  if (newDays.size > 0) data.days = [...new Set([...data.days, ...newDays])].sort();
}

/** Drops days before `day` (retention). */
export function pruneProviderRates(data: ProviderRates, day: Day): void {
  const cut = lowerBound(data.days, day);
  if (cut === 0) return;
  for (const d of data.days.slice(0, cut)) data.asOf.delete(d);
  data.days = data.days.slice(cut);
  for (const [quote, s] of data.series) {
    const i = lowerBound(s.days, day);
    if (i >= s.days.length) data.series.delete(quote);
    else if (i > 0) data.series.set(quote, { days: s.days.slice(i), rates: s.rates.slice(i) });
  }
}

/** The published rate text of a currency on a day ("1" for the base on any published day), or undefined. */
export function rateTextOn(data: ProviderRates, code: string, day: Day): string | undefined {
  if (code === data.base) return indexOfDay(data.days, day) >= 0 ? '1' : undefined;
  const s = data.series.get(code);
  if (!s) return undefined;
  const i = indexOfDay(s.days, day);
  return i >= 0 ? s.rates[i] : undefined;
}

/** A rate text's value, parsed once per provider while it is used. */
function rateValue(data: ProviderRates, text: string): Rational {
  if (text === '1') return ONE;
  let value = data.parsed.get(text);
  if (!value) {
    value = parseRate(text)!;
    data.parsed.set(text, value);
  }
  return value;
}

export function valueOn(data: ProviderRates, code: string, day: Day): Rational | undefined {
  const text = rateTextOn(data, code, day);
  return text === undefined ? undefined : rateValue(data, text);
}

/** Days on which a currency has a rate in this provider (every published day for the base). */
export function daysOf(data: ProviderRates, code: string): readonly Day[] {
  if (code === data.base) return data.days;
  return data.series.get(code)?.days ?? [];
}

export function newestDay(data: ProviderRates): Day | undefined {
  return data.days[data.days.length - 1];
}

/** True when the provider quotes the currency now, not only in its history. */
export function quotesNow(data: ProviderRates, code: string): boolean {
  const newest = newestDay(data);
  if (newest === undefined) return false;
  const days = daysOf(data, code);
  const last = days[days.length - 1];
  return last !== undefined && last >= addDays(newest, -CURRENT_WITHIN_DAYS);
}

/** Days after the retention start a history may begin and still count as reaching it: a weekend and the New Year holidays. */
const HISTORY_MARGIN_DAYS = 7;

/**
 * True when a provider's history of a currency reaches back to `from` (the retention start): for
 * a provider that keeps whole days, a currency whose history starts later came with its day
 * documents alone, or is younger than the retention (its history then loads again once).
 */
export function historyReaches(data: ProviderRates, code: string, from: Day): boolean {
  const first = daysOf(data, code)[0];
  return first !== undefined && reaches(first, from);
}

/** True when a history whose first day is `first` reaches back to `from`, within HISTORY_MARGIN_DAYS. */
export function reaches(first: Day, from: Day): boolean {
  return first <= addDays(from, HISTORY_MARGIN_DAYS);
}

export function hasCurrency(data: ProviderRates, code: string): boolean {
  return code === data.base ? data.days.length > 0 : data.series.has(code);
}

/** A currency's days and rates as SmallDecimals (units NaN where a rate is not one), for arithmetic without BigInt. */
export interface ScaledSeries {
  days: readonly Day[];
  units: Float64Array;
  scales: Int8Array;
}

/** A currency's rates in a provider as SmallDecimals, parsed once per version of its series. */
export function scaledSeries(data: ProviderRates, code: string): ScaledSeries | undefined {
  const owner: object | undefined = code === data.base ? data.days : data.series.get(code);
  if (!owner) return undefined;
  let found = data.scaled.get(owner);
  if (found) return found;
  if (code === data.base) {
    found = { days: data.days, units: new Float64Array(data.days.length).fill(1), scales: new Int8Array(data.days.length) };
  } else {
    const series = owner as CurrencySeries;
    found = { days: series.days, ...parseSmallDecimals(series.rates) };
  }
  data.scaled.set(owner, found);
  return found;
}
