import { add, compare, divideUnreduced, multiplyUnreduced, parseDecimal, roundSignificant, subtract, type Rational } from './decimal.js';
import { CURRENT_WITHIN_DAYS, daysOf, newestDay, rateTextOn, valueOn, type ProviderRates } from './rate-index.js';
import { addDays, type Day } from './time.js';

/** The other providers that must agree with each other before a preferred provider's number is set aside. */
export const AGREEING_OTHERS = 3;

/**
 * A provider's published number that differs from the median of the other providers' numbers
 * for the same currency and day by more than the threshold.
 */
export interface CrossCheckFinding {
  provider: string;
  currency: string;
  day: Day;
  /** The provider's base: both numbers are units of `currency` per one `base`. */
  base: string;
  /** The number as stored (a decimal, or `1/<x>` for one published the other way round). */
  rate: string;
  /**
   * The median of the others' numbers in the same terms, each the exact cross through a currency
   * it shares with the provider (its base where it can), to 8 significant digits.
   */
  median: string;
  /** The other providers compared with. */
  others: string[];
  /** How many of them lie within the threshold of their median. */
  agreeing: number;
  /** true when at least AGREEING_OTHERS others agree: the number is not served (without `source`). */
  setAside: boolean;
}

/** Findings of one check, and which providers had anything to compare. */
export interface CrossCheck {
  findings: CrossCheckFinding[];
  /** Providers with at least one number of their own compared with another provider's. */
  compared: ReadonlySet<string>;
  /** Whether a provider's number for a currency on a day is set aside. */
  setAside(provider: string, currency: string, day: Day): boolean;
  /** The finding on a provider's number for a currency on a day, if it was flagged. */
  findingOn(provider: string, currency: string, day: Day): CrossCheckFinding | undefined;
}

const HUNDRED: Rational = { num: 100n, den: 1n };

/** A threshold in percent (EXRATES_CROSSCHECK_PERCENT) as an exact rational; RangeError for anything but a plain positive decimal. */
export function parsePercent(text: string): Rational {
  const value = parseDecimal(text);
  if (!value || value.num === 0n) throw new RangeError(`cross-check percent must be a positive decimal, got '${text}'`);
  return value;
}

/** The exact median: the middle value, or the mean of the two middle ones. */
export function median(values: readonly Rational[]): Rational {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort(compare);
  const mid = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[mid]!;
  const sum = add(sorted[mid - 1]!, sorted[mid]!);
  return { num: sum.num, den: sum.den * 2n };
}

/** |value − reference| × 100 > percent × reference, in exact rationals (reference > 0). */
export function differsByMore(value: Rational, reference: Rational, percent: Rational): boolean {
  const d = subtract(value, reference);
  const gap = d.num < 0n ? { num: -d.num, den: d.den } : d;
  return compare({ num: gap.num * HUNDRED.num, den: gap.den }, { num: percent.num * reference.num, den: percent.den * reference.den }) > 0;
}

/** How far below the threshold the double screen stops: far wider than a double's rounding of a rate and of a median. */
const SCREEN_MARGIN = 1e-6;

/** How far back another provider's number is looked for when it has none on a number's own day: a weekend and a holiday. */
export const NEARBY_DAYS = 4;

/**
 * A provider's numbers from `oldest` on as doubles, by day and currency (its base 1), for the
 * screen; a number that is not positive and finite as a double is left out, and so compared with
 * nobody's.
 */
function approximateDays(data: ProviderRates, oldest: Day): Map<Day, Map<string, number>> {
  const byDay = new Map<Day, Map<string, number>>();
  for (const day of data.days) if (day >= oldest) byDay.set(day, new Map([[data.base, 1]]));
  for (const [code, series] of data.series) {
    for (let i = series.days.length - 1; i >= 0 && series.days[i]! >= oldest; i--) {
      const text = series.rates[i]!;
      const value = text.startsWith('1/') ? 1 / Number(text.slice(2)) : Number(text);
      if (value > 0 && Number.isFinite(value)) byDay.get(series.days[i]!)?.set(code, value);
    }
  }
  return byDay;
}

function medianOfDoubles(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const keyOf = (provider: string, currency: string, day: Day) => `${provider} ${currency} ${day}`;

/** How another provider's number is brought into a provider's terms: its day, and the currency both quote. */
interface Comparator {
  other: ProviderRates;
  /** The other's day: the same day, or its latest within NEARBY_DAYS before. */
  day: Day;
  bridge: string;
  approximate: number;
}

/**
 * Another provider's number for `currency` in `own`'s terms (units per one of own's base), as a
 * double: its number on `day`, or, when it has none that day (it has not published that day yet,
 * or it was a holiday there), on its latest day within NEARBY_DAYS before (`nearby`: the day, then
 * each day before it); through own's base
 * when the other quotes it, else through the other's base, else through the currency both quote
 * whose cross is the median of all such crosses. Where the bridge is not own's base, own's number
 * for it counts too, so own's base (1) is preferred.
 */
function comparatorOf(
  own: ProviderRates,
  ownNumbers: Map<string, number>,
  other: ProviderRates,
  numbers: Map<Day, Map<string, number>>,
  currency: string,
  day: Day,
  nearby: readonly Day[],
): Comparator | undefined {
  for (const at of nearby) {
    const theirs = numbers.get(at);
    const x = theirs?.get(currency);
    if (x === undefined) continue;
    const through = (bridge: string): Comparator => ({ other, day: at, bridge, approximate: (x / theirs!.get(bridge)!) * ownNumbers.get(bridge)! });
    if (theirs!.has(own.base)) return through(own.base);
    if (other.base !== currency && ownNumbers.has(other.base)) return through(other.base);
    // Through any currency both quote, the one whose cross is the median of all of them: one
    // wrong number among the bridges moves nothing.
    const crosses = [...ownNumbers.keys()].filter((code) => code !== currency && theirs!.has(code)).map(through);
    return crosses.sort((a, b) => a.approximate - b.approximate)[(crosses.length - 1) >> 1];
  }
  return undefined;
}

/**
 * Compares every number a provider published, on each day within CURRENT_WITHIN_DAYS of the newest
 * day any of them published (the days a live answer is served from), with every other provider
 * that quotes the same currency. Each is compared in the provider's own terms, units of the
 * currency per one of its base: another provider's number becomes the exact cross through a
 * currency both quote (the provider's base when the other quotes it, counting 1, so an error in
 * one published number shows at that number alone; else the other's base; else any other). A
 * number dated after another provider's newest day (the NBU fixes tomorrow's rate today), or on a
 * day it did not publish, is compared with that provider's latest number within NEARBY_DAYS.
 */
export function crossCheck(data: Iterable<ProviderRates>, percent: Rational): CrossCheck {
  const all = [...data];
  const newest = all.map(newestDay).filter((d): d is Day => d !== undefined).sort().at(-1);
  const findings: CrossCheckFinding[] = [];
  const compared = new Set<string>();
  const flagged = new Map<string, CrossCheckFinding>();
  const result: CrossCheck = {
    findings,
    compared,
    setAside: (provider, currency, day) => flagged.get(keyOf(provider, currency, day))?.setAside ?? false,
    findingOn: (provider, currency, day) => flagged.get(keyOf(provider, currency, day)),
  };
  if (newest === undefined) return result;
  const oldest = addDays(newest, -CURRENT_WITHIN_DAYS);
  const screenBelow = (Number(percent.num) / Number(percent.den) / 100) * (1 - SCREEN_MARGIN);
  const approx = new Map(all.map((data) => [data, approximateDays(data, addDays(oldest, -NEARBY_DAYS))]));
  const nearbyDays = new Map<Day, Day[]>();
  const nearbyOf = (day: Day): Day[] => {
    let days = nearbyDays.get(day);
    if (!days) nearbyDays.set(day, (days = Array.from({ length: NEARBY_DAYS + 1 }, (_, back) => (back === 0 ? day : addDays(day, -back)))));
    return days;
  };
  for (const own of all) {
    const ownDays = approx.get(own)!;
    for (const currency of own.series.keys()) {
      const days = daysOf(own, currency);
      for (let i = days.length - 1; i >= 0 && days[i]! >= oldest; i--) {
        const day = days[i]!;
        const ownNumbers = ownDays.get(day)!;
        const ownApproximate = ownNumbers.get(currency);
        if (ownApproximate === undefined) continue;
        const comparators: Comparator[] = [];
        const nearby = nearbyOf(day);
        for (const other of all) {
          if (other === own) continue;
          const found = comparatorOf(own, ownNumbers, other, approx.get(other)!, currency, day, nearby);
          if (found) comparators.push(found);
        }
        if (comparators.length === 0) continue;
        compared.add(own.provider);
        // A screen in doubles (relative error far below SCREEN_MARGIN) passes the numbers that are
        // plainly within the threshold; only the others are decided in exact fractions.
        const m0 = medianOfDoubles(comparators.map((c) => c.approximate));
        if (Math.abs(ownApproximate - m0) < m0 * screenBelow) continue;
        const value = valueOn(own, currency, day)!;
        const values = comparators.map(({ other, day: at, bridge }) => {
          const cross = divideUnreduced(valueOn(other, currency, at)!, valueOn(other, bridge, at)!);
          return bridge === own.base ? cross : multiplyUnreduced(cross, valueOn(own, bridge, day)!);
        });
        const m = median(values);
        if (m.num === 0n || !differsByMore(value, m, percent)) continue;
        const agreeing = values.filter((v) => !differsByMore(v, m, percent)).length;
        const finding: CrossCheckFinding = {
          provider: own.provider,
          currency,
          day,
          base: own.base,
          rate: rateTextOn(own, currency, day)!,
          median: roundSignificant(m, 8),
          others: comparators.map((c) => c.other.provider).sort(),
          agreeing,
          setAside: agreeing >= AGREEING_OTHERS,
        };
        findings.push(finding);
        flagged.set(keyOf(own.provider, currency, day), finding);
      }
    }
  }
  return result;
}

/** One log line's (and one /readyz warning's) words for a finding. */
export function describeFinding(f: CrossCheckFinding, percent: string): string {
  const served = f.setAside ? `${f.agreeing} of them agree, so it is not served` : `still served: fewer than ${AGREEING_OTHERS} of them agree`;
  return `${f.provider}'s ${f.currency} of ${f.day} (${f.rate} ${f.currency} per ${f.base}) differs by more than ${percent}% from the median of ${f.others.join(', ')} (${f.median}); ${served}.`;
}

/** A provider's cross-check state, as /providers and /readyz show it. */
export interface ProviderCrossCheck {
  /** agrees: every number it shares with others lies within the threshold; disagrees: one does not; unchecked: nothing to compare. */
  state: 'agrees' | 'disagrees' | 'unchecked';
  /** Its numbers that differ, newest day first. */
  outliers: Array<Omit<CrossCheckFinding, 'provider'>>;
}

export function providerCrossCheck(check: Pick<CrossCheck, 'findings' | 'compared'>, provider: string): ProviderCrossCheck {
  const outliers = check.findings
    .filter((f) => f.provider === provider)
    .sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : a.currency < b.currency ? -1 : 1))
    .map(({ provider: _, ...rest }) => rest);
  return { state: outliers.length > 0 ? 'disagrees' : check.compared.has(provider) ? 'agrees' : 'unchecked', outliers };
}
