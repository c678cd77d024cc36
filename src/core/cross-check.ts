import { add, compare, divideUnreduced, parseDecimal, roundSignificant, subtract, type Rational } from './decimal.js';
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
  /** The median of the others' numbers, each the exact cross through `base` on `day`, to 8 significant digits. */
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
  /** Providers with at least one number compared with another provider's on the same day. */
  compared: ReadonlySet<string>;
  /** Whether a provider's number for a currency on a day is set aside. */
  setAside(provider: string, currency: string, day: Day): boolean;
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

/**
 * Compares every currency two or more providers quote on the same day, on each day within
 * CURRENT_WITHIN_DAYS of the newest day any of them published (the days a live answer is served
 * from). Each provider's number is compared in its own terms, units of the currency per one of its
 * base, with the other providers' exact crosses through that base: the provider's own base
 * counts 1, so an error in one published number shows at that number alone.
 */
export function crossCheck(data: Iterable<ProviderRates>, percent: Rational): CrossCheck {
  const all = [...data];
  const newest = all.map(newestDay).filter((d): d is Day => d !== undefined).sort().at(-1);
  const findings: CrossCheckFinding[] = [];
  const compared = new Set<string>();
  const setAside = new Set<string>();
  if (newest === undefined) return { findings, compared, setAside: () => false };
  const oldest = addDays(newest, -CURRENT_WITHIN_DAYS);
  const screenBelow = (Number(percent.num) / Number(percent.den) / 100) * (1 - SCREEN_MARGIN);
  const approx = new Map(all.map((data) => [data, approximateDays(data, oldest)]));
  for (const own of all) {
    for (const currency of own.series.keys()) {
      const days = daysOf(own, currency);
      for (let i = days.length - 1; i >= 0 && days[i]! >= oldest; i--) {
        const day = days[i]!;
        const others: ProviderRates[] = [];
        const approximate: number[] = [];
        for (const other of all) {
          if (other === own) continue;
          const numbers = approx.get(other)!.get(day);
          const x = numbers?.get(currency);
          const b = other.base === own.base ? 1 : numbers?.get(own.base);
          if (x === undefined || b === undefined) continue;
          others.push(other);
          approximate.push(x / b);
        }
        if (others.length === 0) continue;
        compared.add(own.provider);
        for (const other of others) compared.add(other.provider);
        const value = valueOn(own, currency, day)!;
        // A screen in doubles (relative error far below SCREEN_MARGIN) passes the numbers that are
        // plainly within the threshold; only the others are decided in exact fractions.
        const m0 = medianOfDoubles(approximate);
        if (Math.abs(approx.get(own)!.get(day)!.get(currency)! - m0) < m0 * screenBelow) continue;
        const values = others.map((other) => {
          const x = valueOn(other, currency, day)!;
          return other.base === own.base ? x : divideUnreduced(x, valueOn(other, own.base, day)!);
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
          others: others.map((o) => o.provider).sort(),
          agreeing,
          setAside: agreeing >= AGREEING_OTHERS,
        };
        findings.push(finding);
        if (finding.setAside) setAside.add(keyOf(own.provider, currency, day));
      }
    }
  }
  return { findings, compared, setAside: (provider, currency, day) => setAside.has(keyOf(provider, currency, day)) };
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
