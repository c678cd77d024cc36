import { sql } from 'kysely';
import type { QuotaCount, QuotaStore } from '../core/ports.js';
import type { Day } from '../core/time.js';
import type { OpenDatabase } from './database.js';

/** The stored counts: the quota port, and what Redis adds to them (src/storage/redis.ts). */
export interface DatabaseQuotaStore extends QuotaStore {
  /**
   * Adds requests counted elsewhere (in Redis, by this instance) to the stored counts: `used` is
   * the number to add. One statement, whatever the number of keys: a failure adds nothing, so the
   * caller may add the same counts again.
   */
  addMany(entries: ReadonlyArray<QuotaCount>): Promise<void>;
}

/** The one conditional upsert: counts a request only while the count is under the limit; no row when it was reached. */
const CONSUME = `INSERT INTO quota_usage (key_id, day, used) VALUES (?, ?, 1)
  ON CONFLICT (key_id, day) DO UPDATE SET used = quota_usage.used + 1 WHERE quota_usage.used < ? RETURNING used`;
const USED = 'SELECT used FROM quota_usage WHERE key_id = ? AND day = ?';

/**
 * The quota counts in the store, one write per counted request: a request answered is a count
 * committed (on SQLite in WAL mode, committed survives a killed process), so a kill loses none.
 * One statement, so the database serialises concurrent callers and never lets two take the last
 * unit.
 *
 * On SQLite the statement runs on the connection itself and answers at once: through Kysely each
 * request would also pay a compiled query and several promises. While one of Kysely's
 * transactions is open on that connection (a refresh writing rates), a statement run there would
 * join it, and a rollback would undo the count: the count then goes through Kysely, which runs it
 * after the transaction.
 */
export function createQuotaStore(database: OpenDatabase): DatabaseQuotaStore {
  const { db } = database;
  const viaKysely = async (keyId: string, day: Day, limit: number) => {
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
  };
  const used = async (keyId: string, day: Day): Promise<number> => {
    const row = await db.selectFrom('quota_usage').select('used').where('key_id', '=', keyId).where('day', '=', day).executeTakeFirst();
    return row ? Number(row.used) : 0;
  };

  const sqlite = database.sqlite;
  const consume: QuotaStore['consume'] = sqlite
    ? (() => {
        // Prepared at the first request: the store may not be migrated yet when this is made.
        let statements: { upsert: ReturnType<typeof sqlite.prepare>; read: ReturnType<typeof sqlite.prepare> } | undefined;
        return (keyId: string, day: Day, limit: number) => {
          if (sqlite.inTransaction) return viaKysely(keyId, day, limit);
          const { upsert, read } = (statements ??= { upsert: sqlite.prepare(CONSUME), read: sqlite.prepare(USED) });
          const row = upsert.get(keyId, day, limit) as { used: number } | undefined;
          if (row) return { allowed: true, used: row.used };
          return { allowed: false, used: (read.get(keyId, day) as { used: number } | undefined)?.used ?? 0 };
        };
      })()
    : viaKysely;

  // The rows of many counts from one JSON parameter: one statement of the same text whatever the
  // count, so SQLite prepares it once and PostgreSQL gets one round trip.
  const countRows =
    database.engine === 'postgres'
      ? (json: string) => sql`SELECT c ->> 0, c ->> 1, (c ->> 2)::integer FROM jsonb_array_elements(${json}::jsonb) AS c`
      : // WHERE true: SQLite's grammar needs it between an INSERT's SELECT and its ON CONFLICT.
        (json: string) => sql`SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}) WHERE true`;

  return {
    consume,
    used,
    async addMany(entries) {
      const counts = entries.filter((e) => e.used > 0).map((e) => [e.keyId, e.day, e.used]);
      if (counts.length === 0) return;
      await sql`INSERT INTO quota_usage (key_id, day, used) ${countRows(JSON.stringify(counts))}
        ON CONFLICT (key_id, day) DO UPDATE SET used = quota_usage.used + excluded.used`.execute(db);
    },
    close: () => Promise.resolve(),
  };
}
