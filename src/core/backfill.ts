import { DomainError, FeedError } from './errors.js';
import type { Clock, Lock, Metrics, Provider, RateStore } from './ports.js';
import { historyStart, loadInParts, retentionStart, type Logger } from './refresh.js';
import { daysOf, historyReaches } from './rate-index.js';
import type { RateBook } from './rates.js';
import { addDays, utcDay } from './time.js';

/** How long a wide provider's list of currencies is trusted before it is asked again. */
const CURRENCY_LIST_TTL_MS = 3_600_000;

export interface BackfillOptions {
  providers: readonly Provider[];
  store: RateStore;
  book: RateBook;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** How long a currency nobody quotes is remembered as such. */
  negativeCacheMs: number;
  /** Shared by every instance on one store, so each currency is backfilled once across all of them. */
  lock: Lock;
}

/** Longest a backfill may hold its lock; a holder that dies frees it after this. */
const BACKFILL_LOCK_MS = 120_000;
/** How long a request waits for another instance's backfill of the same currency. */
const WAIT_FOR_OTHERS_MS = 60_000;
const POLL_MS = 200;

/** With a source (a wide-coverage provider's id), the currency is loaded from that provider even when another has it. */
export type Backfill = (code: string, source?: string) => Promise<boolean>;

/**
 * Loads the retained history of a currency that no stored provider has yet, from the first
 * wide-coverage provider that quotes it (SPEC §4). Concurrent first requests for one currency
 * share one backfill; a currency nobody quotes is remembered for a while, so repeated requests
 * for it make no upstream calls. Resolves true when the currency is now stored.
 */
export function createBackfill(options: BackfillOptions): Backfill {
  const wide = options.providers.filter((p) => p.listCurrencies !== undefined);
  const wholeDays = new Set(wide.filter((p) => p.keepsWholeDays).map((p) => p.id));
  const inFlight = new Map<string, Promise<boolean>>();
  const unsupportedUntil = new Map<string, number>();
  const lists = new Map<string, { at: number; codes: Promise<Set<string>> }>();

  function currenciesOf(provider: Provider): Promise<Set<string>> {
    const cached = lists.get(provider.id);
    if (cached && options.clock.now().getTime() - cached.at < CURRENCY_LIST_TTL_MS) return cached.codes;
    const codes = provider.listCurrencies!().then((list) => new Set(list));
    lists.set(provider.id, { at: options.clock.now().getTime(), codes });
    codes.catch(() => lists.delete(provider.id));
    return codes;
  }

  /** Stored: its history, for a provider that keeps whole days (whose day documents hold every currency); else any of it. */
  async function stored(code: string, source: string | undefined): Promise<boolean> {
    options.book.invalidate();
    const snapshot = await options.book.snapshot();
    const from = retentionStart(options.clock, options.book.historyYears);
    return [...snapshot.data.values()].some(
      (d) => (source === undefined || d.provider === source) && (d.base === code || (wholeDays.has(d.provider) ? historyReaches(d, code, from) : d.series.has(code))),
    );
  }

  /** Runs the backfill under the shared lock, or waits for the instance that holds it. */
  async function run(code: string, source: string | undefined, key: string): Promise<boolean> {
    // How long this request waits, on the monotonic clock: it bounds real sleeps below, which a
    // frozen or replayed Clock would never end.
    const deadline = performance.now() + WAIT_FOR_OTHERS_MS;
    for (;;) {
      let release: (() => Promise<void>) | null;
      try {
        release = await options.lock.tryAcquire(`backfill:${key}`, BACKFILL_LOCK_MS);
      } catch {
        // Without the shared lock, this instance backfills alone: at worst the same series is fetched twice.
        return fetchAndStore(code, source, key);
      }
      if (release) {
        try {
          // Another instance may have finished while this one waited for the lock.
          if (await stored(code, source)) return true;
          return await fetchAndStore(code, source, key);
        } finally {
          await release();
        }
      }
      while (await options.lock.isHeld(`backfill:${key}`).catch(() => false)) {
        if (performance.now() > deadline) {
          throw new DomainError('feed_unavailable', `${code} is being loaded; try again shortly.`, { retryAfterSeconds: 10 });
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (await stored(code, source)) return true;
    }
  }

  async function fetchAndStore(code: string, source: string | undefined, key: string): Promise<boolean> {
    let upstreamFailure: unknown;
    for (const provider of wide) {
      if (source !== undefined && provider.id !== source) continue;
      const started = performance.now();
      try {
        if (!(await currenciesOf(provider)).has(code)) continue;
        const today = utcDay(options.clock.now());
        options.log.info({ provider: provider.id, currency: code }, 'backfilling a currency on first request');
        // A provider that keeps whole days holds the currency's newest days from its day documents:
        // only the days before them load, and a history loaded before (by an earlier process) ends
        // at the first part with nothing in it.
        const data = wholeDays.has(provider.id) ? (await options.book.snapshot()).data.get(provider.id) : undefined;
        const held = data ? daysOf(data, code)[0] : undefined;
        const range = { from: historyStart(provider, options.clock, options.book.historyYears), to: held === undefined ? today : addDays(held, -1) };
        // A series of the one currency asked for, beside the provider's other currencies, in parts for a long one.
        const storing = { expectedCurrencies: [code], years: options.book.historyYears, first: held === undefined };
        const outcome = range.from <= range.to ? await loadInParts(provider, range, options.store, options.clock, options.log, storing) : undefined;
        if (outcome) await options.book.apply(outcome.stored);
        // The provider lists the currency but sent no rates: a feed failure, not an unsupported currency.
        else if (held === undefined) throw new FeedError(`${provider.id} lists ${code} but returned no rates for it`);
        const seconds = (performance.now() - started) / 1000;
        options.metrics.backfill(provider.id, 'stored', seconds);
        options.log.info({ provider: provider.id, currency: code, days: outcome?.days ?? 0, ms: Math.round(seconds * 1000) }, 'backfill stored');
        return true;
      } catch (error) {
        options.metrics.backfill(provider.id, 'failure', (performance.now() - started) / 1000);
        options.log.warn({ provider: provider.id, currency: code, err: error instanceof Error ? error.message : String(error) }, 'backfill failed');
        upstreamFailure = error;
      }
    }
    if (upstreamFailure !== undefined) {
      throw new DomainError('feed_unavailable', `${code} is not stored yet and its rate feed could not be reached. Try again shortly.`, {
        retryAfterSeconds: 30,
        cause: upstreamFailure,
      });
    }
    unsupportedUntil.set(key, options.clock.now().getTime() + options.negativeCacheMs);
    return false;
  }

  return async function backfill(code: string, source?: string): Promise<boolean> {
    if (!wide.some((p) => source === undefined || p.id === source)) return false;
    const key = source === undefined ? code : `${code}@${source}`;
    const until = unsupportedUntil.get(key);
    if (until !== undefined) {
      if (options.clock.now().getTime() < until) return false;
      unsupportedUntil.delete(key);
    }
    let pending = inFlight.get(key);
    if (!pending) {
      pending = run(code, source, key).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
}
