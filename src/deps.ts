import type { Config } from './config.js';
import { createPresentedKeyHashes, type PresentedKeyHashes } from './core/api-keys.js';
import { createBackfill, type Backfill } from './core/backfill.js';
import { guardDependency } from './core/errors.js';
import { createCachedKeyStore } from './core/caches.js';
import { createQuotaCalendar, type QuotaCalendar } from './core/quota.js';
import { openQuotaCounters } from './core/quota-counters.js';
import { createLocalLock } from './core/local-lock.js';
import type { Clock, KeyStore, Lock, Metrics, Provider, QuotaStore, RateStore } from './core/ports.js';
import { createRateBook, type RateBook } from './core/rates.js';
import { createRefresher, type Refresher } from './core/refresher.js';
import { noRatesAdvice } from './offline-advice.js';
import { clockStartingAt, systemClock } from './core/time.js';
import { createLogger, redactedUrl, type Logger } from './log.js';
import { createMetrics, type ServiceMetrics } from './metrics.js';
import { PROVIDER_FAMILIES, providerEntry, type ProviderLog } from './providers/registry.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from './storage/database.js';
import { createKeyStore } from './storage/key-store.js';
import { quotaJournals } from './storage/quota-journal.js';
import { createQuotaStore } from './storage/quota-store.js';
import { createRateStore } from './storage/rate-store.js';
import { countRedisCommands, openRedis, type RedisClient } from './storage/redis/connection.js';
import { createRedisLock } from './storage/redis/lock.js';
import { createRedisQuotaStore } from './storage/redis/quota-store.js';

export interface Deps {
  config: Config;
  log: Logger;
  clock: Clock;
  metrics: ServiceMetrics;
  database: OpenDatabase;
  rates: RateStore;
  keys: KeyStore;
  /** The hashes of keys presented lately (authenticateApiKey). */
  keyHashes: PresentedKeyHashes;
  quotas: QuotaStore;
  /** The current UTC day for quota counting, worked out once a day (consumeDailyQuota). */
  quotaCalendar: QuotaCalendar;
  providers: readonly Provider[];
  lock: Lock;
  book: RateBook;
  refresher: Refresher;
  /** The Prometheus text of /metrics: this process's, or every worker's summed. */
  metricsText(): Promise<string>;
  close(): Promise<void>;
}

/** Known keys whose lookups are cached, at most. */
const CACHED_KEYS = 50_000;
/** How long a key the store does not know (or a revoked one) is cached: a key created a moment ago must work. */
const UNKNOWN_KEY_MS = 1_000;
/** Keys presented lately whose hashes are kept, at most. */
const PRESENTED_KEYS = 10_000;
/**
 * Without Redis, how often the quota counts changed are appended to the journal while requests
 * arrive: what a killed process may forgive. A write per request would cost several times what
 * the rest of a rate request costs on SQLite.
 */
export const QUOTA_JOURNAL_MS = 10;
/** How often a serving process checks its SQLite file (openDatabase's fault()). */
export const STORE_WATCH_MS = 1_000;
/**
 * How long a process whose store can no longer be written answers /readyz 503 before it stops:
 * long enough for a balancer that probes often to move traffic away, short enough that little is
 * counted into a store that will not keep it.
 */
export const STORE_FAULT_DRAIN_MS = 1_000;

/** The service's clock: the machine's, or one starting at EXRATES_NOW and advancing from there. */
export function createClock(start: Date | undefined): Clock {
  return start ? clockStartingAt(start) : systemClock();
}

/** Times every upstream call of a provider, for the upstream-latency metric. */
export function instrumentProvider(provider: Provider, metrics: Metrics): Provider {
  async function timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      metrics.upstream(provider.id, operation, 'success', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      metrics.upstream(provider.id, operation, 'failure', (performance.now() - started) / 1000);
      throw error;
    }
  }
  const listCurrencies = provider.listCurrencies?.bind(provider);
  return {
    id: provider.id,
    base: provider.base,
    latest: (options) => timed('latest', () => provider.latest(options)),
    series: (range, options) => timed('series', () => provider.series(range, options)),
    ...(listCurrencies ? { listCurrencies: (options?: { signal?: AbortSignal }) => timed('currencies', () => listCurrencies(options)) } : {}),
    ...(provider.keepsWholeDays ? { keepsWholeDays: true } : {}),
    ...(provider.operatorSupplied ? { operatorSupplied: true } : {}),
    ...(provider.seriesInOneDocument ? { seriesInOneDocument: true } : {}),
    ...(provider.firstDay !== undefined ? { firstDay: provider.firstDay } : {}),
  };
}

/** The configured providers, in order of preference, each made by its registry entry (src/providers/registry.ts). */
export function createProviders(config: Config, clock: Clock, log?: ProviderLog): Provider[] {
  return config.providers.map((id): Provider => {
    const entry = providerEntry(id);
    // loadConfig accepts only registered ids; this guards the type, not the input.
    if (entry === undefined) throw new Error(`no provider named ${id}`);
    return entry.create({
      baseUrl: config.providerUrls[id] ?? '',
      timeoutMs: config.upstreamTimeoutMs,
      clock,
      ...(log ? { log } : {}),
      ...(config.oxrAppId !== undefined ? { oxrAppId: config.oxrAppId } : {}),
      ...(config.fileUrl !== undefined ? { fileUrl: config.fileUrl } : {}),
    });
  });
}

export interface DepsOptions {
  log?: Logger;
  /** Apply pending migrations on open (the server and most commands do). */
  migrate?: boolean;
  /** A worker's in `main-process` quota mode (quotaMode): the main process's counters, reached over IPC. */
  quotas?: QuotaStore;
  /**
   * Fold in the quota journal a killed process left (default true). False for a command that
   * may run beside a server on the same store: the journal is that server's.
   */
  replayQuotaJournal?: boolean;
  /** A lock held elsewhere (the main process of a cluster) instead of this process's. */
  lock?: Lock;
  /** A clock other than createClock(config.now): a test's frozen one. */
  clock?: Clock;
  /** The metrics text when it is gathered elsewhere (every worker's, summed by the main process). */
  metricsText?: () => Promise<string>;
  /** Hold the SQLite file's writer lock (openDatabase): for the one process that serves it. */
  holdWriterLock?: boolean;
  /** Check the SQLite file this often (openDatabase's fault()): for processes that serve. */
  storeWatchMs?: number;
}

/** Redis at `url`, connected; a failure says where, without the password. */
export async function connectRedis(url: string, log: Logger): Promise<RedisClient> {
  try {
    return await openRedis(url, log);
  } catch (error) {
    throw new Error(`cannot connect to Redis at ${redactedUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * How a deployment counts quotas: the table in docs/operations.md ("Quota counts"), decided here
 * alone, from the configuration.
 * - `process`: one process counts in its memory, over the store and a journal (src/core/quota-counters.ts);
 * - `main-process`: workers on one machine ask their main process, which counts as one process does (src/cluster.ts);
 * - `redis`: every process (instance or worker) counts in Redis, over the store (src/storage/redis/quota-store.ts).
 */
export type QuotaMode = 'process' | 'main-process' | 'redis';

export function quotaMode(config: Pick<Config, 'redisUrl' | 'workers'>): QuotaMode {
  if (config.redisUrl) return 'redis';
  return config.workers > 1 ? 'main-process' : 'process';
}

/**
 * A process's own counters over the store (`process`, and the main process of `main-process`).
 * `replayJournal`: fold in first what a killed process left in the journal.
 */
export function openProcessQuotas(database: OpenDatabase, options: { replayJournal: boolean; log: Logger; clock: Clock }): Promise<QuotaStore> {
  const stored = guardDependency(createQuotaStore(database.db), 'the database');
  return openQuotaCounters(stored, quotaJournals(database), { flushMs: QUOTA_JOURNAL_MS, ...options });
}

/** This process's quota counts, as quotaMode says; a worker's main-process counters come in `options.quotas`. */
async function openQuotas(config: Config, database: OpenDatabase, redis: RedisClient | undefined, options: DepsOptions, log: Logger, clock: Clock): Promise<QuotaStore> {
  switch (quotaMode(config)) {
    case 'redis': {
      const store = guardDependency(createQuotaStore(database.db), 'the database');
      return guardDependency(createRedisQuotaStore({ redis: redis!, store, log, clock, prefix: config.redisPrefix }), 'the database');
    }
    case 'main-process':
      // A worker counts through its main process; a CLI command (keys, refresh…) has none, and keeps counters of its own.
      if (options.quotas) return guardDependency(options.quotas, 'the database');
      return openProcessQuotas(database, { replayJournal: options.replayQuotaJournal ?? true, log, clock });
    case 'process':
      return openProcessQuotas(database, { replayJournal: options.replayQuotaJournal ?? true, log, clock });
  }
}

/** The one place that wires the service: store, providers, clock, logger, metrics. Nothing is created at import time. */
export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  const log = options.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const clock = options.clock ?? createClock(config.now);
  const metrics = createMetrics();
  // Everything opened so far, closed newest first when a later step fails: a timer or a
  // reconnecting client left behind keeps the process alive, and it would neither serve nor exit.
  const opened: Array<() => unknown> = [];
  try {
    return await wire(config, options, { log, clock, metrics, opened });
  } catch (error) {
    await closeInReverse(opened);
    throw error;
  }
}

/** Closes newest first; every one is closed even when an earlier one fails, and the first failure is returned. */
async function closeInReverse(opened: Array<() => unknown>): Promise<unknown> {
  let failure: unknown;
  for (const close of opened.splice(0).reverse()) {
    try {
      await close();
    } catch (error) {
      failure ??= error;
    }
  }
  return failure;
}

async function wire(
  config: Config,
  options: DepsOptions,
  { log, clock, metrics, opened }: { log: Logger; clock: Clock; metrics: ServiceMetrics; opened: Array<() => unknown> },
): Promise<Deps> {
  const database = await openDatabase(config.databaseUrl, {
    ...(options.holdWriterLock ? { holdWriterLock: true } : {}),
    ...(options.storeWatchMs ? { watchMs: options.storeWatchMs } : {}),
  });
  opened.push(() => database.close());
  if (options.migrate ?? true) await migrateToLatest(database.db);
  const rates = guardDependency(createRateStore(database.db), 'the database');
  const storedKeys = guardDependency(createKeyStore(database.db), 'the database');
  const cachedKeys =
    config.keyCacheMs > 0
      ? createCachedKeyStore(storedKeys, { ttlMs: config.keyCacheMs, unknownTtlMs: UNKNOWN_KEY_MS, revocationPollMs: config.revocationPollMs, maxEntries: CACHED_KEYS, log, clock })
      : undefined;
  if (cachedKeys) opened.push(() => cachedKeys.close());
  const keys = cachedKeys ?? storedKeys;
  let lock: Lock = createLocalLock();
  let redis: RedisClient | undefined;
  if (config.redisUrl) {
    const connected = (redis = await connectRedis(config.redisUrl, log));
    opened.push(() => connected.disconnect());
    opened.push(countRedisCommands((command) => metrics.redisCommand(command)));
    lock = guardDependency(createRedisLock(redis, config.redisPrefix), 'redis');
  }
  const quotas = await openQuotas(config, database, redis, options, log, clock);
  opened.push(() => quotas.close());
  if (options.lock && !redis) lock = options.lock;
  const providers = createProviders(config, clock, log).map((p) => instrumentProvider(p, metrics));
  let backfill: Backfill | undefined;
  const book = createRateBook({
    store: rates,
    providers: providers.map((p) => p.id),
    centralBanks: providers.filter((p) => providerEntry(p.id)?.metadata.kind === 'central bank').map((p) => ({ id: p.id, base: p.base })),
    clock,
    metrics,
    crossCheckPercent: config.crossCheckPercent,
    families: PROVIDER_FAMILIES,
    backfill: (code, source) => backfill!(code, source),
    historyOnRequest: providers.filter((p) => p.keepsWholeDays).map((p) => p.id),
    historyYears: config.historyYears,
  });
  backfill = createBackfill({ providers, store: rates, book, clock, log, metrics, lock, negativeCacheMs: config.negativeCacheSeconds * 1000 });
  const refresher = createRefresher({ providers, store: rates, book, clock, log, metrics, lock, intervalSeconds: config.refreshSeconds, advice: () => noRatesAdvice(config) });
  return {
    config,
    log,
    clock,
    metrics,
    database,
    rates,
    keys,
    keyHashes: createPresentedKeyHashes(PRESENTED_KEYS),
    quotas,
    quotaCalendar: createQuotaCalendar(),
    providers,
    lock,
    book,
    refresher,
    metricsText: options.metricsText ?? (() => metrics.registry.metrics()),
    async close() {
      await refresher.stop();
      const failure = await closeInReverse(opened);
      if (failure !== undefined) throw failure;
    },
  };
}
