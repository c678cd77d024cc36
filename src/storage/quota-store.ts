import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { QuotaCount, QuotaStore } from '../core/ports.js';
import type { Day } from '../core/time.js';
import { engineOf } from './database.js';
import type { Database } from './schema.js';

/** Counts as the JSON the journal keeps and the upserts read: `[[keyId, day, used], …]`. */
export function countsJson(entries: ReadonlyArray<QuotaCount>): string {
  return JSON.stringify(entries.map((e) => [e.keyId, e.day, e.used]));
}

/**
 * The counts in the store's `quota_usage` table: the quota port itself (one conditional upsert per
 * request: what Redis falls back to), and what counters kept elsewhere write into it.
 */
export interface DatabaseQuotaStore extends QuotaStore {
  /**
   * Adds requests counted elsewhere (in Redis, by this instance): `used` is the number to add.
   * One statement, whatever the number of keys: a failure adds nothing, so the caller may add the
   * same counts again.
   */
  addMany(entries: ReadonlyArray<QuotaCount>): Promise<void>;
  /** Raises stored counts to at least `used` (never lowers one): the fold of counters kept in memory. One statement. */
  raiseMany(entries: ReadonlyArray<QuotaCount>): Promise<void>;
}

export function createQuotaStore(db: Kysely<Database>): DatabaseQuotaStore {
  // CASE rather than max()/GREATEST(): the one spelling both engines accept.
  const raised = sql<number>`CASE WHEN quota_usage.used < excluded.used THEN excluded.used ELSE quota_usage.used END`;
  const added = sql<number>`quota_usage.used + excluded.used`;
  /**
   * The rows of many counts, from one JSON parameter: one statement of the same text whatever the
   * count, so SQLite prepares it once and PostgreSQL gets one round trip. Kysely's builder would
   * build and compile a node per value (some ten microseconds a row, every fold).
   */
  const countRows =
    engineOf(db) === 'postgres'
      ? (json: string) => sql`SELECT c ->> 0, c ->> 1, (c ->> 2)::integer FROM jsonb_array_elements(${json}::jsonb) AS c`
      : // WHERE true: SQLite's grammar needs it between an INSERT's SELECT and its ON CONFLICT.
        (json: string) => sql`SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}) WHERE true`;
  /** Upserts many counts in one statement (a failure writes none of them); `onConflict` is what an existing row's count becomes. Each key and day at most once. */
  const upsertMany = async (entries: ReadonlyArray<QuotaCount>, onConflict: RawBuilder<number>): Promise<void> => {
    if (entries.length === 0) return;
    await sql`INSERT INTO quota_usage (key_id, day, used) ${countRows(countsJson(entries))} ON CONFLICT (key_id, day) DO UPDATE SET used = ${onConflict}`.execute(db);
  };

  const used = async (keyId: string, day: Day): Promise<number> => {
    const row = await db.selectFrom('quota_usage').select('used').where('key_id', '=', keyId).where('day', '=', day).executeTakeFirst();
    return row ? Number(row.used) : 0;
  };

  return {
    /**
     * One statement, so the database serialises it: the conditional upsert only increments while
     * the count is under the limit, and returns no row when the limit was already reached.
     */
    async consume(keyId: string, day: Day, limit: number) {
      const row = await db
        .insertInto('quota_usage')
        .values({ key_id: keyId, day, used: 1 })
        .onConflict((oc) =>
          oc
            .columns(['key_id', 'day'])
            .doUpdateSet({ used: sql`quota_usage.used + 1` })
            .where('quota_usage.used', '<', limit),
        )
        .returning('used')
        .executeTakeFirst();
      if (row) return { allowed: true, used: Number(row.used) };
      return { allowed: false, used: await used(keyId, day) };
    },
    used,
    addMany: (entries) => upsertMany(entries.filter((e) => e.used > 0), added),
    raiseMany: (entries) => upsertMany(entries, raised),
    close: () => Promise.resolve(),
  };
}
