import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, Migrator, PostgresAdapter, SqliteDialect, PostgresDialect, sql, type Migration, type MigrationResultSet, type SqliteDatabase, type SqliteStatement } from 'kysely';
import * as initial from './migrations/001-initial.js';
import * as dataVersion from './migrations/002-data-version.js';
import * as quotaJournal from './migrations/003-quota-journal.js';
import * as rateRevisions from './migrations/004-rate-revisions.js';
import type { Database } from './schema.js';

export type Engine = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: Kysely<Database>;
  engine: Engine;
  /** The SQLite database file, when there is one (not for `sqlite::memory:` nor PostgreSQL). */
  file?: string;
  close(): Promise<void>;
}

/** Every migration, in order. One portable set for SQLite and PostgreSQL. */
const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-data-version': dataVersion,
  '003-quota-journal': quotaJournal,
  '004-rate-revisions': rateRevisions,
};

/** The file a `sqlite:` URL names, resolved against the working directory; none for `sqlite::memory:` or PostgreSQL. */
export function sqliteFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:') || url === 'sqlite::memory:') return undefined;
  return resolve(url.slice('sqlite:'.length));
}

/**
 * Opens the store named by a URL: `sqlite:<path>`, `sqlite::memory:`, or `postgres://…`.
 * SQLite runs in WAL mode with synchronous=NORMAL: a committed transaction survives a killed
 * process, which is what acknowledged quota counts need.
 */
export async function openDatabase(url: string): Promise<OpenDatabase> {
  if (url.startsWith('sqlite:')) {
    const { default: SQLite } = await import('better-sqlite3');
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    // A checkpoint, run by the commit that takes the WAL past this many pages, syncs the WAL and
    // the database file on the thread that commits: 100 pages (SQLite's default is 1,000) keep
    // each such pause short.
    sqlite.pragma('wal_autocheckpoint = 100');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: keepingStatements(sqlite) }) });
    return { db, engine: 'sqlite', ...(path === ':memory:' ? {} : { file: path }), close: () => db.destroy() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { default: pg } = await import('pg');
    // Short timeouts: with PostgreSQL down or restarting, requests fail fast instead of queueing.
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 2000, query_timeout: 5000 });
    // A connection reset while a client is idle in the pool, or checked out between two queries,
    // is emitted as an 'error' event that would end the process when nobody listens; the query
    // that needed the client fails on its own and answers 503.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, engine: 'postgres', close: () => db.destroy() };
  }
  throw new Error(`unsupported database URL '${url}': use sqlite:<path>, sqlite::memory: or postgres://…`);
}

/**
 * How many prepared statements an SQLite store keeps: the few that run all the time. Not more: a
 * statement whose text varies with its input (a multi-row insert, one per row count) is a large
 * compiled program each, and two hundred of them once held some 50 MB.
 */
const STATEMENTS_KEPT = 16;

/**
 * The SQLite connection as Kysely sees it, with prepared statements kept (the most recently used
 * ones): Kysely prepares every query again, and preparing costs more than running a small
 * statement (the quota fold's upserts every second, a key lookup). Reusing one is safe:
 * Kysely runs one query at a time on SQLite's one connection, and SQLite prepares a statement
 * again by itself when the schema changed.
 */
function keepingStatements(sqlite: { prepare(source: string): SqliteStatement; close(): void }): SqliteDatabase {
  const kept = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(source) {
      let statement = kept.get(source);
      if (statement) {
        kept.delete(source);
      } else {
        statement = sqlite.prepare(source);
        if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value!);
      }
      kept.set(source, statement);
      return statement;
    },
  };
}

/** The engine behind a Kysely instance, for the few statements each engine spells its own way. */
export function engineOf(db: Kysely<Database>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  // On PostgreSQL the migrator looks for its tables in every schema unless told which one: name
  // the current schema, so two installations in one database (one per schema) never mix.
  let migrationTableSchema: string | undefined;
  if (engineOf(db) === 'postgres') {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    migrationTableName: 'exrates_migration',
    migrationLockTableName: 'exrates_migration_lock',
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  if (db.getExecutor().adapter instanceof PostgresAdapter) return checked(await migrator.migrateToLatest());
  // Kysely runs SQLite migrations with no transaction and no lock: two processes starting on a new
  // file would both create the tables (one fails), and a process killed midway would leave a
  // half-migrated store that no longer starts. One IMMEDIATE transaction makes the whole run
  // atomic and serialises migrators (the second waits out busy_timeout, then finds nothing to do).
  await sql`begin immediate`.execute(db);
  let result: MigrationResultSet;
  try {
    result = await migrator.migrateToLatest();
  } catch (error) {
    await sql`rollback`.execute(db);
    throw error;
  }
  if (result.error) {
    await sql`rollback`.execute(db);
    return checked(result);
  }
  await sql`commit`.execute(db);
  return result;
}

function checked(result: MigrationResultSet): MigrationResultSet {
  if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
  return result;
}
