import type { Day } from './time.js';

/** A decimal number written as text, exactly as published or computed (never via a binary float). */
export type DecimalString = string;

/**
 * One published day of rates: `rates[quote]` is units of `quote` per one unit of the document's
 * base, as a plain decimal; or, for a provider that publishes units of its base per one unit of
 * the quote (UAH per USD), `1/` and that number as published (`1/43.2081`): its exact reciprocal.
 */
export interface DailyQuotes {
  day: Day;
  /** When the provider says these rates apply, ISO 8601 in UTC with a Z. */
  asOf: string;
  rates: Record<string, DecimalString>;
}

/** What a provider published, days in ascending order. */
export interface RateDocument {
  provider: string;
  base: string;
  days: DailyQuotes[];
}

export interface DayRange {
  from: Day;
  to: Day;
}

export interface FetchOptions {
  signal?: AbortSignal;
  /** Restrict to these quote currencies, when the provider can (wide-coverage providers). */
  currencies?: readonly string[];
}

/** An upstream source of rates. Parsers are pure; fetching happens here. */
export interface Provider {
  readonly id: string;
  /** The currency all of this provider's rates are quoted against. */
  readonly base: string;
  /** The most recent published day (or days) of rates. */
  latest(options?: FetchOptions): Promise<RateDocument>;
  /** Every published day within the range, inclusive. */
  series(range: DayRange, options?: FetchOptions): Promise<RateDocument>;
  /**
   * The first day its source publishes, where the feed documents it: a load of every year
   * (EXRATES_HISTORY_YEARS=all) starts there, and a history that reaches it is whole.
   */
  readonly firstDay?: Day;
  /**
   * True when `series` is one download whatever the range (the ECB's history file): a long load
   * is then that one request, not the parts a paced feed is loaded in (src/core/refresh.ts).
   */
  readonly seriesInOneDocument?: boolean;
  /**
   * True when its documents change only when the operator replaces them (the file provider): no
   * new day, for however long, is then no sign of a failing feed.
   */
  readonly operatorSupplied?: boolean;
  /**
   * Only on wide-coverage providers, which fetch just the currencies they are asked for: every
   * currency they can quote, so a currency nobody stores yet can be backfilled on first request.
   */
  listCurrencies?(options?: { signal?: AbortSignal }): Promise<string[]>;
  /**
   * On a wide-coverage provider whose one document of a day holds every currency it quotes
   * (Banca d'Italia): its refreshes read and keep that whole document, so each of its currencies
   * is there to compare and to serve from its first refresh on; a currency's earlier history
   * still loads on its first request for it.
   */
  readonly keepsWholeDays?: boolean;
}

export interface StoredQuote {
  provider: string;
  base: string;
  quote: string;
  day: Day;
  asOf: string;
  rate: DecimalString;
}

export interface ProviderState {
  provider: string;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
  /** True when the latest attempt failed: every rate from this provider is then served as stale. */
  failing: boolean;
}

/** A number a later document of its provider replaced: kept, with when and by what. */
export interface Revision {
  provider: string;
  base: string;
  currency: string;
  day: Day;
  /** The number as it was served. */
  rate: DecimalString;
  asOf: string;
  replacedAt: string;
  replacedBy: DecimalString;
}

/**
 * A published number the refresh's checks stopped or flagged (src/core/refresh.ts): a correction
 * of a stored number, or a move from the provider's previous day.
 */
export interface CheckedNumber {
  provider: string;
  base: string;
  currency: string;
  day: Day;
  asOf: string;
  /** The number as published. */
  rate: DecimalString;
  /** What it was compared with: the stored number of that day (a correction), or the previous day's (a move). */
  previous: DecimalString;
  kind: 'correction' | 'move';
  /** true: not stored as a rate, not served, until another provider or the next publication confirms it. */
  held: boolean;
  reason: string;
  notedAt: string;
}

/** What a refresh decided beside the rates it stores, written in the same transaction. */
export interface DocumentChecks {
  revisions: Revision[];
  /** Held or flagged numbers, each replacing any earlier one of its provider, currency and day. */
  checked: CheckedNumber[];
  /** Earlier held or flagged numbers that no longer apply (confirmed, withdrawn). */
  cleared: Array<{ currency: string; day: Day }>;
}

export interface RateStore {
  /**
   * Inserts or replaces the given days and bumps the provider's data version; returns how many
   * quotes were written. With `checks`, also keeps the revisions and held or flagged numbers. One
   * transaction.
   */
  saveDocument(document: RateDocument, checks?: DocumentChecks): Promise<number>;
  /** A provider's revisions of days within a range, oldest replacement first. */
  revisions(provider: string, range: DayRange): Promise<Revision[]>;
  /** A provider's held and flagged numbers, by day. */
  checkedNumbers(provider: string): Promise<CheckedNumber[]>;
  /** Every stored quote of a provider between two days inclusive, ascending by day. */
  allQuotes(provider: string, range: DayRange): Promise<StoredQuote[]>;
  /** The data version of every provider that has written rates. */
  dataVersions(): Promise<Map<string, number>>;
  /** The newest stored day of a provider, or null when it has none. */
  latestDay(provider: string): Promise<Day | null>;
  /** The oldest stored day of a provider, or null when it has none. */
  oldestDay(provider: string): Promise<Day | null>;
  /** All stored quotes of a provider on one day. */
  quotesOn(provider: string, day: Day): Promise<StoredQuote[]>;
  /** Stored quotes of a provider for the given currencies between two days inclusive, ascending by day. */
  series(provider: string, currencies: readonly string[], range: DayRange): Promise<StoredQuote[]>;
  /** The days within a range on which a provider published anything, ascending. */
  publishedDays(provider: string, range: DayRange): Promise<Day[]>;
  /** Deletes quotes (and their revisions and checks) older than the given day; returns how many quotes. */
  pruneBefore(day: Day): Promise<number>;
  countQuotes(): Promise<number>;
  providerState(provider: string): Promise<ProviderState | null>;
  recordAttempt(provider: string, outcome: { at: string; ok: true } | { at: string; ok: false; error: string }): Promise<void>;
}

export type Tier = 'free' | 'pro';

export interface ApiKeyRecord {
  id: string;
  prefix: string;
  tier: Tier;
  owner: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface KeyStore {
  insert(record: ApiKeyRecord & { hash: string }): Promise<void>;
  /** The record of a key's hash; a cache answers one it holds without a promise. */
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes every active key whose prefix starts with the given text; returns the revoked records. */
  revokeByPrefix(prefix: string, at: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key with this hash if it is active; returns its revoked record, or null. */
  revokeByHash(hash: string, at: string): Promise<ApiKeyRecord | null>;
  /** Changes whenever a key is revoked: a cheap way for caches to notice revocations by other processes. */
  revocationMark?(): Promise<string>;
}

/** A key's absolute count on a UTC day. */
export interface QuotaCount {
  keyId: string;
  day: Day;
  used: number;
}

/**
 * A key's daily count, one implementation per deployment (docs/operations.md, "Quota counts"):
 * counters in this process's memory over the store and a journal (one process), the main
 * process's over IPC (workers on one machine), Redis's over the store (several instances).
 */
export interface QuotaStore {
  /**
   * Counts one request for a key on a UTC day unless the count already reached the limit.
   * Atomic: concurrent callers never both take the last unit.
   */
  consume(keyId: string, day: Day, limit: number): Promise<{ allowed: boolean; used: number }>;
  used(keyId: string, day: Day): Promise<number>;
  /** Writes what is still held in memory and stops any timer. */
  close(): Promise<void>;
}

/** The stored counts that counters kept in memory start from and are folded into. */
export interface StoredQuotaCounts {
  used(keyId: string, day: Day): Promise<number>;
  /** Raises stored counts to at least `used`, never lowering one; one statement. */
  raiseMany(entries: ReadonlyArray<QuotaCount>): Promise<void>;
}

/**
 * Where counters kept in memory write their counts between folds, so that a killed process
 * forgives only the requests since its last append (src/core/quota-counters.ts).
 */
export interface QuotaJournal {
  /** Appends the counts (absolute, as counted so far) of the counters changed; resolves the append's id. Ids only grow. */
  append(entries: ReadonlyArray<QuotaCount>): Promise<number>;
  /** Forgets the appends up to `throughId`, once their counts are folded in. */
  trim(throughId: number): Promise<void>;
  /** Every count appended and not forgotten, by this process or one killed before, and how to forget them once folded in. */
  leftover(): Promise<{ counts: QuotaCount[]; drop(): Promise<void> }>;
  close(): Promise<void>;
}

/** A mutual-exclusion lock, across processes when they share one (Redis), else within this process. */
export interface Lock {
  /** Takes the named lock for at most `ttlMs`; resolves a release function, or null when someone else holds it. */
  tryAcquire(name: string, ttlMs: number): Promise<(() => Promise<void>) | null>;
  /** True while someone holds the named lock. */
  isHeld(name: string): Promise<boolean>;
}

/** What the core reports for /metrics; the adapter decides how it is exposed. */
export interface Metrics {
  refresh(provider: string, outcome: 'success' | 'failure', seconds: number): void;
  upstream(provider: string, operation: string, outcome: 'success' | 'failure', seconds: number): void;
  backfill(provider: string, outcome: 'stored' | 'failure', seconds: number): void;
  staleServed(): void;
  quotaRejected(): void;
  /** A provider's outliers at the latest cross-check: those still served, and those set aside. */
  crossCheck(provider: string, served: number, setAside: number): void;
}

export const NO_METRICS: Metrics = {
  refresh() {},
  upstream() {},
  backfill() {},
  staleServed() {},
  quotaRejected() {},
  crossCheck() {},
};

export type { Clock } from './time.js';
