import { checkDocument, PREVIOUS_WITHIN_DAYS, type CheckEvent, type OtherNumbers } from './corrections.js';
import { isoCurrency } from './currencies.js';
import { parseRate, type Rational } from './decimal.js';
import { FeedError } from './errors.js';
import type { Clock, DailyQuotes, DayRange, Provider, RateDocument, RateStore } from './ports.js';
import { DEFAULT_HISTORY_YEARS, retainedFrom, type HistoryYears } from './retention.js';
import { reaches } from './rate-index.js';
import { addDays, isDay, utcDay, type Day } from './time.js';

/** A latest document with fewer than this share of yesterday's currencies is treated as partial. */
const PARTIAL_SHARE = 0.5;
/** Past this gap since the newest stored day, a refresh asks for a series instead of the latest day. */
const LATEST_ONLY_WITHIN_DAYS = 4;
/** The longest a provider that publishes every working day may publish nothing (Easter's four days, with room) before that counts as a failure. */
const QUIET_DAYS = 7;

export interface Logger {
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * A refresh error as the console shows it: each URL by its host alone (the path and query, often
 * hundreds of characters, stay in the debug log; /readyz shows the path).
 */
export function shortError(message: string): string {
  return message.replace(/\bhttps?:\/\/([^\s/?#]+)[^\s]*/gi, (url: string, host: string) => `${host}${/[:,;.)]+$/.exec(url)?.[0] ?? ''}`);
}

/** The cause of a failed fetch in a word or two (ENOTFOUND, HTTP 503, timed out), or the short error. */
export function failureCause(message: string): string {
  const short = shortError(message);
  const code = /\b(E[A-Z]{2,}(?:_[A-Z]+)+|E[A-Z]{3,}|HTTP \d{3})\b/.exec(short);
  return code ? code[1]! : short;
}

/** The oldest day kept on the clock's today: EXRATES_HISTORY_YEARS and a month of margin (src/core/retention.ts); older days are pruned. */
export function retentionStart(clock: Clock, years: HistoryYears): Day {
  return retainedFrom(utcDay(clock.now()), years);
}

/** The first day a provider's history loads from: the retention start, or the provider's first day when later. */
export function historyStart(provider: Provider, clock: Clock, years: HistoryYears): Day {
  const start = retentionStart(clock, years);
  return provider.firstDay !== undefined && provider.firstDay > start ? provider.firstDay : start;
}

export interface ValidationReport {
  document: RateDocument;
  /** Entries dropped because their currency is not ISO 4217 (withdrawn codes and the like). */
  dropped: string[];
}

/**
 * Checks a document before anything of it is stored: real dates not in the future, ISO codes,
 * positive plain decimals. Any bad value rejects the whole document; codes ISO 4217 does not know,
 * and numbers of a withdrawn code dated from its withdrawal on, are dropped and reported: a
 * withdrawn currency's history is kept as published, its later days are served through its
 * successor (src/core/replaced-currencies.ts). A rate is a plain decimal or the reciprocal of one
 * (parseRate).
 */
export function validateDocument(document: RateDocument, clock: Clock): ValidationReport {
  const todayDay = utcDay(clock.now());
  const dropped = new Set<string>();
  const days: DailyQuotes[] = [];
  let previous = '';
  for (const day of document.days) {
    if (!isDay(day.day)) throw new FeedError(`${document.provider}: '${day.day}' is not a calendar date`);
    if (day.day > todayDay) throw new FeedError(`${document.provider}: rates dated ${day.day} are in the future (today is ${todayDay})`);
    if (day.day <= previous) throw new FeedError(`${document.provider}: days out of order or repeated at ${day.day}`);
    previous = day.day;
    const rates: Record<string, string> = {};
    for (const [code, text] of Object.entries(day.rates)) {
      const value = parseRate(text);
      if (!value || value.num <= 0n) throw new FeedError(`${document.provider}: ${code} on ${day.day} has implausible rate '${text}'`);
      const currency = isoCurrency(code);
      if (!currency || code === document.base || (currency.withdrawn !== undefined && day.day >= currency.withdrawn)) {
        dropped.add(code);
        continue;
      }
      rates[code] = text;
    }
    if (Object.keys(rates).length > 0) days.push({ ...day, rates });
  }
  if (days.length === 0) throw new FeedError(`${document.provider}: the document holds no usable rates`);
  return { document: { ...document, days }, dropped: [...dropped].sort() };
}

export interface SyncOutcome {
  provider: string;
  ok: boolean;
  /** Days and quotes written to the store. */
  days: number;
  quotes: number;
  latestDay: Day | null;
  error?: string;
  /** What was stored, for the in-memory rates to merge. */
  stored?: RateDocument;
}

export interface SyncOptions {
  /** For wide-coverage providers: the currencies to fetch (those already stored for them). */
  currencies?: readonly string[];
  /** Other providers' numbers, and the cross-check's threshold in percent, for judging corrections and moves. */
  others?: { numbers: OtherNumbers; percent: Rational };
  /** EXRATES_HISTORY_YEARS; default 5. */
  years?: HistoryYears;
  /**
   * Also load what is missing before the oldest stored day, back to the history start: a load cut
   * short by a restart, or a setting raised since. The refresher asks once per process.
   */
  deepen?: boolean;
}

/**
 * Brings one provider's stored rates up to date: the retained history on an empty store, only
 * what is new after that, and (`deepen`) what is missing before the oldest stored day. Failures
 * are recorded (the provider's rates then read as stale) and leave the store as it was; a long
 * history load keeps each part it stored (loadInParts).
 */
export async function syncProvider(provider: Provider, store: RateStore, clock: Clock, log: Logger, options: SyncOptions = {}): Promise<SyncOutcome> {
  const at = clock.now().toISOString();
  const todayDay = utcDay(clock.now());
  const years = options.years ?? DEFAULT_HISTORY_YEARS;
  const start = historyStart(provider, clock, years);
  // A wide-coverage provider fetches only the currencies backfilled so far; with none, it has
  // nothing to do. One that keeps whole days reads its day documents, each of every currency.
  const whole = provider.keepsWholeDays === true;
  const currencies = provider.listCurrencies !== undefined && !whole ? [...(options.currencies ?? [])].sort() : undefined;
  if (currencies && currencies.length === 0) return { provider: provider.id, ok: true, days: 0, quotes: 0, latestDay: null };
  const storing = { expectedCurrencies: currencies, years, ...(options.others ? { others: options.others } : {}) };
  let newest: Day | null = null;
  try {
    newest = await store.latestDay(provider.id);
    let outcome: Awaited<ReturnType<typeof storeDocument>>;
    if (newest === null && whole) {
      // Its history loads currency by currency, when a request needs it; a refresh starts from today's document.
      outcome = await storeDocument(await provider.latest(), store, clock, log, storing);
    } else if (newest === null) {
      const loaded = await whileLoadingHistory(provider.id, start, log, () => loadInParts(provider, { from: start, to: todayDay }, store, clock, log, { ...storing, first: true }));
      if (!loaded) throw new FeedError(`${provider.id}: no rates published from ${start} to ${todayDay}`);
      outcome = loaded;
    } else {
      let document: RateDocument;
      if (newest >= addDays(todayDay, -LATEST_ONLY_WITHIN_DAYS)) {
        document = await provider.latest({ currencies });
      } else {
        const since = await provider.series({ from: addDays(newest, 1), to: todayDay }, { currencies });
        document = since.days.length > 0 ? since : await nothingNewSince(provider, newest, todayDay, currencies);
      }
      outcome = await storeDocument(document, store, clock, log, storing);
    }
    await store.recordAttempt(provider.id, { at, ok: true });
    const deeper = options.deepen && newest !== null && !whole ? await deepen(provider, start, store, clock, log, storing) : undefined;
    return { provider: provider.id, ok: true, ...(deeper ? joinOutcomes([deeper, outcome]) : outcome) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The whole message, with the URL asked, in the debug log; the console gets the short one. A
    // provider with nothing stored is summed up by whoever started the refresh (the start line,
    // one line per retry, the command's own report), not one warning each.
    log.debug?.({ provider: provider.id, err: message }, 'refresh failed');
    if (newest !== null) log.warn({ provider: provider.id, err: shortError(message) }, 'refresh failed; serving stored rates as stale');
    try {
      await store.recordAttempt(provider.id, { at, ok: false, error: message });
    } catch (stateError) {
      log.error({ provider: provider.id, err: String(stateError) }, 'could not record the failed refresh');
    }
    return { provider: provider.id, ok: false, days: 0, quotes: 0, latestDay: null, error: message };
  }
}

/**
 * Loads the days missing before a provider's oldest stored one, back to `start`, when its history
 * does not reach there: the rest of a load a restart cut short, or the years a raised
 * EXRATES_HISTORY_YEARS adds. The start log says where it continues. A failure here is a warning:
 * the provider's recent rates are stored and current, and the next start tries again.
 */
async function deepen(provider: Provider, start: Day, store: RateStore, clock: Clock, log: Logger, storing: StoreOptions): Promise<StoredOutcome | undefined> {
  const oldest = await store.oldestDay(provider.id);
  if (oldest === null || reaches(oldest, start)) return undefined;
  log.info({ provider: provider.id, from: start, storedFrom: oldest }, `history of ${provider.id} stored from ${oldest}: continuing the load back to ${start}`);
  try {
    const outcome = await whileLoadingHistory(provider.id, start, log, () => loadInParts(provider, { from: start, to: addDays(oldest, -1) }, store, clock, log, { ...storing, first: false }));
    if (!outcome) log.info({ provider: provider.id, storedFrom: oldest }, `${provider.id} publishes nothing before ${oldest}: its history is whole`);
    return outcome;
  } catch (error) {
    log.warn({ provider: provider.id, err: shortError(error instanceof Error ? error.message : String(error)) }, 'history load stopped; it continues at the next start');
    return undefined;
  }
}

/** A part of a long history load: the interface's five years and their month of margin, one stored document each. */
const PART_YEARS = DEFAULT_HISTORY_YEARS;

type StoreOptions = NonNullable<Parameters<typeof storeDocument>[4]>;
type StoredOutcome = Awaited<ReturnType<typeof storeDocument>>;

/**
 * Loads a range of history newest part first, each part (five years) fetched and stored on its
 * own, so that a load cut short keeps what it stored and continues before its oldest day (deepen).
 * A provider whose series is one download (the ECB's file) loads the range at once. Going back,
 * a part with no days after one with days ends the load: the feed starts there. On a first load
 * (`first`), parts with no days before any with days are passed over (a currency's feed that ended
 * years ago); when deepening, the first empty part ends it. Undefined when no part had days.
 */
export async function loadInParts(
  provider: Provider,
  range: DayRange,
  store: RateStore,
  clock: Clock,
  log: Logger,
  options: StoreOptions & { first: boolean },
): Promise<StoredOutcome | undefined> {
  const { first, ...storing } = options;
  const currencies = storing.expectedCurrencies;
  if (provider.seriesInOneDocument) {
    const document = await provider.series(range, { currencies });
    return document.days.length > 0 ? storeDocument(document, store, clock, log, storing) : undefined;
  }
  const outcomes: StoredOutcome[] = [];
  for (let to = range.to; to >= range.from; ) {
    const from = maxDay(range.from, retainedFrom(to, PART_YEARS));
    const document = await provider.series({ from, to }, { currencies });
    if (document.days.length > 0) {
      outcomes.push(await storeDocument(document, store, clock, log, storing));
      if (from > range.from) log.info({ provider: provider.id, from, to, days: document.days.length }, 'history part stored');
    } else if (outcomes.length > 0 || !first) {
      break;
    }
    to = addDays(from, -1);
  }
  return outcomes.length > 0 ? joinOutcomes(outcomes) : undefined;
}

function maxDay(a: Day, b: Day): Day {
  return a > b ? a : b;
}

/** Several stored parts as one outcome: their counts summed, the newest day, every stored day ascending. */
function joinOutcomes(outcomes: readonly StoredOutcome[]): StoredOutcome {
  const [head] = outcomes;
  const days = outcomes.flatMap((o) => o.stored.days).sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  const latest = outcomes.map((o) => o.latestDay).filter((d): d is Day => d !== null).sort().at(-1) ?? null;
  return {
    days: outcomes.reduce((sum, o) => sum + o.days, 0),
    quotes: outcomes.reduce((sum, o) => sum + o.quotes, 0),
    latestDay: latest,
    stored: { ...head!.stored, days },
  };
}

/**
 * A catch-up series with no day after the newest stored one: the provider has published nothing
 * since. Within QUIET_DAYS (Easter's four days without a fixing) or for a file the operator
 * supplies, that is no failure that should mark every rate of the provider stale: its latest
 * document is checked and stored as on any refresh, provided it is that same newest day (a later
 * one would leave the days between missing for good, an earlier one would go backwards). Past
 * QUIET_DAYS, a feed that publishes nothing has stopped.
 */
async function nothingNewSince(provider: Provider, newest: Day, todayDay: Day, currencies: readonly string[] | undefined): Promise<RateDocument> {
  if (!provider.operatorSupplied && newest < addDays(todayDay, -QUIET_DAYS)) throw new FeedError(`${provider.id}: nothing published since ${newest}`);
  const latest = await provider.latest({ currencies });
  const day = latest.days.at(-1)?.day;
  if (day !== newest) throw new FeedError(`${provider.id}: its series has no day after ${newest}, but its latest document is dated ${day ?? 'no day'}`);
  return latest;
}

/** How often a first history load (a download of years of rates) says it is still at work. */
const PROGRESS_EVERY_MS = 10_000;

async function whileLoadingHistory<T>(provider: string, from: Day, log: Logger, load: () => Promise<T>): Promise<T> {
  // Elapsed time on the monotonic clock: a duration to report, not a time of day, so the injected Clock (frozen in tests) has no say.
  const started = performance.now();
  log.info({ provider, from }, 'loading history');
  const timer = setInterval(() => {
    log.info({ provider, from, seconds: Math.round((performance.now() - started) / 1000) }, 'still loading history');
  }, PROGRESS_EVERY_MS);
  timer.unref();
  try {
    return await load();
  } finally {
    clearInterval(timer);
  }
}

/** Events logged one by one per document; past this, one line says how many more (a first load of years may flag many moves). */
const EVENTS_LOGGED = 20;

function logEvents(provider: string, events: readonly CheckEvent[], log: Logger): void {
  for (const e of events.slice(0, EVENTS_LOGGED)) {
    log[e.level]({ provider, currency: e.currency, day: e.day, rate: e.rate, ...(e.previous !== undefined ? { previous: e.previous } : {}) }, e.message);
  }
  if (events.length > EVENTS_LOGGED) {
    log.warn({ provider, more: events.length - EVENTS_LOGGED }, 'more numbers corrected, held or flagged than logged one by one; /api/v1/providers lists them');
  }
}

/**
 * Validates and stores a document. A refresh keeps only retained days and prunes older ones; an
 * import (`onlyAdd`) stores every day of its file and removes nothing, since its clock need not be
 * the server's (a server replaying archived data with EXRATES_NOW still serves days that the real
 * clock would prune). Every number goes through the checks of src/core/corrections.ts first: a
 * changed number is stored as a correction or held, an implausible move held or flagged.
 */
export async function storeDocument(
  document: RateDocument,
  store: RateStore,
  clock: Clock,
  log: Logger,
  options: { expectedCurrencies?: readonly string[] | undefined; onlyAdd?: boolean; others?: { numbers: OtherNumbers; percent: Rational }; years?: HistoryYears } = {},
): Promise<{ days: number; quotes: number; latestDay: Day | null; stored: RateDocument }> {
  const { document: valid, dropped } = validateDocument(document, clock);
  if (dropped.length > 0) log.info({ provider: document.provider, dropped }, 'skipped codes that are not in the ISO 4217 list the service serves');
  const start = retentionStart(clock, options.years ?? DEFAULT_HISTORY_YEARS);
  const kept = options.onlyAdd ? valid.days : valid.days.filter((d) => d.day >= start);
  const newestStored = await store.latestDay(valid.provider);
  const newestIncoming = kept[kept.length - 1];
  if (options.expectedCurrencies) {
    // Wide providers answer for the currencies asked, each on its own latest date: count those.
    const present = new Set(kept.flatMap((d) => Object.keys(d.rates)));
    if (present.size < options.expectedCurrencies.length * PARTIAL_SHARE) {
      throw new FeedError(
        `${valid.provider}: answered for ${present.size} of the ${options.expectedCurrencies.length} currencies asked; refusing a partial document`,
      );
    }
  } else if (newestStored !== null && newestIncoming && newestIncoming.day >= newestStored) {
    const previous = await store.quotesOn(valid.provider, newestStored);
    const count = Object.keys(newestIncoming.rates).length;
    if (previous.length > 0 && count < previous.length * PARTIAL_SHARE) {
      throw new FeedError(
        `${valid.provider}: ${newestIncoming.day} lists ${count} currencies against ${previous.length} on ${newestStored}; refusing a partial document`,
      );
    }
  }
  const first = kept[0];
  const checked = checkDocument({
    document: { ...valid, days: kept },
    stored: first && newestIncoming ? await store.allQuotes(valid.provider, { from: addDays(first.day, -PREVIOUS_WITHIN_DAYS), to: newestIncoming.day }) : [],
    checked: await store.checkedNumbers(valid.provider),
    ...(options.others ? { others: options.others } : {}),
    today: utcDay(clock.now()),
    at: clock.now().toISOString(),
  });
  logEvents(valid.provider, checked.events, log);
  const stored = checked.document;
  const quotes = await store.saveDocument(stored, checked.checks);
  if (!options.onlyAdd) await store.pruneBefore(start);
  return { days: kept.length, quotes, latestDay: newestIncoming?.day ?? newestStored, stored };
}
