import { add, compare, divideUnreduced, multiplyUnreduced, parseDecimal, roundSignificant, subtract, type Rational } from './decimal.js';
import { daysOf, lowerBound, rateTextOn, valueOn, type ProviderRates } from './rate-index.js';
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

/** What the check found among the numbers dated one day. */
export interface DayCheck {
  findings: CrossCheckFinding[];
  /** Providers with a number of that day compared with another provider's. */
  compared: ReadonlySet<string>;
}

/**
 * Findings of one check, and which providers had anything to compare. A later check of the same
 * providers updates it day by day (crossCheck's `previous`): what a day contributes is replaced,
 * the other days' is kept as it was.
 */
export interface CrossCheck {
  /** Every finding, oldest day first. */
  readonly findings: readonly CrossCheckFinding[];
  /** Providers with at least one number of their own compared with another provider's. */
  readonly compared: ReadonlySet<string>;
  /** The check of each day held, so that the next check need redo only the days whose numbers changed. */
  readonly days: ReadonlyMap<Day, DayCheck>;
  /**
   * Moves whenever a finding is added, removed or changed, and only then: what the check decides
   * of a number (served, set aside, flagged) and says of it is the same for an equal revision.
   */
  readonly revision: number;
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
 * A provider's numbers from `oldest` to `newest` as doubles, by day and currency (its base 1), for
 * the screen; a number that is not positive and finite as a double is left out, and so compared
 * with nobody's.
 */
function approximateDays(data: ProviderRates, oldest: Day, newest: Day): Map<Day, Map<string, number>> {
  const byDay = new Map<Day, Map<string, number>>();
  for (let i = lowerBound(data.days, oldest); i < data.days.length && data.days[i]! <= newest; i++) byDay.set(data.days[i]!, new Map([[data.base, 1]]));
  for (const [code, series] of data.series) {
    for (let i = lowerBound(series.days, oldest); i < series.days.length && series.days[i]! <= newest; i++) {
      const text = series.rates[i]!;
      const value = text.startsWith('1/') ? 1 / Number(text.slice(2)) : Number(text);
      if (value > 0 && Number.isFinite(value)) byDay.get(series.days[i]!)?.set(code, value);
    }
  }
  return byDay;
}

/** The median of values[0, count), sorting them in place (a typed array sorts numbers as numbers, with no comparator). */
function medianOfDoubles(values: Float64Array, count: number): number {
  const sorted = values.subarray(0, count).sort();
  const mid = count >> 1;
  return count % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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

/** Another provider's number `x` of `at` in own's terms through `bridge`. (A plain function: it runs for every pair of numbers compared.) */
function through(other: ProviderRates, at: Day, bridge: string, x: number, theirs: Map<string, number>, ownNumbers: Map<string, number>): Comparator {
  return { other, day: at, bridge, approximate: (x / theirs.get(bridge)!) * ownNumbers.get(bridge)! };
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
    if (theirs!.has(own.base)) return through(other, at, own.base, x, theirs!, ownNumbers);
    if (other.base !== currency && ownNumbers.has(other.base)) return through(other, at, other.base, x, theirs!, ownNumbers);
    // Through any currency both quote, the one whose cross is the median of all of them: one
    // wrong number among the bridges moves nothing.
    const crosses = [...ownNumbers.keys()].filter((code) => code !== currency && theirs!.has(code)).map((code) => through(other, at, code, x, theirs!, ownNumbers));
    return crosses.sort((a, b) => a.approximate - b.approximate)[(crosses.length - 1) >> 1];
  }
  return undefined;
}

/**
 * The days whose check a change of the numbers of `changed` days alters: each of them, and the
 * NEARBY_DAYS after it, whose numbers may have been compared with its numbers.
 */
export function affectedDays(changed: Iterable<Day>): Set<Day> {
  const affected = new Set<Day>();
  for (const day of changed) for (let after = 0; after <= NEARBY_DAYS; after++) affected.add(addDays(day, after));
  return affected;
}

/**
 * The days on which two states of a provider's numbers differ (either may be absent): a day one
 * has and the other not, or a currency's number of a day that differs. One pass over both.
 */
export function changedDays(before: ProviderRates | undefined, after: ProviderRates | undefined): Set<Day> {
  const changed = new Set<Day>();
  if (before === after) return changed;
  if (before === undefined || after === undefined) {
    for (const day of (before ?? after)!.days) changed.add(day);
    return changed;
  }
  const compare = (a: readonly Day[], ra: readonly string[] | undefined, b: readonly Day[], rb: readonly string[] | undefined) => {
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (j >= b.length || (i < a.length && a[i]! < b[j]!)) changed.add(a[i++]!);
      else if (i >= a.length || b[j]! < a[i]!) changed.add(b[j++]!);
      else {
        if (ra !== undefined && rb !== undefined && ra[i] !== rb[j]) changed.add(a[i]!);
        i++;
        j++;
      }
    }
  };
  compare(before.days, undefined, after.days, undefined);
  for (const code of new Set([...before.series.keys(), ...after.series.keys()])) {
    const a = before.series.get(code);
    const b = after.series.get(code);
    if (a !== b) compare(a?.days ?? [], a?.rates, b?.days ?? [], b?.rates);
  }
  return changed;
}

/** Days to check closer than this are checked in one run. */
const RUN_GAP_DAYS = 7;
/** At most this many days are checked in one run: a run holds its days' numbers as doubles while it runs, and years of them at once cost far more than their share. */
const RUN_DAYS = 31;

export interface CrossCheckOptions {
  /**
   * An earlier check of the same providers, updated in place and returned: the days checked again
   * replace what they contributed to it, the other days keep their findings.
   */
  previous?: CrossCheck;
  /** The days whose numbers changed since `previous` (changedDays): they and the days they alter (affectedDays) are checked. */
  changed?: Iterable<Day>;
  /** Exactly the days to check (some of affectedDays, the others left for later). Without `days` or `changed`, every day held is. */
  days?: Iterable<Day>;
}

/** How crossCheck replaces a day's contribution to a check: no part of what a check shows. */
const replaceDay = Symbol('replaceDay');

interface KeptCheck extends CrossCheck {
  /** Replaces a day's check (undefined: the day is no longer held). */
  [replaceDay](day: Day, found: DayCheck | undefined): void;
}

/**
 * A check with no days, whose findings, flagged numbers and compared providers are kept up to
 * date as days are replaced: a check of a few days costs those days, not a rebuild of everything
 * held (years of days, checked in the background a few at a time).
 */
function emptyCheck(): KeptCheck {
  const days = new Map<Day, DayCheck>();
  const flagged = new Map<string, CrossCheckFinding>();
  /** On how many days each provider had a number compared. */
  const comparedOn = new Map<string, number>();
  const compared = new Set<string>();
  /** The days with a finding: the list of findings is made from them when asked for after a change. */
  const withFindings = new Set<Day>();
  let findings: CrossCheckFinding[] | undefined = [];
  let revision = 0;
  const count = (ids: ReadonlySet<string>, by: 1 | -1) => {
    for (const id of ids) {
      const n = (comparedOn.get(id) ?? 0) + by;
      if (n > 0) {
        comparedOn.set(id, n);
        compared.add(id);
      } else {
        comparedOn.delete(id);
        compared.delete(id);
      }
    }
  };
  return {
    get findings() {
      findings ??= [...withFindings].sort().flatMap((day) => days.get(day)!.findings);
      return findings;
    },
    compared,
    days,
    get revision() {
      return revision;
    },
    setAside: (provider: string, currency: string, day: Day) => flagged.get(keyOf(provider, currency, day))?.setAside ?? false,
    findingOn: (provider: string, currency: string, day: Day) => flagged.get(keyOf(provider, currency, day)),
    [replaceDay](day: Day, found: DayCheck | undefined): void {
      const before = days.get(day);
      if (before) {
        for (const f of before.findings) flagged.delete(keyOf(f.provider, f.currency, f.day));
        count(before.compared, -1);
      }
      if (found) {
        days.set(day, found);
        for (const f of found.findings) flagged.set(keyOf(f.provider, f.currency, f.day), f);
        count(found.compared, 1);
      } else days.delete(day);
      if (found && found.findings.length > 0) withFindings.add(day);
      else withFindings.delete(day);
      if (!sameFindings(before?.findings ?? [], found?.findings ?? [])) {
        findings = undefined;
        revision += 1;
      }
    },
  };
}

function sameFindings(a: readonly CrossCheckFinding[], b: readonly CrossCheckFinding[]): boolean {
  return (
    a.length === b.length &&
    a.every((f, i) => {
      const g = b[i]!;
      return (
        f.provider === g.provider &&
        f.currency === g.currency &&
        f.day === g.day &&
        f.base === g.base &&
        f.rate === g.rate &&
        f.median === g.median &&
        f.agreeing === g.agreeing &&
        f.setAside === g.setAside &&
        f.others.join() === g.others.join()
      );
    })
  );
}

/** Whether any provider published anything on `day`. */
function isHeld(all: readonly ProviderRates[], day: Day): boolean {
  return all.some((data) => data.days[lowerBound(data.days, day)] === day);
}

/**
 * Compares every number a provider published, on every day it holds (every day a user can be
 * served, live or with a date), with every other provider that quotes the same currency. Each is
 * compared in the provider's own terms, units of the currency per one of its base: another
 * provider's number becomes the exact cross through a currency both quote (the provider's base
 * when the other quotes it, counting 1, so an error in one published number shows at that number
 * alone; else the other's base; else any other). A number dated after another provider's newest
 * day (the NBU fixes tomorrow's rate today), or on a day it did not publish, is compared with that
 * provider's latest number within NEARBY_DAYS.
 *
 * With `previous` and `changed` (or `days`), only the days a change can alter are checked again (a
 * refresh changes a few days; a first load or a history, many); the other days keep their findings.
 */
export function crossCheck(data: Iterable<ProviderRates>, percent: Rational, options: CrossCheckOptions = {}): CrossCheck {
  const all = [...data];
  const check = (options.previous as KeptCheck | undefined) ?? emptyCheck();
  let asked: Iterable<Day>;
  if (options.days !== undefined) asked = options.days;
  else if (options.changed !== undefined) asked = affectedDays(options.changed);
  else {
    const held = new Set<Day>();
    for (const d of all) for (const day of d.days) held.add(day);
    asked = new Set([...held, ...check.days.keys()]);
  }
  const toCheck: Day[] = [];
  for (const day of asked) {
    if (isHeld(all, day)) toCheck.push(day);
    else if (check.days.has(day)) check[replaceDay](day, undefined);
  }
  toCheck.sort();
  const checking = new Set(toCheck);
  // Days far apart are checked in separate runs, so that the numbers between them are not read; a long stretch of days, in runs of RUN_DAYS.
  for (let first = 0, i = 1; i <= toCheck.length; i++) {
    if (i < toCheck.length && i - first < RUN_DAYS && toCheck[i]! <= addDays(toCheck[i - 1]!, RUN_GAP_DAYS)) continue;
    for (const [day, found] of checkDays(all, percent, checking, toCheck[first]!, toCheck[i - 1]!)) check[replaceDay](day, found);
    first = i;
  }
  return check;
}

/** The check of the numbers dated on the days of `check` (from `oldest` to `newest`), by day. */
function checkDays(all: readonly ProviderRates[], percent: Rational, check: ReadonlySet<Day>, oldest: Day, newest: Day): Map<Day, DayCheck> {
  const result = new Map<Day, { findings: CrossCheckFinding[]; compared: Set<string> }>();
  for (const day of check) if (day >= oldest && day <= newest) result.set(day, { findings: [], compared: new Set() });
  // One provider alone (a service of the ECB only) has nothing to compare with: no number of it is read.
  if (all.length < 2) return result;
  const screenBelow = (Number(percent.num) / Number(percent.den) / 100) * (1 - SCREEN_MARGIN);
  const approx = new Map(all.map((data) => [data, approximateDays(data, addDays(oldest, -NEARBY_DAYS), newest)]));
  const nearbyDays = new Map<Day, Day[]>();
  /** The others' numbers of one number in its terms, for the screen's median. */
  const approximates = new Float64Array(all.length);
  const nearbyOf = (day: Day): Day[] => {
    let days = nearbyDays.get(day);
    if (!days) nearbyDays.set(day, (days = Array.from({ length: NEARBY_DAYS + 1 }, (_, back) => (back === 0 ? day : addDays(day, -back)))));
    return days;
  };
  for (const own of all) {
    const ownDays = approx.get(own)!;
    for (const currency of own.series.keys()) {
      const days = daysOf(own, currency);
      for (let i = lowerBound(days, oldest); i < days.length && days[i]! <= newest; i++) {
        const day = days[i]!;
        const dayCheck = result.get(day);
        if (dayCheck === undefined) continue;
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
        dayCheck.compared.add(own.provider);
        // A screen in doubles (relative error far below SCREEN_MARGIN) passes the numbers that are
        // plainly within the threshold; only the others are decided in exact fractions.
        for (let k = 0; k < comparators.length; k++) approximates[k] = comparators[k]!.approximate;
        const m0 = medianOfDoubles(approximates, comparators.length);
        if (Math.abs(ownApproximate - m0) < m0 * screenBelow) continue;
        const value = valueOn(own, currency, day)!;
        const values = comparators.map(({ other, day: at, bridge }) => {
          const cross = divideUnreduced(valueOn(other, currency, at)!, valueOn(other, bridge, at)!);
          return bridge === own.base ? cross : multiplyUnreduced(cross, valueOn(own, bridge, day)!);
        });
        const m = median(values);
        if (m.num === 0n || !differsByMore(value, m, percent)) continue;
        const agreeing = values.filter((v) => !differsByMore(v, m, percent)).length;
        dayCheck.findings.push({
          provider: own.provider,
          currency,
          day,
          base: own.base,
          rate: rateTextOn(own, currency, day)!,
          median: roundSignificant(m, 8),
          others: comparators.map((c) => c.other.provider).sort(),
          agreeing,
          setAside: agreeing >= AGREEING_OTHERS,
        });
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
