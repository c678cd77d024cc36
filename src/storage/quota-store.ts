import { sql, type Kysely } from 'kysely';
import type { QuotaStore } from '../core/ports.js';
import type { Day } from '../core/time.js';
import type { Database } from './schema.js';

export function createQuotaStore(db: Kysely<Database>): QuotaStore & Required<Pick<QuotaStore, 'record' | 'add' | 'recordMany'>> {
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
      return { allowed: false, used: await this.used(keyId, day) };
    },

    async add(keyId: string, day: Day, count: number): Promise<void> {
      if (count <= 0) return;
      await db
        .insertInto('quota_usage')
        .values({ key_id: keyId, day, used: count })
        .onConflict((oc) => oc.columns(['key_id', 'day']).doUpdateSet({ used: sql`quota_usage.used + ${count}` }))
        .execute();
    },

    async recordMany(entries): Promise<void> {
      if (entries.length === 0) return;
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < entries.length; i += 300) {
          await trx
            .insertInto('quota_usage')
            .values(entries.slice(i, i + 300).map((e) => ({ key_id: e.keyId, day: e.day, used: e.used })))
            .onConflict((oc) =>
              oc.columns(['key_id', 'day']).doUpdateSet({
                used: sql`CASE WHEN quota_usage.used < excluded.used THEN excluded.used ELSE quota_usage.used END`,
              }),
            )
            .execute();
        }
      });
    },

    async record(keyId: string, day: Day, used: number): Promise<void> {
      // CASE rather than max()/GREATEST(): the one spelling both engines accept.
      await db
        .insertInto('quota_usage')
        .values({ key_id: keyId, day, used })
        .onConflict((oc) =>
          oc.columns(['key_id', 'day']).doUpdateSet({
            used: sql`CASE WHEN quota_usage.used < excluded.used THEN excluded.used ELSE quota_usage.used END`,
          }),
        )
        .execute();
    },

    async used(keyId: string, day: Day): Promise<number> {
      const row = await db.selectFrom('quota_usage').select('used').where('key_id', '=', keyId).where('day', '=', day).executeTakeFirst();
      return row ? Number(row.used) : 0;
    },
  };
}
