import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * The quota journal as a table: without Redis, a process appends the counts of the quota counters
 * it changed every 10 ms, one row per write, folds them into quota_usage every
 * second and deletes the rows folded; the rows a killed process left are folded in at the next
 * start. Only PostgreSQL stores journal here now: SQLite stores journal to files beside the
 * database (src/storage/quota-journal.ts) and read this table at start for rows older versions left.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  // Ids must only grow, never be reused once rows are deleted: a fold deletes the rows up to the
  // last id it saw written. SQLite needs AUTOINCREMENT for that (a plain integer key reuses ids
  // after the table empties); PostgreSQL's sequence never goes back, and bigserial because a
  // write every 10 ms would use up a 32-bit serial within a year.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('quota_journal')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    // JSON: [[keyId, day, used], …], the absolute counts at the time of the write.
    .addColumn('counts', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('quota_journal').execute();
}
