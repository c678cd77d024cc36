import { checkDocument, PREVIOUS_WITHIN_DAYS, type CheckEvent, type OtherNumbers } from './corrections.js';
import { isoCurrency } from './currencies.js';
import { parseRate, type Rational } from './decimal.js';
import { FeedError } from './errors.js';
import type { Clock, DailyQuotes, Provider, RateDocument, RateStore } from './ports.js';
import { addDays, isDay, subtractMonths, utcDay, type Day } from './time.js';

/** History is kept for 5 years plus a month of margin (SPEC §5); older days are pruned. */
export const RETENTION_MONTHS = 61;
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

export function retentionStart(clock: Clock): Day {
  return subtractMonths(utcDay(clock.now()), RETENTION_MONTHS);
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
}

/**
 * Brings one provider's stored rates up to date: the retained history on an empty store, only
 * what is new after that. Failures are recorded (the provider's rates then read as stale) and
 * leave the store as it was.
 */
export async function syncProvider(provider: Provider, store: RateStore, clock: Clock, log: Logger, options: SyncOptions = {}): Promise<SyncOutcome> {
  const at = clock.now().toISOString();
  const todayDay = utcDay(clock.now());
  const start = retentionStart(clock);
  // A wide-coverage provider fetches only the currencies backfilled so far; with none, it has
  // nothing to do. One that keeps whole days reads its day documents, each of every currency.
  const whole = provider.keepsWholeDays === true;
  const currencies = provider.listCurrencies !== undefined && !whole ? [...(options.currencies ?? [])].sort() : undefined;
  if (currencies && currencies.length === 0) return { provider: provider.id, ok: true, days: 0, quotes: 0, latestDay: null };
  let newest: Day | null = null;
  try {
    newest = await store.latestDay(provider.id);
    let document: RateDocument;
    if (newest === null && whole) {
      // Its history loads currency by currency, when a request needs it; a refresh starts from today's document.
      document = await provider.latest();
    } else if (newest === null) {
      document = await whileLoadingHistory(provider.id, start, log, () => provider.series({ from: start, to: todayDay }, { currencies }));
    } else if (newest >= addDays(todayDay, -LATEST_ONLY_WITHIN_DAYS)) {
      document = await provider.latest({ currencies });
    } else {
      const since = await provider.series({ from: addDays(newest, 1), to: todayDay }, { currencies });
      document = since.days.length > 0 ? since : await nothingNewSince(provider, newest, todayDay, currencies);
    }
    const outcome = await storeDocument(document, store, clock, log, { expectedCurrencies: currencies, ...(options.others ? { others: options.others } : {}) });
    await store.recordAttempt(provider.id, { at, ok: true });
    return { provider: provider.id, ok: true, ...outcome };
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
  options: { expectedCurrencies?: readonly string[]; onlyAdd?: boolean; others?: { numbers: OtherNumbers; percent: Rational } } = {},
): Promise<{ days: number; quotes: number; latestDay: Day | null; stored: RateDocument }> {
  const { document: valid, dropped } = validateDocument(document, clock);
  if (dropped.length > 0) log.info({ provider: document.provider, dropped }, 'skipped codes that are not in the ISO 4217 list the service serves');
  const start = retentionStart(clock);
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
