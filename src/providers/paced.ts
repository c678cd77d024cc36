/**
 * What central-bank adapters share: requests made one after another with a pause between them
 * (a bank's public endpoint is no bulk service, and a first load of five years takes many of its
 * requests), progress lines for such loads, a day range cut into the spans a bank answers at
 * most, and per-10/100/1,000 quotations made exact per-unit rates.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { divide, exactDecimal, fromInteger, movePoint, parseDecimal } from '../core/decimal.js';
import { FeedError } from '../core/errors.js';
import type { DayRange } from '../core/ports.js';
import { addDays, dayNumber, type Day } from '../core/time.js';
import type { ProviderLog } from './types.js';

/** A pause that keeps a first history load polite without making it slow: about four requests a second. */
export const DEFAULT_PACE_MS = 250;
/** A load of more requests than this logs its progress. */
const PROGRESS_ABOVE = 4;
/** How often a long load says how far it got. */
const PROGRESS_EVERY_MS = 5_000;

/** How many requests one provider has in flight at most, whatever number of loads run at once. */
export const MAX_IN_FLIGHT = 2;

/**
 * Lets at most `limit` calls run at once, the others waiting their turn in arrival order: one per
 * provider, so that first requests for many currencies at once do not become as many parallel
 * streams of requests to one bank.
 */
export function createGate(limit: number): <T>(call: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await call();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}

export interface InTurnOptions {
  provider: string;
  /** Pause between the end of one request and the start of the next. */
  paceMs: number;
  log?: ProviderLog | undefined;
  signal?: AbortSignal | undefined;
  /** What the requests fetch, for the progress lines ("2021-01-04..2022-01-04 of USD"). */
  describe?: (index: number) => string;
  /** The provider's gate (createGate), shared by all of its loads. */
  gate?: <T>(call: () => Promise<T>) => Promise<T>;
}

/**
 * Runs the requests one at a time, pausing between them, and logs progress of a long run. The
 * first failure ends the run: a load is stored whole or not at all.
 */
export async function inTurn<T>(requests: ReadonlyArray<() => Promise<T>>, options: InTurnOptions): Promise<T[]> {
  const results: T[] = [];
  const long = requests.length > PROGRESS_ABOVE && options.log !== undefined;
  const started = Date.now();
  let reported = started;
  if (long) options.log!.info({ provider: options.provider, requests: requests.length, paceMs: options.paceMs }, 'loading history in paced requests');
  for (const [index, request] of requests.entries()) {
    if (index > 0 && options.paceMs > 0) await sleep(options.paceMs, undefined, options.signal ? { signal: options.signal } : {});
    results.push(await (options.gate ? options.gate(request) : request()));
    if (long && Date.now() - reported >= PROGRESS_EVERY_MS) {
      reported = Date.now();
      options.log!.info(
        { provider: options.provider, done: index + 1, requests: requests.length, seconds: Math.round((reported - started) / 1000), last: options.describe?.(index) },
        'still loading history',
      );
    }
  }
  if (long) options.log!.info({ provider: options.provider, requests: requests.length, seconds: Math.round((Date.now() - started) / 1000) }, 'history loaded');
  return results;
}

/** The range cut into consecutive spans of at most `maxDays` days each, oldest first. */
export function spansOf(range: DayRange, maxDays: number): DayRange[] {
  const spans: DayRange[] = [];
  for (let from = range.from; from <= range.to; from = addDays(from, maxDays)) {
    const last = addDays(from, maxDays - 1);
    spans.push({ from, to: last < range.to ? last : range.to });
  }
  return spans;
}

/** Days from `from` to `to` inclusive. */
export function daysBetween(range: DayRange): number {
  return dayNumber(range.to)! - dayNumber(range.from)! + 1;
}

/** Throws a RangeError for a range that is not two real days in order. */
export function checkRange(range: DayRange): void {
  if (dayNumber(range.from) === undefined || dayNumber(range.to) === undefined || range.from > range.to) {
    throw new RangeError(`not a day range: ${JSON.stringify(range)}`);
  }
}

/**
 * The exact rate of one unit from a rate published for `units` units: the published digits with
 * the decimal point moved for 10, 100, 1,000…, an exact quotient otherwise, and a FeedError when
 * the quotient has no exact decimal (it would have to be rounded: better refused than misread).
 */
export function perUnit(rate: string, units: string, feed: string, where: string): string {
  if (!/^[1-9]\d*$/.test(units)) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(units)} is not a whole number of units`);
  const value = parseDecimal(rate);
  if (value === null) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(rate)} is not a plain decimal`);
  if (units === '1') return rate;
  const power = /^10*$/.exec(units) ? units.length - 1 : -1;
  if (power > 0) return movePoint(rate, -power)!;
  const exact = exactDecimal(divide(value, fromInteger(BigInt(units))));
  if (exact === null) throw new FeedError(`${feed}: ${where}: ${rate} per ${units} units has no exact per-unit decimal`);
  return exact;
}

/** The calendar day of a `DD.MM.YYYY` date, or undefined when it is not one. */
export function dayFromDotted(text: string): Day | undefined {
  const m = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(text);
  if (!m) return undefined;
  const day = `${m[3]}-${m[2]}-${m[1]}`;
  return dayNumber(day) === undefined ? undefined : day;
}

/** A day written `DD.MM.YYYY`, as some banks' queries take it. */
export function dottedDay(day: Day): string {
  return `${day.slice(8, 10)}.${day.slice(5, 7)}.${day.slice(0, 4)}`;
}

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** The day of a date written with an English month abbreviation (`17`, `Mar`, `2026`), or undefined when it is not one. */
export function dayFromMonthName(date: string, month: string, year: string): Day | undefined {
  const index = MONTH_NAMES.indexOf(month as (typeof MONTH_NAMES)[number]);
  if (index < 0 || !/^\d{1,2}$/.test(date) || !/^\d{4}$/.test(year)) return undefined;
  const day = `${year}-${String(index + 1).padStart(2, '0')}-${date.padStart(2, '0')}`;
  return dayNumber(day) === undefined ? undefined : day;
}

/** A day as the English month abbreviation of a query (`Mar`). */
export function monthName(day: Day): string {
  return MONTH_NAMES[Number(day.slice(5, 7)) - 1]!;
}
