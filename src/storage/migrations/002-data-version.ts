import type { Kysely } from 'kysely';

/**
 * A counter per provider that every write of rates increments, so each process serving from
 * memory can tell cheaply that another process (a refresh elsewhere, an import) changed them.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('provider_state')
    .addColumn('data_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('provider_state').dropColumn('data_version').execute();
}
