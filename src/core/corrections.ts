/**
 * Corrections and moves: what a refresh does with a published number before it is stored.
 *
 * A published day does not change silently. A number that differs from the stored number of its
 * provider, currency and day is a correction: the stored number is kept as a revision (with the
 * time it was replaced) and the new one is served, unless the correction is implausible (below),
 * in which case it is held: kept and shown, not served, until confirmed.
 *
 * A single source is still checked. A new day's number is compared with the provider's previous
 * number of that currency: a move by a factor of HOLD_FACTOR or more is held the same way, for that
 * currency alone; a move beyond FLAG_PERCENT is flagged and served (real devaluations of 30–50 %
 * in a day happen: NGN, EGP, ARS).
 *
 * A held number is confirmed, and then stored and served, by another provider whose number for the
 * same currency and day lies within the cross-check's percent of it, or by the provider's next
 * publication of the currency: a number closer to the held one than to the one it would have
 * replaced. Only the next publication counts: one that does not confirm leaves the held number
 * held for good (it stays visible until retention prunes it).
 */
import { differsByMore, median } from './cross-check.js';
import { compare, divideUnreduced, parseDecimal, parseRate, roundSignificant, type Rational } from './decimal.js';
import type { CheckedNumber, DocumentChecks, RateDocument, RateStore, Revision, StoredQuote } from './ports.js';
import { valueOn, type ProviderRates } from './rate-index.js';
import { replacementOn } from './replaced-currencies.js';
import { addDays, type Day } from './time.js';

/** A move or a correction by this factor or more, either way, is held: ×1000 (a misplaced decimal point) or an inverted rate. */
export const HOLD_FACTOR = 5;
/** A day-over-day move by more than this many percent is flagged (logged, shown in /providers) and served. */
export const FLAG_PERCENT = '25';
/**
 * How many days a published day stays open to corrections. A correction of an older day is kept
 * and shown, never served: a day past this window can no longer change, which is what lets an
 * answer on it be cached as immutable.
 */
export const CORRECTABLE_DAYS = 7;
/** How far before a document's first day a refresh looks for each currency's previous number. */
export const PREVIOUS_WITHIN_DAYS = 14;

const HOLD: Rational = { num: BigInt(HOLD_FACTOR), den: 1n };
const FLAG = parseDecimal(FLAG_PERCENT)!;

/** True when a published day can no longer change: it lies before the correction window of `today`. */
export function isClosedDay(day: Day, today: Day): boolean {
  return day < addDays(today, -CORRECTABLE_DAYS);
}

/**
 * Whether a replaced-currency entry explains a currency's move between two days: the currency was
 * redenominated or replaced at a legal ratio on a day after `from` and no later than `to`, so a
 * provider still publishing under the old code moves by that ratio (src/core/replaced-currencies.ts).
 */
export function replacedCurrencyExplains(currency: string, from: Day, to: Day): boolean {
  const replacement = replacementOn(currency, to);
  return replacement !== undefined && replacement.from > from;
}

/** max(a, b) / min(a, b): how many times apart two positive numbers are. */
function ratioApart(a: Rational, b: Rational): Rational {
  return compare(a, b) >= 0 ? divideUnreduced(a, b) : divideUnreduced(b, a);
}

/** The ratio for a message: a few significant digits. */
function shownRatio(a: Rational, b: Rational): string {
  return roundSignificant(ratioApart(a, b), 3);
}

/** true when `next` lies closer (as a ratio) to `held` than to `replaced`. */
function closerTo(next: Rational, held: Rational, replaced: Rational): boolean {
  return compare(ratioApart(next, held), ratioApart(next, replaced)) < 0;
}

/** The other providers' numbers for a currency on a day, each in units of the currency per one of this provider's base. */
export type OtherNumbers = (currency: string, day: Day) => Rational[];

/** Other providers' numbers from what they have stored, crossed exactly through `base` as the cross-check does. */
export function otherProvidersNumbers(data: Iterable<ProviderRates>, provider: string, base: string): OtherNumbers {
  const others = [...data].filter((d) => d.provider !== provider);
  return (currency, day) => {
    const values: Rational[] = [];
    for (const other of others) {
      const x = valueOn(other, currency, day);
      const b = other.base === base ? undefined : valueOn(other, base, day);
      if (x === undefined || (other.base !== base && b === undefined)) continue;
      values.push(b === undefined ? x : divideUnreduced(x, b));
    }
    return values;
  };
}

export interface CheckInput {
  /** A validated document, days ascending: what the provider published. */
  document: RateDocument;
  /** The provider's stored numbers from PREVIOUS_WITHIN_DAYS before the document's first day through its last. */
  stored: readonly StoredQuote[];
  /** The provider's held and flagged numbers. */
  checked: readonly CheckedNumber[];
  /** Other providers' numbers, and the cross-check's threshold in percent: without them, nothing is compared with other providers. */
  others?: { numbers: OtherNumbers; percent: Rational };
  today: Day;
  /** This refresh's time, ISO 8601. */
  at: string;
}

/** One thing worth a log line: a correction applied, a number held, flagged, released or withdrawn. */
export interface CheckEvent {
  level: 'info' | 'warn';
  message: string;
  currency: string;
  day: Day;
  rate: string;
  previous?: string;
}

export interface CheckOutcome {
  /** What to store: the document without held numbers, with released ones added on their days. */
  document: RateDocument;
  checks: DocumentChecks;
  events: CheckEvent[];
}

interface Served {
  day: Day;
  text: string;
}

/** A stored rate text as a double, for the screen below. */
function approximate(text: string): number {
  return text.startsWith('1/') ? 1 / Number(text.slice(2)) : Number(text);
}

/** How far inside both thresholds the double screen stops: far wider than a double's rounding of two rates. */
const SCREEN_MARGIN = 1e-6;
const FLAG_SHARE = Number(FLAG_PERCENT) / 100;

/**
 * True when a move is plainly within both thresholds, by doubles: most are (a currency moves well
 * under 1 % a day), so years of history are checked without exact fractions; the rest are decided
 * exactly.
 */
function plainlyOrdinary(next: number, previous: number): boolean {
  if (!(next > 0 && previous > 0 && Number.isFinite(next) && Number.isFinite(previous))) return false;
  const ratio = next > previous ? next / previous : previous / next;
  return ratio < HOLD_FACTOR * (1 - SCREEN_MARGIN) && Math.abs(next - previous) < previous * FLAG_SHARE * (1 - SCREEN_MARGIN);
}

const keyOf = (currency: string, day: Day) => `${currency} ${day}`;

/** Decides, for every number of a document, whether it is stored as published, stored as a correction, held or flagged. */
export function checkDocument(input: CheckInput): CheckOutcome {
  const { document, today, at } = input;
  const others = input.others?.numbers ?? (() => []);
  const percent = input.others?.percent ?? { num: 0n, den: 1n };
  const firstDay = document.days[0]?.day;
  const stored = new Map(input.stored.map((q) => [keyOf(q.quote, q.day), q]));
  const prior = new Map(input.checked.map((c) => [keyOf(c.currency, c.day), c]));

  const out = new Map<Day, { asOf: string; rates: Record<string, string> }>();
  const put = (day: Day, asOf: string, currency: string, text: string) => {
    let entry = out.get(day);
    if (!entry) out.set(day, (entry = { asOf, rates: {} }));
    entry.rates[currency] = text;
  };
  const revisions: Revision[] = [];
  const checked = new Map<string, CheckedNumber>();
  const cleared = new Map<string, { currency: string; day: Day }>();
  const events: CheckEvent[] = [];

  /** Each currency's newest served number so far, and a held number after it that the next publication may confirm. */
  const last = new Map<string, Served>();
  const pending = new Map<string, CheckedNumber>();
  // Stored numbers ascending by day: each currency's previous number is the newest stored (or
  // served from this document) before the day at hand, also where the document skips it.
  const storedByDay = [...input.stored].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  let next = 0;
  const storedBefore = (day: Day) => {
    for (; next < storedByDay.length && storedByDay[next]!.day < day; next++) {
      const q = storedByDay[next]!;
      const seen = last.get(q.quote);
      if (!seen || seen.day < q.day) last.set(q.quote, { day: q.day, text: q.rate });
    }
  };
  if (firstDay !== undefined) {
    storedBefore(firstDay);
    for (const c of input.checked) {
      if (!c.held || c.day >= firstDay) continue;
      const served = last.get(c.currency);
      if (served && c.day < served.day) continue;
      const seen = pending.get(c.currency);
      if (!seen || seen.day < c.day) pending.set(c.currency, c);
    }
  }

  /** The others' median, when they have numbers and it lies within the cross-check's percent of `value`. */
  function confirmedByOthers(currency: string, day: Day, value: Rational): boolean {
    const values = others(currency, day);
    return values.length > 0 && !differsByMore(value, median(values), percent);
  }

  function note(entry: CheckedNumber, message: string): void {
    const k = keyOf(entry.currency, entry.day);
    const before = prior.get(k);
    checked.set(k, entry);
    cleared.delete(k);
    // Logged once: a refresh that fetches the same document again decides the same.
    if (before && before.rate === entry.rate && before.held === entry.held) {
      checked.set(k, before);
      return;
    }
    events.push({ level: 'warn', message, currency: entry.currency, day: entry.day, rate: entry.rate, previous: entry.previous });
  }

  function release(held: CheckedNumber, by: string): void {
    put(held.day, held.asOf, held.currency, held.rate);
    if (held.kind === 'correction') {
      const replaced = stored.get(keyOf(held.currency, held.day));
      revisions.push({
        provider: document.provider,
        base: document.base,
        currency: held.currency,
        day: held.day,
        rate: held.previous,
        asOf: replaced?.asOf ?? held.asOf,
        replacedAt: at,
        replacedBy: held.rate,
      });
    }
    const reason = `${held.reason}; released ${at}: confirmed by ${by}`;
    checked.set(keyOf(held.currency, held.day), { ...held, held: false, reason, notedAt: at });
    events.push({ level: 'warn', message: `held number released: confirmed by ${by}`, currency: held.currency, day: held.day, rate: held.rate, previous: held.previous });
  }

  function correction(currency: string, day: Day, asOf: string, text: string, value: Rational, existing: StoredQuote): void {
    const previous = parseRate(existing.rate)!;
    const entry = { provider: document.provider, base: document.base, currency, day, asOf, rate: text, previous: existing.rate, kind: 'correction' as const, notedAt: at };
    let reason: string | undefined;
    const values = others(currency, day);
    const m = values.length > 0 ? median(values) : undefined;
    if (isClosedDay(day, today)) {
      reason = `corrects a day more than ${CORRECTABLE_DAYS} days old, which no longer changes`;
    } else if (m !== undefined && differsByMore(value, m, percent)) {
      reason = `the correction lies more than ${roundSignificant(percent, 8)}% from the other providers' median (${roundSignificant(m, 8)})`;
    } else if (compare(ratioApart(value, previous), HOLD) >= 0 && m === undefined) {
      reason = `the correction changes the stored number ${shownRatio(value, previous)}-fold`;
    }
    if (reason !== undefined) {
      const held = { ...entry, held: true, reason };
      note(held, `correction held, not served: ${reason}`);
      pending.set(currency, held);
      return;
    }
    put(day, asOf, currency, text);
    revisions.push({ provider: document.provider, base: document.base, currency, day, rate: existing.rate, asOf: existing.asOf, replacedAt: at, replacedBy: text });
    events.push({ level: 'warn', message: 'correction: a published number changed; the previous one is kept as a revision', currency, day, rate: text, previous: existing.rate });
    const before = prior.get(keyOf(currency, day));
    if (before) cleared.set(keyOf(currency, day), { currency, day });
    checked.delete(keyOf(currency, day));
    last.set(currency, { day, text });
  }

  /** An earlier held or flagged number of a day the provider now publishes otherwise, unremarkably. */
  function withdraw(before: CheckedNumber): void {
    cleared.set(keyOf(before.currency, before.day), { currency: before.currency, day: before.day });
    if (before.held) {
      events.push({ level: 'info', message: 'held number withdrawn: the provider publishes another number for that day', currency: before.currency, day: before.day, rate: before.rate });
    }
  }

  function move(currency: string, day: Day, asOf: string, text: string): void {
    const previous = last.get(currency);
    const before = prior.get(keyOf(currency, day));
    if (previous && !plainlyOrdinary(approximate(text), approximate(previous.text))) {
      const value = parseRate(text)!;
      const previousValue = parseRate(previous.text)!;
      const entry = { provider: document.provider, base: document.base, currency, day, asOf, rate: text, previous: previous.text, kind: 'move' as const, notedAt: at };
      const factor = shownRatio(value, previousValue);
      if (
        compare(ratioApart(value, previousValue), HOLD) >= 0 &&
        !replacedCurrencyExplains(currency, previous.day, day) &&
        !confirmedByOthers(currency, day, value)
      ) {
        const held = { ...entry, held: true, reason: `moves ${factor}-fold from ${previous.text} on ${previous.day}` };
        note(held, `move held, not served: ${held.reason}`);
        pending.set(currency, held);
        return;
      }
      if (differsByMore(value, previousValue, FLAG)) {
        note({ ...entry, held: false, reason: `moves by more than ${FLAG_PERCENT}% from ${previous.text} on ${previous.day}; served` }, 'move flagged, served');
      } else if (before) {
        withdraw(before);
      }
    } else if (before) {
      withdraw(before);
    }
    put(day, asOf, currency, text);
    last.set(currency, { day, text });
  }

  for (const { day, asOf, rates } of document.days) {
    storedBefore(day);
    for (const [currency, text] of Object.entries(rates)) {
      const held = pending.get(currency);
      if (held && held.day < day) {
        pending.delete(currency);
        if (closerTo(parseRate(text)!, parseRate(held.rate)!, parseRate(held.previous)!) && !(held.kind === 'correction' && isClosedDay(held.day, today))) {
          release(held, `${document.provider}'s next publication (${day})`);
          last.set(currency, { day: held.day, text: held.rate });
        }
      }
      const existing = stored.get(keyOf(currency, day));
      if (!existing) {
        move(currency, day, asOf, text);
        continue;
      }
      if (text !== existing.rate && compare(parseRate(text)!, parseRate(existing.rate)!) !== 0) {
        correction(currency, day, asOf, text, parseRate(text)!, existing);
        continue;
      }
      // Published again as stored. A correction held for it is withdrawn.
      put(day, asOf, currency, text);
      const before = prior.get(keyOf(currency, day));
      if (before?.held) {
        cleared.set(keyOf(currency, day), { currency, day });
        checked.delete(keyOf(currency, day));
        events.push({ level: 'info', message: 'held number withdrawn: the provider publishes the stored number again', currency, day, rate: text, previous: before.rate });
      }
      last.set(currency, { day, text });
    }
  }

  // Held numbers this document did not touch: another provider may have confirmed them since.
  for (const c of input.checked) {
    const k = keyOf(c.currency, c.day);
    if (!c.held || checked.has(k) || cleared.has(k) || (c.kind === 'correction' && isClosedDay(c.day, today))) continue;
    if (confirmedByOthers(c.currency, c.day, parseRate(c.rate)!)) release(c, 'another provider');
  }

  const days = [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([day, { asOf, rates }]) => ({ day, asOf, rates }));
  const changed = [...checked.entries()].filter(([k, c]) => prior.get(k) !== c).map(([, c]) => c);
  return { document: { ...document, days }, checks: { revisions, checked: changed, cleared: [...cleared.values()] }, events };
}


/** Revisions a provider's entry in /api/v1/providers lists: the newest, a few months of rare events. */
export const REVISIONS_SHOWN = 20;

/** What /api/v1/providers shows of a provider's published numbers that changed or were stopped. */
export interface PublishedChanges {
  /** Numbers later documents replaced, newest replacement first, at most REVISIONS_SHOWN. */
  revisions: Array<Omit<Revision, 'provider' | 'base'>>;
  /** Numbers held: not served until confirmed. Newest day first. */
  held: Array<Omit<CheckedNumber, 'provider' | 'base' | 'held'>>;
  /** Moves served but flagged, and held numbers released once confirmed. Newest day first. */
  flagged: Array<Omit<CheckedNumber, 'provider' | 'base' | 'held'>>;
}

export async function publishedChanges(store: Pick<RateStore, 'revisions' | 'checkedNumbers'>, provider: string, from: Day): Promise<PublishedChanges> {
  const revisions = (await store.revisions(provider, { from, to: '9999-12-31' }))
    .reverse()
    .slice(0, REVISIONS_SHOWN)
    .map(({ provider: _p, base: _b, ...rest }) => rest);
  const checked = (await store.checkedNumbers(provider)).reverse();
  const shown = (c: CheckedNumber) => {
    const { provider: _p, base: _b, held: _h, ...rest } = c;
    return rest;
  };
  return { revisions, held: checked.filter((c) => c.held).map(shown), flagged: checked.filter((c) => !c.held).map(shown) };
}
