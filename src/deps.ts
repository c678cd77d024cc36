import type { Config } from './config.js';
import type { Clock, KeyStore, Provider, QuotaStore, RateStore } from './core/ports.js';
import { createRateBook, type RateBook } from './core/rates.js';
import { createLogger, type Logger } from './log.js';
import { createEcbProvider } from './providers/ecb.js';
import { createFileProvider } from './providers/file.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from './storage/database.js';
import { createKeyStore } from './storage/key-store.js';
import { createQuotaStore } from './storage/quota-store.js';
import { createRateStore } from './storage/rate-store.js';

export interface Deps {
  config: Config;
  log: Logger;
  clock: Clock;
  database: OpenDatabase;
  rates: RateStore;
  keys: KeyStore;
  quotas: QuotaStore;
  providers: readonly Provider[];
  book: RateBook;
  close(): Promise<void>;
}

export function createClock(fixed: Date | undefined): Clock {
  if (fixed) {
    const at = new Date(fixed.getTime());
    return { now: () => new Date(at.getTime()) };
  }
  return { now: () => new Date() };
}

export function createProviders(config: Config, clock: Clock): Provider[] {
  return config.providers.map((id) => {
    switch (id) {
      case 'ecb':
        return createEcbProvider({ baseUrl: config.ecbUrl, timeoutMs: config.upstreamTimeoutMs, clock });
      case 'file':
        return createFileProvider({ location: config.fileUrl!, timeoutMs: config.upstreamTimeoutMs });
    }
  });
}

export interface DepsOptions {
  log?: Logger;
  /** Apply pending migrations on open (the server and most commands do). */
  migrate?: boolean;
}

/** The one place that wires the service: store, providers, clock, logger. Nothing is created at import time. */
export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = createClock(config.now);
  const database = await openDatabase(config.databaseUrl);
  try {
    if (options.migrate ?? true) await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  const rates = createRateStore(database.db);
  const providers = createProviders(config, clock);
  const book = createRateBook({ store: rates, providers: providers.map((p) => p.id), clock });
  return {
    config,
    log,
    clock,
    database,
    rates,
    keys: createKeyStore(database.db),
    quotas: createQuotaStore(database.db),
    providers,
    book,
    close: () => database.close(),
  };
}
