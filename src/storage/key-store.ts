import { sql, type Kysely } from 'kysely';
import type { ApiKeyRecord, KeyStore, Tier } from '../core/ports.js';
import type { ApiKeysTable, Database } from './schema.js';

function toRecord(row: ApiKeysTable): ApiKeyRecord {
  return {
    id: row.id,
    prefix: row.prefix,
    tier: row.tier as Tier,
    owner: row.owner,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export function createKeyStore(db: Kysely<Database>): KeyStore {
  return {
    async insert(record): Promise<void> {
      await db
        .insertInto('api_keys')
        .values({
          id: record.id,
          prefix: record.prefix,
          hash: record.hash,
          tier: record.tier,
          owner: record.owner,
          created_at: record.createdAt,
          revoked_at: record.revokedAt,
        })
        .execute();
    },

    async findByHash(hash: string): Promise<ApiKeyRecord | null> {
      const row = await db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async list(): Promise<ApiKeyRecord[]> {
      const rows = await db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('prefix').execute();
      return rows.map(toRecord);
    },

    async revocationMark(): Promise<string> {
      const row = await db
        .selectFrom('api_keys')
        .select((eb) => [eb.fn.max('revoked_at').as('last'), eb.fn.count<number | string | bigint>('revoked_at').as('n')])
        .executeTakeFirst();
      return `${String(row?.n ?? 0)}:${row?.last ?? ''}`;
    },

    async revokeByPrefix(prefix: string, at: string): Promise<ApiKeyRecord[]> {
      return db.transaction().execute(async (trx) => {
        // substr rather than LIKE: '_' in every key is a LIKE wildcard, and escaping differs by engine.
        const matching = await trx
          .selectFrom('api_keys')
          .selectAll()
          .where(sql<string>`substr(prefix, 1, ${prefix.length})`, '=', prefix)
          .where('revoked_at', 'is', null)
          .execute();
        if (matching.length === 0) return [];
        await trx
          .updateTable('api_keys')
          .set({ revoked_at: at })
          .where(
            'id',
            'in',
            matching.map((r) => r.id),
          )
          .execute();
        return matching.map((r) => toRecord({ ...r, revoked_at: at }));
      });
    },

    async revokeByHash(hash: string, at: string): Promise<ApiKeyRecord | null> {
      const row = await db.updateTable('api_keys').set({ revoked_at: at }).where('hash', '=', hash).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
      return row ? toRecord(row) : null;
    },
  };
}
