import type { Kysely } from 'kysely';

/**
 * A published day does not change silently. `rate_revisions` keeps every number a later document
 * replaced, with the time it was replaced and the number that replaced it. `rate_checks` keeps the
 * numbers the refresh's checks stopped (`held` = 1: not in `rates`, not served, until confirmed)
 * or flagged (`held` = 0: served, and shown as a move to look at), one per provider, currency and
 * day (src/core/refresh.ts, "Corrections and moves").
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_revisions')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('quote', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('base', 'text', (c) => c.notNull())
    // The number as it was served, and when the provider said it applied.
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .addColumn('replaced_at', 'text', (c) => c.notNull())
    .addColumn('replaced_by', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_revisions_pk', ['provider', 'quote', 'day', 'replaced_at'])
    .execute();

  await db.schema
    .createTable('rate_checks')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('quote', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('base', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    // The number as published, and the one it was compared with (the stored number of that day for
    // a correction, the provider's previous day's for a move).
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('previous', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('held', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('noted_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_checks_pk', ['provider', 'quote', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_checks').execute();
  await db.schema.dropTable('rate_revisions').execute();
}
