import { LRUCache } from 'lru-cache';
import { isClosedDay } from './corrections.js';
import { parseCurrency, resultDecimals } from './currencies.js';
import { affectedDays, changedDays, crossCheck, describeFinding, parsePercent, type CrossCheck, type CrossCheckFinding } from './cross-check.js';
import { divideUnreduced, multiply, multiplyUnreduced, ONE, parseDecimal, roundSignificant, roundToScale, stripLeadingZeros, type Rational } from './decimal.js';
import { DomainError } from './errors.js';
import type { Clock, Metrics, RateDocument, RateStore, Revision } from './ports.js';
import {
  applyDocument,
  buildProviderRates,
  CURRENT_WITHIN_DAYS,
  daysOf,
  emptyProviderRates,
  hasCurrency,
  historyReaches,
  lowerBound,
  newestDay,
  pruneProviderRates,
  quotesNow,
  rateTextOn,
  valueOn,
  type ProviderRates,
} from './rate-index.js';
import { servingOrder, type CentralBank, type ServingOrder } from './preference.js';
import { retentionStart } from './refresh.js';
import { DEFAULT_HISTORY_YEARS, type HistoryYears } from './retention.js';
import { throughSuccessors, type Replacement, type ThroughSuccessors } from './replaced-currencies.js';
import { addDays, dayNumber, utcDay, utcDayNumber, type Day } from './time.js';

/** Significant digits of every rate the service writes (SPEC §3). */
export const RATE_DIGITS = 8;

/** Accepted amounts: up to 18 integer digits and 12 decimals, nothing else (SPEC §3). */
export const AMOUNT_PATTERN = '^[0-9]{1,18}(\\.[0-9]{1,12})?$';
const AMOUNT_SHAPE = new RegExp(AMOUNT_PATTERN);

export interface RateQuote {
  pair: string;
  from: string;
  to: string;
  rate: string;
  asOf: string;
  stale: boolean;
  /** What the rate was computed from; rendered only when asked for (expand=provenance). */
  provenance?: Provenance;
}

/** One number a provider published, as stored: units of `currency` per one `base`. */
export interface PublishedNumber {
  provider: string;
  day: Day;
  base: string;
  currency: string;
  /** The stored text: a decimal, or `1/<x>`, the exact reciprocal of the number the provider published. */
  rate: string;
  /** For a `1/<x>` text, x as published: units of `base` per one `currency`. */
  reciprocalOf?: string;
  /** Earlier numbers of the same day that later documents replaced, oldest first; present only then. */
  revisions?: Array<{ rate: string; asOf: string; replacedAt: string }>;
}

/**
 * Where a rate comes from: the providers, the day, the bridge of a cross between two providers,
 * and every published number used. With f and t the numbers of `from` and `to` (1 for a
 * provider's base): one provider, rate = t / f; a cross through the bridge b, with bf and bt the
 * bridge's numbers in from's and to's providers, rate = (bf / f) × (t / bt), rounded once.
 */
export interface Provenance {
  providers: string[];
  day: Day;
  bridge: string | null;
  numbers: PublishedNumber[];
  /**
   * Numbers of providers preferred for a currency that were not served because the cross-check
   * set them aside (src/core/cross-check.ts); present only then.
   */
  setAside?: SetAsideNumber[];
  /**
   * Present only when `from` or `to` had been replaced by its successor at a legal fixed ratio by
   * then (src/core/replaced-currencies.ts): the numbers are its successor's, and the rate is
   * multiplied by to's ratio over from's before it is rounded.
   */
  replaced?: ReplacedCurrency[];
  /**
   * Numbers used here that the cross-check flagged without setting them aside (fewer than three
   * other providers agree with each other): present only then.
   */
  flagged?: SetAsideNumber[];
}

/** A currency replaced by its successor at a fixed legal ratio, as provenance shows it. */
export interface ReplacedCurrency {
  currency: string;
  successor: string;
  /** Units of `currency` per one `successor`, exact. */
  ratio: string;
  /** The day from which the successor is the currency. */
  from: Day;
  reference: string;
}

/** A number the cross-check flagged (a preferred provider's set aside, or one used though flagged), and why. */
export type SetAsideNumber = Omit<CrossCheckFinding, 'setAside'> & { reason: string };

function published(data: ProviderRates, code: string, day: Day): PublishedNumber | undefined {
  if (code === data.base) return undefined;
  const rate = rateTextOn(data, code, day)!;
  const entry: PublishedNumber = { provider: data.provider, day, base: data.base, currency: code, rate };
  if (rate.startsWith('1/')) entry.reciprocalOf = rate.slice(2);
  return entry;
}

/** The provenance of a rate from → to computed on `day` (every value it needs is there). */
export function provenanceOf(fromData: ProviderRates, from: string, toData: ProviderRates, to: string, day: Day, bridge: string | undefined): Provenance {
  const providers = fromData === toData ? [fromData.provider] : [fromData.provider, toData.provider];
  const used: Array<[ProviderRates, string]> = from === to ? [] : [[fromData, from], [toData, to]];
  if (fromData !== toData && bridge !== undefined) used.splice(1, 0, [fromData, bridge], [toData, bridge]);
  const numbers = used.map(([data, code]) => published(data, code, day)).filter((n): n is PublishedNumber => n !== undefined);
  return { providers, day, bridge: fromData === toData ? null : (bridge ?? null), numbers };
}

export interface Conversion {
  from: string;
  to: string;
  amount: string;
  rate: string;
  result: string;
  asOf: string;
  stale: boolean;
}

/** A rate on a past date, and whether it can still change. */
export interface DatedQuote {
  quote: RateQuote;
  /**
   * true when both providers have published a later day than the date asked for and the date is
   * past the correction window (src/core/corrections.ts): nothing can be published or corrected
   * for it any more, so the answer never changes.
   */
  settled: boolean;
}

export interface RateBookOptions {
  store: RateStore;
  /** Provider ids in order of preference. */
  providers: readonly string[];
  /** The configured central banks: each serves its own currency before the order of `providers` (src/core/preference.ts). */
  centralBanks?: readonly CentralBank[];
  clock: Clock;
  /**
   * How often the in-memory rates check the store for writes by other processes (another
   * instance's refresh, an import). Writes in this process are applied at once.
   */
  cacheTtlMs?: number;
  /** Loads a currency nobody (or not `source`) stores yet; resolves true when it is stored now. */
  backfill?: (code: string, source?: string) => Promise<boolean>;
  metrics?: Metrics;
  /** EXRATES_CROSSCHECK_PERCENT: how far (in percent) a number may lie from the others' median. Default 2. */
  crossCheckPercent?: string;
  /**
   * Names that stand for several providers as a `source` (`peg`: the parities, one provider per
   * anchor), with their ids; a pair is then answered by the one of them that quotes both currencies.
   */
  families?: ReadonlyMap<string, readonly string[]>;
  /**
   * Providers that keep whole days (Provider.keepsWholeDays): a currency they serve from their
   * day documents alone has its history loaded (`backfill` with their id) on the first request
   * that needs it, once per process when its history is younger than the retention.
   */
  historyOnRequest?: readonly string[];
  /** EXRATES_HISTORY_YEARS: how much history is read and kept. Default 5. */
  historyYears?: HistoryYears;
}

/** The rates a request is served from: every provider's stored rates, and which providers are failing. */
export interface RateSnapshot {
  data: ReadonlyMap<string, ProviderRates>;
  failing: ReadonlyMap<string, boolean>;
}

/**
 * Every answer may be asked of one provider (`source`, a configured provider id, either case):
 * both currencies are then taken through that provider's base, on its days, and nothing of the
 * other providers is used. Without it, each currency comes from the first provider, in its serving
 * order (its own central bank, then the order of preference: src/core/preference.ts), that quotes it.
 */
export interface RateBook {
  /** A pair already computed for what is held is answered from a cache until the next refresh. */
  liveRate(fromInput: string, toInput: string, source?: string): Promise<RateQuote>;
  convert(fromInput: string, toInput: string, amountInput: string, source?: string): Promise<Conversion>;
  /**
   * The rate on the latest day on or before `date` (already checked by parseDate) on which both
   * currencies have a published rate: that day's history point, its fixing time as asOf, never stale.
   * `loadHistory` false: a currency whose history is not loaded yet is not loaded for it.
   */
  rateOnDate(fromInput: string, toInput: string, date: Day, source?: string, loadHistory?: boolean): Promise<DatedQuote>;
  /** True when what is held in memory may be served as is (it starts a due background check of the store). */
  current(): boolean;
  snapshot(): Promise<RateSnapshot>;
  /**
   * The provider data that serves a currency: for 'live', one that quotes it now; for 'history',
   * also one that only kept its history. Backfills a currency nobody has, when a provider can.
   * With `source`, that provider's data, or unsupported_source / unsupported_currency.
   */
  sourceFor(code: string, param: string, use: 'live' | 'history', source?: string): Promise<{ snapshot: RateSnapshot; data: ProviderRates }>;
  /**
   * The providers a history of the pair (or its point on `upTo`) is taken from: each currency's
   * (sourceFor 'history'), one provider for both when it can (sameProviderWhenPossible). A
   * currency such a provider holds only from its day documents has its history loaded first when
   * the answer needs a day before them (`need`, the earliest day it needs; undefined: all; false:
   * never, for a currency nobody named).
   */
  historyPair(
    from: string,
    to: string,
    source: string | undefined,
    upTo: Day | undefined,
    need?: Day | false,
  ): Promise<{ fromData: ProviderRates; toData: ProviderRates }>;
  /** A `source` parameter as a configured provider id (lower case), or unsupported_source. */
  parseSource(input: string): string;
  /** Whether a provider's number of a currency on `upTo` (undefined: its newest) may serve an answer: always with `source`, else unless the cross-check set it aside. */
  servable(source: string | undefined, upTo: Day | undefined): Servable;
  isStale(provider: string): Promise<boolean>;
  /** The cross-check of what is held now (computed once per generation) and its threshold in percent. */
  crossCheck(): Promise<CrossCheck & { percent: string }>;
  /** Merges a document this process just stored. */
  apply(document: RateDocument): Promise<void>;
  /** Forgets what was read, so the next request reads the store again. */
  invalidate(): void;
  /** Changes whenever the answers may change: a key for caches of computed responses. */
  generation(): number;
  readonly providers: readonly string[];
  /** The providers in the order they serve a currency. */
  readonly servingOrder: ServingOrder;
  readonly store: RateStore;
  readonly clock: Clock;
  /** EXRATES_HISTORY_YEARS: how much history is read, kept and asked for. */
  readonly historyYears: HistoryYears;
}

export function formatRate(value: Rational): string {
  return roundSignificant(value, RATE_DIGITS);
}

export function parseAmount(input: string): { text: string; value: Rational } {
  if (!AMOUNT_SHAPE.test(input)) {
    throw new DomainError(
      'invalid_amount',
      'amount must be a non-negative decimal with up to 18 integer digits and up to 12 decimals, using "." as the decimal point (for example 100 or 99.95); no sign, exponent, spaces or thousands separators.',
      { param: 'amount' },
    );
  }
  return { text: stripLeadingZeros(input), value: parseDecimal(input)! };
}

/**
 * A `date` parameter: a real calendar date, not after today (UTC); nothing is published for a
 * later one yet.
 */
export function parseDate(input: string, clock: Clock): Day {
  const text: string = input;
  const number = dayNumber(input);
  if (number === undefined) {
    throw new DomainError('invalid_date', `date must be given once, as a calendar date written YYYY-MM-DD (for example 2026-03-02); got '${text.slice(0, 16)}'.`, {
      param: 'date',
    });
  }
  const now = clock.now();
  if (number > utcDayNumber(now)) {
    throw new DomainError('invalid_date', `date ${input} is after today (${utcDay(now)}, UTC): no rate is published for it yet.`, { param: 'date' });
  }
  return input;
}

/**
 * What a rate or a conversion is answered from: the live rate, or, with a `date` (checked here),
 * the rate on that date and whether it can still change.
 */
export async function quoteFor(book: RateBook, query: { from: string; to: string; date?: string | undefined; source?: string | undefined }): Promise<DatedQuote> {
  if (query.date !== undefined) return book.rateOnDate(query.from, query.to, parseDate(query.date, book.clock), query.source);
  return { quote: await book.liveRate(query.from, query.to, query.source), settled: false };
}

const SEARCH_BACK_DAYS = 45;

/** Whether a provider's number for a currency may be served (the cross-check did not set it aside). */
export type Servable = (data: ProviderRates, code: string) => boolean;
const ANY: Servable = () => true;

/** The provider that serves a currency: the first, in its serving order, that quotes it now (and may serve it). */
export function currentProviderFor(snapshot: RateSnapshot, providers: readonly string[], code: string, servable: Servable = ANY): ProviderRates | undefined {
  for (const id of providers) {
    const data = snapshot.data.get(id);
    if (data && quotesNow(data, code) && servable(data, code)) return data;
  }
  return undefined;
}

/** The newest day on or before `upTo` on which a provider has a number for a currency. */
function dayUpTo(data: ProviderRates, code: string, upTo: Day | undefined): Day | undefined {
  const days = daysOf(data, code);
  return upTo === undefined ? days.at(-1) : days[lowerBound(days, addDays(upTo, 1)) - 1];
}

/** A currency both providers publish, through which a cross between them is exact (SPEC §2). */
export function bridgeCurrency(a: ProviderRates, b: ProviderRates): string | undefined {
  if (a === b) return undefined;
  if (hasCurrency(a, b.base)) return b.base;
  if (hasCurrency(b, a.base)) return a.base;
  for (const code of a.series.keys()) if (b.series.has(code)) return code;
  return undefined;
}

/** The exact rate from → to on one day, or undefined when a needed value is missing that day. */
export function rateOn(fromData: ProviderRates, from: string, toData: ProviderRates, to: string, day: Day, bridge: string | undefined): Rational | undefined {
  const vFrom = valueOn(fromData, from, day);
  const vTo = valueOn(toData, to, day);
  if (!vFrom || !vTo) return undefined;
  // Unreduced: the value is rounded at once, and reducing would cost more than the rest.
  if (fromData === toData) return divideUnreduced(vTo, vFrom);
  if (bridge === undefined) return undefined;
  const bFrom = valueOn(fromData, bridge, day);
  const bTo = valueOn(toData, bridge, day);
  if (!bFrom || !bTo) return undefined;
  return multiplyUnreduced(divideUnreduced(bFrom, vFrom), divideUnreduced(vTo, bTo));
}

/**
 * A pair both of whose currencies one provider quotes now is served by that provider alone
 * (EUR→NGN by the provider that quotes NGN per EUR), so its date, freshness and staleness are
 * that provider's, not those of a provider preferred for one side only.
 */
export function sameProviderWhenPossible(
  fromData: ProviderRates,
  from: string,
  toData: ProviderRates,
  to: string,
  servable: Servable = ANY,
): { fromData: ProviderRates; toData: ProviderRates } {
  if (fromData === toData) return { fromData, toData };
  if (quotesNow(toData, from) && servable(toData, from)) return { fromData: toData, toData };
  if (quotesNow(fromData, to) && servable(fromData, to)) return { fromData, toData: fromData };
  return { fromData, toData };
}

/** An amount converted at a quote. The result uses the rounded rate of the same answer, so a client can reproduce it (SPEC §3). */
export function convertAt(quote: RateQuote, amount: { text: string; value: Rational }): Conversion {
  const result = roundToScale(multiply(amount.value, parseDecimal(quote.rate)!), resultDecimals(quote.to));
  return { from: quote.from, to: quote.to, amount: amount.text, rate: quote.rate, result, asOf: quote.asOf, stale: quote.stale };
}

/** A pair whose currencies two providers of one family quote (a parity against the euro, one against the dollar): nothing fixes a rate between them. */
export function acrossFamily(source: string, from: string, to: string): DomainError {
  return new DomainError('unsupported_currency', `source ${source} fixes no rate between ${from} and ${to}: each is fixed against another currency.`, { param: 'to' });
}

function feedUnavailable(detail: string): DomainError {
  return new DomainError('feed_unavailable', detail, { retryAfterSeconds: 60 });
}

/** A letter's place in the alphabet, either case; -1 for anything else. */
function letter(code: number): number {
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x7a ? lower - 0x61 : -1;
}

/** How many three-letter codes there are (26³), and pairs of them: pairKey is below the latter. */
const CODE_NUMBERS = 17_576;
const PAIR_KEYS = CODE_NUMBERS * CODE_NUMBERS;

/** Three letters, either case, as a number below 26³; undefined for anything else. */
function codeNumber(code: string): number | undefined {
  if (code.length !== 3) return undefined;
  const a = letter(code.charCodeAt(0));
  const b = letter(code.charCodeAt(1));
  const c = letter(code.charCodeAt(2));
  return a < 0 || b < 0 || c < 0 ? undefined : (a * 26 + b) * 26 + c;
}

/**
 * A pair of currency codes as one number (the same for any case); undefined unless both are
 * three letters. Caches of answers are looked up by it: no key string is built per request.
 */
export function pairKey(from: string, to: string): number | undefined {
  const a = codeNumber(from);
  const b = codeNumber(to);
  return a === undefined || b === undefined ? undefined : a * CODE_NUMBERS + b;
}

/** More older days than this to check again are checked in the background. */
const BACKGROUND_ABOVE_DAYS = 62;
/**
 * How long the background check runs before the event loop turns again: a request that arrives
 * meanwhile waits at most about this (and one day's check) for it.
 */
const BACKGROUND_SLICE_MS = 5;

/** Answers a rate book keeps, per kind: far more than the pairs and days asked for in a while. */
const CACHED_ANSWERS = 100_000;

/** A rate rounded once; through a replaced currency's successor, multiplied by the fixed ratio first. */
function atRatio(value: Rational, through: ThroughSuccessors | undefined): string {
  return formatRate(through === undefined ? value : multiply(value, through.factor));
}

function replacedOf(r: Replacement): ReplacedCurrency {
  return { currency: r.code, successor: r.successor, ratio: r.ratio, from: r.from, reference: r.reference };
}

/** The successors' quote (already at the ratio) as the answer for the pair asked, its provenance saying why. */
function replacedQuote(quote: RateQuote, from: string, to: string, through: ThroughSuccessors): RateQuote {
  const provenance = quote.provenance && { ...quote.provenance, replaced: through.replaced.map(replacedOf) };
  return { ...quote, pair: from + to, from, to, ...(provenance ? { provenance } : {}) };
}

export function createRateBook(options: RateBookOptions): RateBook {
  const { store, providers, clock } = options;
  const historyYears = options.historyYears ?? DEFAULT_HISTORY_YEARS;
  const orderOf = servingOrder(providers, options.centralBanks ?? []);
  const ttl = options.cacheTtlMs ?? 2_000;
  let state: { data: Map<string, ProviderRates>; versions: Map<string, number>; failing: Map<string, boolean>; checkedAt: number } | undefined;
  let syncing: Promise<void> | undefined;
  let dirty = true;
  /** Bumped whenever what is served may change; cached answers of an older generation are dropped. */
  let generation = 0;
  /**
   * Live quotes by pair (pairKey), at most CACHED_ANSWERS per slot: slot 0 for answers from every
   * provider, slot i + 1 for answers from providers[i] alone (made when first asked for).
   */
  const quoteCaches: Array<LRUCache<number, { generation: number; quote: RateQuote }>> = [];
  const quoteCache = (slot: number) => (quoteCaches[slot] ??= new LRUCache({ max: CACHED_ANSWERS }));
  const percentText = options.crossCheckPercent ?? '2';
  const percent = parsePercent(percentText);
  let checked: CrossCheck | undefined;
  /** Revisions of stored numbers, by provider, currency and day (src/core/corrections.ts). */
  let revised = new Map<string, Revision[]>();
  let revisedMark = '';

  /** A provenance whose numbers include those a later document replaced, with their earlier numbers. */
  function withRevisions(provenance: Provenance): Provenance {
    if (revised.size === 0) return provenance;
    let changed = false;
    const numbers = provenance.numbers.map((n) => {
      const earlier = revised.get(`${n.provider} ${n.currency} ${n.day}`);
      if (!earlier) return n;
      changed = true;
      return { ...n, revisions: earlier.map(({ rate, asOf, replacedAt }) => ({ rate, asOf, replacedAt })) };
    });
    return changed ? { ...provenance, numbers } : provenance;
  }

  /** Days whose check is out of date: checked in the background, or at once when an answer needs one. */
  const pending = new Set<Day>();
  /** The pending days in order, as last sorted (days checked since are skipped); sorted again when days are added. */
  let queue: Day[] = [];
  let queued = true;
  let draining: Promise<void> | undefined;

  /**
   * Cross-checks what is held, whenever it changes: after a document of this process is merged and
   * after the store is read again, never while answering. With the days whose numbers changed,
   * only the days they can alter are checked again (all of them on the first read). The days a
   * live answer is served from are checked at once; when many older days changed (a first read of
   * years of history, a currency's history loaded), those are checked in the background, in slices
   * of BACKGROUND_SLICE_MS between turns of the event loop, so that no request waits for them; an
   * answer on such a day checks that day first (checkOn).
   */
  function recheck(changed?: Iterable<Day>): void {
    const data = [...(state?.data.values() ?? [])];
    const days = checked && changed ? [...affectedDays(changed)] : [...new Set(data.flatMap((d) => d.days))];
    const newest = data.map(newestDay).filter((d): d is Day => d !== undefined).sort().at(-1);
    const recentFrom = newest === undefined ? undefined : addDays(newest, -CURRENT_WITHIN_DAYS);
    const older = days.filter((day) => recentFrom === undefined || day < recentFrom);
    const now = older.length > BACKGROUND_ABOVE_DAYS ? days.filter((day) => recentFrom !== undefined && day >= recentFrom) : days;
    for (const day of now) pending.delete(day);
    checked = crossCheck(data, percent, { previous: checked, days: now });
    if (now === days) return;
    for (const day of older) pending.add(day);
    queued = false;
    draining ??= drain().finally(() => {
      draining = undefined;
    });
  }

  async function drain(): Promise<void> {
    /**
     * What one day's check took last, to know how many fit in what is left of a slice (at first,
     * the slice), and how many days were checked at once last: at most twice as many are next.
     */
    let perDay = BACKGROUND_SLICE_MS;
    let group = 1;
    while (pending.size > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!queued) {
        queue = [...pending].sort();
        queued = true;
      }
      // Elapsed processing time, not the service's clock (which may be fixed). At least one day a slice.
      const sliceStart = performance.now();
      let left = BACKGROUND_SLICE_MS;
      do {
        // Newest first: the days most often asked for.
        const days: Day[] = [];
        const fit = Math.max(1, Math.min(2 * group, Math.floor(left / perDay)));
        while (days.length < fit && queue.length > 0) {
          const day = queue.pop()!;
          if (pending.has(day)) days.push(day);
        }
        if (days.length === 0) {
          queued = false;
          break;
        }
        const started = performance.now();
        checkNow(days);
        perDay = (performance.now() - started) / days.length;
        group = days.length;
        left = BACKGROUND_SLICE_MS - (performance.now() - sliceStart);
      } while (left >= perDay && pending.size > 0);
    }
  }

  /** Checks the numbers of `days` again now. */
  function checkNow(days: readonly Day[]): void {
    for (const day of days) pending.delete(day);
    const previous = checks();
    const revision = previous.revision;
    checked = crossCheck(state?.data.values() ?? [], percent, { previous, days });
    // Answers computed before may have used a number now set aside, or said otherwise of one
    // (provenance); when no finding changed, every such answer is still what it would be now.
    if (checked.revision !== revision) generation += 1;
  }

  /** The cross-check of what is held now. */
  function checks(): CrossCheck {
    if (!checked) recheck();
    return checked!;
  }

  /** The cross-check, with the numbers of `day` checked first if they were still waiting. */
  function checkOn(day: Day): CrossCheck {
    if (pending.has(day)) checkNow([day]);
    return checks();
  }

  /**
   * What may serve an answer on `upTo` (undefined: the newest day): with `source`, that provider's
   * numbers as published; without, a number of that day the cross-check did not set aside.
   */
  function servable(source: string | undefined, upTo: Day | undefined): Servable {
    if (source !== undefined) return ANY;
    return (data, code) => {
      const day = dayUpTo(data, code, upTo);
      return day === undefined || !checkOn(day).setAside(data.provider, code, day);
    };
  }

  /** True when a number a cross on `day` uses was set aside. */
  function usesSetAside(fromData: ProviderRates, from: string, toData: ProviderRates, to: string, day: Day, bridge: string | undefined): boolean {
    const check = checkOn(day);
    const used: Array<[ProviderRates, string]> = [[fromData, from], [toData, to]];
    if (bridge !== undefined) used.push([fromData, bridge], [toData, bridge]);
    return used.some(([data, code]) => check.setAside(data.provider, code, day));
  }

  /**
   * The provenance, with the numbers of providers preferred for `from` or `to` that were set
   * aside, and the numbers used that were flagged all the same.
   */
  function explained(provenance: Provenance, pairs: Array<[string, ProviderRates]>, upTo: Day | undefined): Provenance {
    const setAside: SetAsideNumber[] = [];
    for (const [code, chosen] of pairs) {
      for (const id of orderOf(code)) {
        if (id === chosen.provider) break;
        const data = state?.data.get(id);
        const day = data && dayUpTo(data, code, upTo);
        if (day === undefined || !checkOn(day).setAside(id, code, day)) continue;
        setAside.push(flaggedNumber(checks().findingOn(id, code, day)!));
      }
    }
    const flagged = provenance.numbers.flatMap((n) => {
      const finding = checkOn(n.day).findingOn(n.provider, n.currency, n.day);
      return finding ? [flaggedNumber(finding)] : [];
    });
    return setAside.length === 0 && flagged.length === 0
      ? provenance
      : { ...provenance, ...(setAside.length > 0 ? { setAside } : {}), ...(flagged.length > 0 ? { flagged } : {}) };
  }

  function flaggedNumber(finding: CrossCheckFinding): SetAsideNumber {
    const { setAside: _, ...number } = finding;
    return { ...number, reason: describeFinding(finding, percentText) };
  }

  /** Configured families (a name and its configured providers), each one `source` slot after the providers'. */
  const families = new Map(
    [...(options.families ?? [])].map(([name, ids]) => [name, ids.filter((id) => providers.includes(id))] as const).filter(([, ids]) => ids.length > 0),
  );
  const familyNames = [...families.keys()];
  /** The providers a source stands for: itself, or a family's. */
  const membersOf = (source: string): readonly string[] => families.get(source) ?? [source];

  function parseSource(input: string): string {
    const id = input.toLowerCase();
    if (!providers.includes(id) && !families.has(id)) {
      throw new DomainError('unsupported_source', `source '${input.slice(0, 32)}' is not a configured rate provider; configured: ${providers.join(', ')}.`, {
        param: 'source',
      });
    }
    return id;
  }

  /** The cache slot of an answer: 0 without a source; a source is checked first. */
  const slotOf = (source: string | undefined) => {
    if (source === undefined) return 0;
    const id = parseSource(source);
    return families.has(id) ? providers.length + 1 + familyNames.indexOf(id) : providers.indexOf(id) + 1;
  };
  /** The source of a cache slot. */
  const sourceAt = (slot: number): string | undefined => (slot === 0 ? undefined : slot <= providers.length ? providers[slot - 1] : familyNames[slot - providers.length - 1]);

  async function sync(): Promise<void> {
    const versions = await store.dataVersions();
    const failing = new Map<string, boolean>();
    for (const provider of providers) failing.set(provider, (await store.providerState(provider))?.failing ?? false);
    const data = new Map(state?.data ?? []);
    const known = new Map(state?.versions ?? []);
    const from = retentionStart(clock, historyYears);
    const changedOn = new Set<Day>();
    for (const provider of providers) {
      const version = versions.get(provider);
      if (version === undefined || version === known.get(provider)) continue;
      const quotes = await store.allQuotes(provider, { from, to: '9999-12-31' });
      const before = data.get(provider);
      if (quotes.length > 0) data.set(provider, buildProviderRates(provider, quotes[0]!.base, quotes));
      else data.delete(provider);
      for (const day of changedDays(before, data.get(provider))) changedOn.add(day);
      known.set(provider, version);
    }
    // Revisions are few (a correction is rare): read whole on every sync, so those another process wrote show too.
    const revisions = (await Promise.all(providers.map((provider) => store.revisions(provider, { from, to: '9999-12-31' })))).flat();
    const mark = revisions.map((r) => `${r.provider} ${r.currency} ${r.day} ${r.replacedAt}`).join('|');
    if (mark !== revisedMark) {
      revised = new Map();
      for (const r of revisions) {
        const key = `${r.provider} ${r.currency} ${r.day}`;
        revised.set(key, [...(revised.get(key) ?? []), r]);
      }
      revisedMark = mark;
      generation += 1;
    }
    const dataChanged = !state || data.size !== state.data.size || [...data].some(([id, d]) => state!.data.get(id) !== d);
    const changed = dataChanged || [...failing].some(([id, f]) => state!.failing.get(id) !== f);
    state = { data, versions: known, failing, checkedAt: clock.now().getTime() };
    if (dataChanged || !checked) recheck(changedOn);
    if (changed) generation += 1;
  }

  function startSync(): Promise<void> {
    syncing ??= sync().finally(() => {
      syncing = undefined;
    });
    return syncing;
  }

  async function snapshot(): Promise<RateSnapshot> {
    if (!state || dirty) {
      dirty = false;
      try {
        await startSync();
      } catch (error) {
        dirty = true;
        throw error;
      }
    } else if (clock.now().getTime() - state.checkedAt > ttl) {
      // Serve what is held while the store is read again in the background.
      startSync().catch(() => undefined);
    }
    return state!;
  }

  function current(): boolean {
    if (!state || dirty) return false;
    if (clock.now().getTime() - state.checkedAt > ttl) startSync().catch(() => undefined);
    return true;
  }

  async function isStale(provider: string): Promise<boolean> {
    return (await snapshot()).failing.get(provider) ?? false;
  }

  /**
   * With `source`, that provider's numbers as published. Without it, an answer on a date (`upTo`),
   * or a live one or a history (its newest day), passes over a provider whose number of that day
   * the cross-check set aside.
   */
  function find(s: RateSnapshot, code: string, use: 'live' | 'history', source: string | undefined, upTo?: Day): ProviderRates | undefined {
    if (source !== undefined) {
      for (const id of membersOf(source)) {
        const data = s.data.get(id);
        if (data && (use === 'live' ? quotesNow(data, code) : hasCurrency(data, code))) return data;
      }
      return undefined;
    }
    const order = orderOf(code);
    const current = currentProviderFor(s, order, code, servable(undefined, upTo)) ?? currentProviderFor(s, order, code);
    if (current || use === 'live') return current;
    return order.map((p) => s.data.get(p)).find((d) => d !== undefined && hasCurrency(d, code));
  }

  const historyOnRequest = new Set(options.historyOnRequest ?? []);
  /** Currencies whose history a provider that keeps whole days loaded in this process ("provider code"). */
  const historyLoaded = new Set<string>();

  /**
   * Loads the history of a currency a provider holds only from its day documents, when an answer
   * needs a day before its first (`need`; undefined: all of it); true when it did. A live answer
   * needs only the newest day, which is there.
   */
  async function loadHistory(data: ProviderRates, code: string, need: Day | undefined): Promise<boolean> {
    const key = `${data.provider} ${code}`;
    if (!historyOnRequest.has(data.provider) || !options.backfill || code === data.base || historyLoaded.has(key)) return false;
    const first = daysOf(data, code)[0];
    if (first === undefined || (need !== undefined && need >= first) || historyReaches(data, code, retentionStart(clock, historyYears))) return false;
    const loaded = await options.backfill(code, data.provider);
    historyLoaded.add(key);
    return loaded;
  }

  async function sourceFor(code: string, param: string, use: 'live' | 'history', sourceInput?: string, upTo?: Day) {
    const source = sourceInput === undefined ? undefined : parseSource(sourceInput);
    let s = await snapshot();
    let data = find(s, code, use, source, upTo);
    if (!data && options.backfill && (await options.backfill(code, source))) {
      s = await snapshot();
      data = find(s, code, use, source, upTo);
    }
    if (data) return { snapshot: s, data };
    const held = (x: RateSnapshot) => (source === undefined ? x.data.size > 0 : membersOf(source).some((id) => x.data.has(id)));
    if (!held(s)) {
      // Nothing held: the store may have been filled since it was last read, by another process
      // (another worker's or instance's first refresh). Read it again before saying so.
      dirty = true;
      s = await snapshot();
      data = find(s, code, use, source, upTo);
      if (data) return { snapshot: s, data };
    }
    if (source !== undefined) {
      if (!held(s)) throw feedUnavailable(`No rates from ${source} have been loaded yet and its feed could not be reached. Try again shortly.`);
      throw new DomainError('unsupported_currency', `${code} is an ISO 4217 currency, but source ${source} does not quote it${use === 'live' ? ' now' : ''}.`, { param });
    }
    if (s.data.size === 0) throw feedUnavailable('No rates have been loaded yet and the rate feed could not be reached. Try again shortly.');
    throw new DomainError('unsupported_currency', `${code} is an ISO 4217 currency, but no configured rate provider quotes it.`, { param });
  }

  async function liveRate(fromInput: string, toInput: string, source?: string): Promise<RateQuote> {
    // The same pair is asked for again and again between refreshes: it is computed once per
    // generation, and answered from here while what is held may be served. Only valid codes are
    // ever cached, so a hit needs no validation.
    const slot = slotOf(source);
    const key = pairKey(fromInput, toInput);
    if (key !== undefined) {
      const cached = quoteCache(slot).get(key);
      if (cached && cached.generation === generation && current()) {
        if (cached.quote.stale) options.metrics?.staleServed();
        return cached.quote;
      }
    }
    return computeLive(fromInput, toInput, slot);
  }

  async function computeLive(fromInput: string, toInput: string, slot: number): Promise<RateQuote> {
    const from = parseCurrency(fromInput, 'from');
    const to = parseCurrency(toInput, 'to');
    await snapshot();
    const key = pairKey(from, to)!;
    const cached = quoteCache(slot).get(key);
    if (cached && cached.generation === generation) {
      if (cached.quote.stale) options.metrics?.staleServed();
      return cached.quote;
    }
    const quote = await computeRate(from, to, sourceAt(slot));
    quoteCache(slot).set(key, { generation, quote });
    return quote;
  }

  async function historyPair(from: string, to: string, source: string | undefined, upTo: Day | undefined, need?: Day | false) {
    const choose = async () => {
      const fromData = (await sourceFor(from, 'from', 'history', source, upTo)).data;
      const toData = (await sourceFor(to, 'to', 'history', source, upTo)).data;
      if (source !== undefined && fromData !== toData) throw acrossFamily(source, from, to);
      return sameProviderWhenPossible(fromData, from, toData, to, servable(source, upTo));
    };
    const pair = await choose();
    if (need === false) return pair;
    const loadedFrom = await loadHistory(pair.fromData, from, need);
    const loadedTo = await loadHistory(pair.toData, to, need);
    return loadedFrom || loadedTo ? choose() : pair;
  }

  /**
   * A pair with a currency replaced by today is answered through the successors at the fixed
   * ratio (never the old code's last market number); any other pair as published.
   */
  async function computeRate(from: string, to: string, source: string | undefined): Promise<RateQuote> {
    const through = throughSuccessors(from, to, today(clock));
    if (through === undefined) return computePublished(from, to, source);
    return replacedQuote(await computePublished(through.from, through.to, source, through), from, to, through);
  }

  async function computePublished(from: string, to: string, source: string | undefined, through?: ThroughSuccessors): Promise<RateQuote> {
    let fromData = (await sourceFor(from, 'from', 'live', source)).data;
    let { snapshot: s, data: toData } = await sourceFor(to, 'to', 'live', source);
    if (source !== undefined && fromData !== toData) throw acrossFamily(source, from, to);
    const checked = source === undefined;
    ({ fromData, toData } = sameProviderWhenPossible(fromData, from, toData, to, servable(source, undefined)));
    const why = (p: Provenance) => withRevisions(checked ? explained(p, [[from, fromData], [to, toData]], undefined) : p);
    const stale = (s.failing.get(fromData.provider) ?? false) || (s.failing.get(toData.provider) ?? false);
    if (stale) options.metrics?.staleServed();
    if (from === to) {
      const day = daysOf(fromData, from).at(-1)!;
      return { pair: from + to, from, to, rate: atRatio(ONE, through), asOf: fromData.asOf.get(day)!, stale, provenance: why(provenanceOf(fromData, from, fromData, to, day, undefined)) };
    }
    const bridge = bridgeCurrency(fromData, toData);
    // The newest day on which every value the cross needs was published (the same date for all, SPEC §2).
    const days = daysOf(fromData, from);
    const oldest = addDays(days.at(-1)!, -SEARCH_BACK_DAYS);
    for (let i = days.length - 1; i >= 0 && days[i]! >= oldest; i--) {
      const day = days[i]!;
      const value = rateOn(fromData, from, toData, to, day, bridge);
      if (!value || (checked && usesSetAside(fromData, from, toData, to, day, bridge))) continue;
      const asOfA = fromData.asOf.get(day)!;
      const asOfB = toData.asOf.get(day)!;
      return {
        pair: from + to,
        from,
        to,
        rate: atRatio(value, through),
        asOf: asOfA < asOfB ? asOfA : asOfB,
        stale,
        provenance: why(provenanceOf(fromData, from, toData, to, day, bridge)),
      };
    }
    throw feedUnavailable(`No day with rates for both ${from} and ${to} is stored yet.`);
  }

  /** Quotes on a date by pair and day (`datedKey`), at most CACHED_ANSWERS per slot (as quoteCaches). */
  const datedCaches: Array<LRUCache<number, { generation: number; dated: DatedQuote }>> = [];
  const datedCache = (slot: number) => (datedCaches[slot] ??= new LRUCache({ max: CACHED_ANSWERS }));
  /** A pair (pairKey) on a day (dayNumber) as one number, exact in a double (below 2⁵³). */
  const datedKey = (pair: number, day: number) => day * PAIR_KEYS + pair;

  async function rateOnDate(fromInput: string, toInput: string, date: Day, source?: string, loadHistory = true): Promise<DatedQuote> {
    // As liveRate: answered from what is held while it may be served; only valid codes are cached.
    const slot = slotOf(source);
    const pair = pairKey(fromInput, toInput);
    const day = dayNumber(date);
    if (pair !== undefined && day !== undefined) {
      const cached = datedCache(slot).get(datedKey(pair, day));
      if (cached && cached.generation === generation && current()) return cached.dated;
    }
    return computeOnDate(fromInput, toInput, date, slot, loadHistory);
  }

  /** An answer computed without loading a history (`loadHistory` false) is the same when found: only its absence differs, and that is not cached. */
  async function computeOnDate(fromInput: string, toInput: string, date: Day, slot: number, loadHistory: boolean): Promise<DatedQuote> {
    const asked = { from: parseCurrency(fromInput, 'from'), to: parseCurrency(toInput, 'to') };
    // A currency replaced by `date` is answered through its successor at the fixed ratio.
    const through = throughSuccessors(asked.from, asked.to, date);
    const { from, to } = through ?? asked;
    await snapshot();
    const held = generation;
    const source = sourceAt(slot);
    // The providers a history of the pair is served from, so that the value is that day's point.
    const { fromData, toData } = await historyPair(from, to, source, date, loadHistory ? date : false);
    const checked = source === undefined;
    const bridge = from === to ? undefined : bridgeCurrency(fromData, toData);
    const days = daysOf(fromData, from);
    for (let i = lowerBound(days, addDays(date, 1)) - 1; i >= 0; i--) {
      const day = days[i]!;
      const value = from === to ? undefined : rateOn(fromData, from, toData, to, day, bridge);
      if ((from !== to && !value) || (checked && usesSetAside(fromData, from, toData, to, day, bridge))) continue;
      const asOfA = fromData.asOf.get(day)!;
      const asOfB = toData.asOf.get(day) ?? asOfA;
      const quote: RateQuote = {
        pair: from + to,
        from,
        to,
        rate: atRatio(value ?? ONE, through),
        asOf: asOfA < asOfB ? asOfA : asOfB,
        stale: false,
        provenance: withRevisions(
          checked ? explained(provenanceOf(fromData, from, toData, to, day, bridge), [[from, fromData], [to, toData]], date) : provenanceOf(fromData, from, toData, to, day, bridge),
        ),
      };
      const closed = isClosedDay(date, utcDay(clock.now()));
      const dated = { quote: through ? replacedQuote(quote, asked.from, asked.to, through) : quote, settled: closed && date < (newestDay(fromData) ?? date) && date < (newestDay(toData) ?? date) };
      datedCache(slot).set(datedKey(pairKey(asked.from, asked.to)!, dayNumber(date)!), { generation: held, dated });
      return dated;
    }
    throw new DomainError('no_history', `No rate for ${asked.from}/${asked.to} is stored on or before ${date}.`);
  }

  async function convert(fromInput: string, toInput: string, amountInput: string, source?: string): Promise<Conversion> {
    const amount = parseAmount(amountInput);
    return convertAt(await liveRate(fromInput, toInput, source), amount);
  }

  async function apply(document: RateDocument): Promise<void> {
    if (!state) return;
    const existing = state.data.get(document.provider);
    const data = existing ?? emptyProviderRates(document.provider, document.base);
    applyDocument(data, document);
    const start = retentionStart(clock, historyYears);
    const pruned = data.days.slice(0, lowerBound(data.days, start));
    pruneProviderRates(data, start);
    state.data.set(document.provider, data);
    recheck([...document.days.map((d) => d.day), ...pruned]);
    generation += 1;
    // Our own write moved the version by one; any other change means someone else wrote too.
    const versions = await store.dataVersions();
    const version = versions.get(document.provider);
    const known = state.versions.get(document.provider);
    if (version !== undefined && (known === undefined ? !existing : version === known + 1)) state.versions.set(document.provider, version);
    else dirty = true;
  }

  return {
    liveRate,
    convert,
    rateOnDate,
    current,
    snapshot,
    sourceFor,
    historyPair,
    parseSource,
    servable,
    isStale,
    async crossCheck() {
      await snapshot();
      // What /providers and /readyz show is the whole check: the days still waiting are checked first.
      await draining;
      return { ...checks(), percent: percentText };
    },
    apply,
    invalidate() {
      dirty = true;
    },
    generation: () => generation,
    providers,
    servingOrder: orderOf,
    store,
    clock,
    historyYears,
  };
}

/** Today's date for the service, from its clock. */
export function today(clock: Clock): Day {
  return utcDay(clock.now());
}

