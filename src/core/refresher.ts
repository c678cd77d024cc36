import { otherProvidersNumbers } from './corrections.js';
import { describeFinding, parsePercent } from './cross-check.js';
import type { Clock, Lock, Metrics, Provider, RateStore } from './ports.js';
import type { RateBook } from './rates.js';
import { failureCause, syncProvider, type Logger, type SyncOutcome } from './refresh.js';

/** First retry after a failed refresh; each further failure doubles it, up to the interval. */
const RETRY_AFTER_FAILURE_MS = 15_000;

export interface RefresherOptions {
  providers: readonly Provider[];
  store: RateStore;
  book: RateBook;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  intervalSeconds: number;
  /** Shared by every instance on one store, so each scheduled refresh runs once across all of them. */
  lock: Lock;
  /** What to do when providers with nothing stored keep failing: the end of each retry's line. */
  advice?: () => string;
}

/** Failures of a retry that land within this long of the first are told in one line. */
const SUMMARY_WINDOW_MS = 2_000;

/** The same logger with its progress lines (info) moved to debug: for retries already summed up. */
function quieter(log: Logger): Logger {
  return { debug: log.debug?.bind(log), info: (obj, msg) => log.debug?.(obj, msg), warn: log.warn.bind(log), error: log.error.bind(log) };
}

export interface Refresher {
  /** Refreshes every provider at once (each on its own, so a slow or failing one blocks no other). */
  refreshAll(): Promise<SyncOutcome[]>;
  /**
   * Starts: the first refresh of every provider at once, for the current tick and taking the shared
   * lock (instances starting together refresh once), each provider then on its schedule as soon as
   * its own first refresh ends, so that a slow first load (a bank asked a day at a time) holds back
   * no other provider's refreshes. Resolves when every first refresh has ended.
   */
  start(): Promise<void>;
  refreshProvider(provider: Provider): Promise<SyncOutcome>;
  stop(): Promise<void>;
}

/** Milliseconds from `nowMs` to the next wall-clock multiple of the interval. */
export function untilNextTick(nowMs: number, intervalMs: number): number {
  return intervalMs - (nowMs % intervalMs);
}

export function createRefresher(options: RefresherOptions): Refresher {
  const intervalMs = options.intervalSeconds * 1000;
  const running = new Map<string, Promise<SyncOutcome>>();
  const failures = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  let stopped = true;
  /** Scheduled attempts of providers with nothing stored that failed, by provider: their errors. */
  const emptyFailures = new Map<string, string>();
  let summary: NodeJS.Timeout | undefined;
  /** Milliseconds until each provider's next attempt, as last scheduled. */
  const nextDelays = new Map<string, number>();
  /** Providers whose history was checked for days missing before its oldest stored one, once per process (syncProvider's deepen). */
  const deepened = new Set<string>();
  /** Findings already logged (provider, currency, day, number): each is logged once per process. */
  let logged = new Set<string>();

  /**
   * Cross-checks what is held after a refresh: a warning for each number that differs from the
   * others' median and was not warned about yet, and each provider's outlier counts as metrics.
   */
  async function crossCheckAfterRefresh(): Promise<void> {
    const check = await options.book.crossCheck();
    const now = new Set<string>();
    for (const f of check.findings) {
      const key = `${f.provider} ${f.currency} ${f.day} ${f.rate} ${f.setAside}`;
      now.add(key);
      if (logged.has(key)) continue;
      options.log.warn(
        { provider: f.provider, currency: f.currency, day: f.day, base: f.base, rate: f.rate, median: f.median, others: f.others, served: !f.setAside },
        `cross-check: ${describeFinding(f, check.percent)}`,
      );
    }
    logged = now;
    for (const provider of options.providers) {
      const own = check.findings.filter((f) => f.provider === provider.id);
      options.metrics.crossCheck(provider.id, own.filter((f) => !f.setAside).length, own.filter((f) => f.setAside).length);
    }
  }

  /**
   * The other providers' numbers as held in memory, against which a correction or a large move of
   * this provider is judged; none when they cannot be read (the refresh then judges by factor alone).
   */
  async function othersThan(provider: Provider) {
    try {
      const { percent } = await options.book.crossCheck();
      const { data } = await options.book.snapshot();
      return { numbers: otherProvidersNumbers(data.values(), provider.id, provider.base), percent: parsePercent(percent) };
    } catch {
      return undefined;
    }
  }

  /**
   * One line for every provider with nothing stored whose retry failed: which, why in a word, when
   * the next try is, and, last, what to do. Their own lines are at debug level.
   */
  function summariseEmptyFailures(): void {
    summary = undefined;
    if (emptyFailures.size === 0) return;
    const ids = options.providers.map((provider) => provider.id).filter((id) => emptyFailures.has(id));
    const causes = [...new Set([...emptyFailures.values()].map(failureCause))].join(', ');
    const delays = ids.map((id) => nextDelays.get(id)).filter((ms): ms is number => ms !== undefined);
    const next = delays.length > 0 ? `; next try in ${Math.round(Math.min(...delays) / 1000)} s` : '';
    const advice = options.advice ? `. To fix: ${options.advice()}` : '';
    options.log.warn({ providers: ids }, `still no rates from ${ids.join(', ')} (${causes})${next}${advice}`);
    emptyFailures.clear();
  }

  async function run(provider: Provider, log: Logger = options.log): Promise<SyncOutcome> {
    const started = performance.now();
    // A wide provider refreshes the currencies it holds (those backfilled so far).
    const currencies = provider.listCurrencies
      ? [...((await options.book.snapshot()).data.get(provider.id)?.series.keys() ?? [])]
      : undefined;
    const deepen = !deepened.has(provider.id);
    const outcome = await syncProvider(provider, options.store, options.clock, log, { currencies, others: await othersThan(provider), years: options.book.historyYears, deepen });
    if (outcome.ok) deepened.add(provider.id);
    const seconds = (performance.now() - started) / 1000;
    if (outcome.stored) await options.book.apply(outcome.stored);
    options.book.invalidate();
    // A failing check must not fail the refresh that stored the rates.
    await crossCheckAfterRefresh().catch((error: unknown) => options.log.error({ err: String(error) }, 'cross-check failed'));
    if (outcome.ok) {
      failures.delete(provider.id);
      if (outcome.quotes > 0 || outcome.stored) options.metrics.refresh(provider.id, 'success', seconds);
      options.log.info({ provider: provider.id, days: outcome.days, quotes: outcome.quotes, latestDay: outcome.latestDay, ms: Math.round(seconds * 1000) }, 'refresh done');
    } else {
      failures.set(provider.id, (failures.get(provider.id) ?? 0) + 1);
      options.metrics.refresh(provider.id, 'failure', seconds);
    }
    return outcome;
  }

  function refreshProvider(provider: Provider, log?: Logger): Promise<SyncOutcome> {
    let pending = running.get(provider.id);
    if (!pending) {
      pending = run(provider, log).finally(() => running.delete(provider.id));
      running.set(provider.id, pending);
    }
    return pending;
  }

  /**
   * One attempt per provider, tick and retry across every instance: the instance that takes the
   * lock named after them refreshes, the others skip and read the result from the store.
   */
  async function scheduledRefresh(provider: Provider, attempt: string): Promise<void> {
    let release: (() => Promise<void>) | null;
    try {
      release = await options.lock.tryAcquire(`refresh:${provider.id}:${attempt}`, intervalMs);
    } catch (error) {
      // Without the shared lock, refreshing here too is harmless; not refreshing would let rates age unseen.
      options.log.warn({ provider: provider.id, err: error instanceof Error ? error.message : String(error) }, 'refresh lock unavailable; refreshing anyway');
      release = async () => undefined;
    }
    if (!release) {
      options.book.invalidate();
      return;
    }
    // The first attempt at start is summed up by the start's own line; later ones of a provider
    // with nothing stored, by one line per retry.
    const empty = !attempt.endsWith(':start') && (await options.store.latestDay(provider.id)) === null;
    const alreadyTold = empty && (failures.get(provider.id) ?? 0) > 0;
    const outcome = await refreshProvider(provider, alreadyTold ? quieter(options.log) : options.log);
    if (empty && !outcome.ok) {
      emptyFailures.set(provider.id, outcome.error ?? 'failed');
      summary ??= setTimeout(summariseEmptyFailures, SUMMARY_WINDOW_MS);
      summary.unref();
    }
  }

  /*
   * Ticks are read from the machine's clock, not the service's Clock: every instance on one store
   * must name a tick alike for the shared lock to run it once (a Clock started at EXRATES_NOW is
   * offset by when each instance started), and the timers that fire them run in real time.
   */
  /** One attempt, then the provider's next one on its schedule. */
  function refreshThenSchedule(provider: Provider, attempt: string): Promise<void> {
    return scheduledRefresh(provider, attempt)
      .catch((error: unknown) => options.log.error({ provider: provider.id, err: String(error) }, 'refresh crashed'))
      .finally(() => schedule(provider));
  }

  function schedule(provider: Provider): void {
    if (stopped) return;
    const failed = failures.get(provider.id) ?? 0;
    const now = Date.now();
    const toTick = untilNextTick(now, intervalMs);
    const retry = failed > 0 && RETRY_AFTER_FAILURE_MS * 2 ** (failed - 1) < toTick;
    const delay = retry ? RETRY_AFTER_FAILURE_MS * 2 ** (failed - 1) : toTick;
    const tick = Math.floor((now + delay) / intervalMs);
    const attempt = retry ? `${tick - 1}:retry${failed}` : String(tick);
    nextDelays.set(provider.id, delay);
    const timer = setTimeout(() => void refreshThenSchedule(provider, attempt), delay);
    timer.unref();
    timers.set(provider.id, timer);
  }

  return {
    refreshAll: () => Promise.all(options.providers.map((provider) => refreshProvider(provider))),
    refreshProvider: (provider) => refreshProvider(provider),
    async start() {
      stopped = false;
      const tick = Math.floor(Date.now() / intervalMs);
      // Then each on wall-clock multiples of the interval, with backoff after failures.
      await Promise.all(options.providers.map((provider) => refreshThenSchedule(provider, `${tick}:start`)));
    },
    async stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      if (summary) clearTimeout(summary);
      summary = undefined;
      await Promise.allSettled([...running.values()]);
    },
  };
}
