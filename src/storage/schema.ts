import type { Generated } from 'kysely';

/** Tables as the query layer sees them. Booleans are integers (0/1) so one schema fits SQLite and PostgreSQL. */
export interface Database {
  rates: RatesTable;
  provider_state: ProviderStateTable;
  api_keys: ApiKeysTable;
  quota_usage: QuotaUsageTable;
  quota_journal: QuotaJournalTable;
  rate_revisions: RateRevisionsTable;
  rate_checks: RateChecksTable;
}

export interface RatesTable {
  provider: string;
  base: string;
  quote: string;
  day: string;
  as_of: string;
  /** Exactly as the provider published it. */
  rate: string;
}

/** A number a later document replaced. */
export interface RateRevisionsTable {
  provider: string;
  quote: string;
  day: string;
  base: string;
  rate: string;
  as_of: string;
  replaced_at: string;
  replaced_by: string;
}

/** A number the refresh's checks held (not in `rates`) or flagged (served). */
export interface RateChecksTable {
  provider: string;
  quote: string;
  day: string;
  base: string;
  as_of: string;
  rate: string;
  previous: string;
  kind: string;
  held: number;
  reason: string;
  noted_at: string;
}

export interface ProviderStateTable {
  provider: string;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  failing: number;
  data_version: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  prefix: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: string;
  tier: string;
  owner: string;
  created_at: string;
  revoked_at: string | null;
}

export interface QuotaUsageTable {
  key_id: string;
  day: string;
  used: Generated<number>;
}

export interface QuotaJournalTable {
  /** bigserial on PostgreSQL, which the driver returns as a string. */
  id: Generated<number | string>;
  /** JSON: `[[keyId, day, used], …]`. */
  counts: string;
}
