import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema at their point in time, not today's types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rates')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('base', 'text', (c) => c.notNull())
    .addColumn('quote', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .addColumn('rate', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rates_pk', ['provider', 'quote', 'day'])
    .execute();
  await db.schema.createIndex('rates_provider_day').on('rates').columns(['provider', 'day']).execute();

  await db.schema
    .createTable('provider_state')
    .addColumn('provider', 'text', (c) => c.primaryKey())
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_failure_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('failing', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('quota_usage')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('quota_usage_pk', ['key_id', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['quota_usage', 'api_keys', 'provider_state', 'rates']) {
    await db.schema.dropTable(table).execute();
  }
}
