import { constants, mkdirSync, statSync } from 'node:fs';
import { access, stat, statfs } from 'node:fs/promises';
import { hostname } from 'node:os';
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
  /**
   * Why the SQLite file can no longer be written (deleted, replaced, read-only, its disk full, a
   * write refused), once that is known; undefined while it is fine, and always for PostgreSQL.
   */
  fault(): string | undefined;
  /** Called once, with the reason, when the store becomes unwritable (fault()). */
  onFault(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * Hold the file's writer lock while open, and refuse to open when another process holds it: for
   * the process that serves (one per SQLite file). Commands beside it and its own workers do not.
   */
  holdWriterLock?: boolean;
  /** Check the file every this many milliseconds while open (fault()): for processes that serve. */
  watchMs?: number;
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
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (url.startsWith('sqlite:')) {
    const { default: SQLite } = await import('better-sqlite3');
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const releaseLock = options.holdWriterLock && path !== ':memory:' ? holdWriterLock(SQLite, resolve(path)) : undefined;
    let sqlite: InstanceType<typeof SQLite>;
    try {
      sqlite = new SQLite(path);
    } catch (error) {
      releaseLock?.();
      throw error;
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    // A checkpoint, run by the commit that takes the WAL past this many pages, syncs the WAL and
    // the database file on the thread that commits: 100 pages (SQLite's default is 1,000) keep
    // each such pause short.
    sqlite.pragma('wal_autocheckpoint = 100');
    const faults = storeFaults();
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: keepingStatements(sqlite, faults.report) }) });
    const stopWatching = options.watchMs && path !== ':memory:' ? watchFile(resolve(path), statSync(path), options.watchMs, faults.report) : undefined;
    return {
      db,
      engine: 'sqlite',
      ...(path === ':memory:' ? {} : { file: path }),
      fault: faults.fault,
      onFault: faults.onFault,
      async close() {
        stopWatching?.();
        try {
          await db.destroy();
        } finally {
          releaseLock?.();
        }
      },
    };
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
    return { db, engine: 'postgres', fault: () => undefined, onFault: () => undefined, close: () => db.destroy() };
  }
  throw new Error(`unsupported database URL '${url}': use sqlite:<path>, sqlite::memory: or postgres://…`);
}

/**
 * How many prepared statements an SQLite store keeps: the few that run all the time. Not more: a
 * statement whose text varies with its input (a multi-row insert, one per row count) is a large
 * compiled program each, and hundreds of them held a large share of the service's memory.
 */
const STATEMENTS_KEPT = 16;

/**
 * The SQLite connection as Kysely sees it, with prepared statements kept (the most recently used
 * ones): Kysely prepares every query again, and preparing costs more than running a small
 * statement (the quota fold's upserts every second, a key lookup). Reusing one is safe:
 * Kysely runs one query at a time on SQLite's one connection, and SQLite prepares a statement
 * again by itself when the schema changed.
 */
function keepingStatements(sqlite: { prepare(source: string): SqliteStatement; close(): void }, report: (reason: string) => void): SqliteDatabase {
  const kept = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(source) {
      let statement = kept.get(source);
      if (statement) {
        kept.delete(source);
      } else {
        const prepared = reportingFaults(() => sqlite.prepare(source), report);
        statement = {
          reader: prepared.reader,
          all: (parameters) => reportingFaults(() => prepared.all(parameters), report),
          run: (parameters) => reportingFaults(() => prepared.run(parameters), report),
          iterate: (parameters) => reportingFaults(() => prepared.iterate(parameters), report),
        };
        if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value!);
      }
      kept.set(source, statement);
      return statement;
    },
  };
}

/**
 * SQLite's answers that mean the file itself can no longer be written (read-only, disk full, I/O
 * error, gone, damaged), as opposed to a statement's own failure (a constraint, a busy lock).
 */
const STORE_FAULT = /^SQLITE_(READONLY|FULL|IOERR|CANTOPEN|CORRUPT|NOTADB)/;

/** Runs a call into SQLite; a failure of the file itself is reported, and thrown all the same. */
function reportingFaults<T>(call: () => T, report: (reason: string) => void): T {
  try {
    return call();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && STORE_FAULT.test(code)) report(`SQLite refused a statement: ${code}: ${(error as Error).message}`);
    throw error;
  }
}

/** The first fault of a store, kept, and told once to whoever listens. */
function storeFaults(): { fault(): string | undefined; onFault(listener: (reason: string) => void): void; report(reason: string): void } {
  let fault: string | undefined;
  const listeners: Array<(reason: string) => void> = [];
  return {
    fault: () => fault,
    onFault: (listener) => {
      listeners.push(listener);
      if (fault !== undefined) listener(fault);
    },
    report(reason) {
      if (fault !== undefined) return;
      fault = reason;
      for (const listener of listeners) listener(reason);
    },
  };
}

/**
 * Less free space than this on the store's filesystem counts as full: SQLite needs room for the
 * WAL, and a write into its shared-memory file on a full filesystem ends the process by SIGBUS,
 * with no chance to log or to stop cleanly.
 */
const MIN_FREE_BYTES = 4 * 1024 * 1024;

/**
 * Checks the store's file every `intervalMs`: still there (SQLite would go on writing into a deleted
 * file, lost at exit), still the file opened (not replaced), still writable, its filesystem not
 * full. Reports the first thing wrong.
 */
function watchFile(file: string, opened: { dev: number; ino: number }, intervalMs: number, report: (reason: string) => void): () => void {
  let checking = false;
  const check = async (): Promise<void> => {
    if (checking) return;
    checking = true;
    try {
      const now = await stat(file);
      if (now.dev !== opened.dev || now.ino !== opened.ino) return report(`${file} was replaced by another file`);
      // Permissions a process running as root ignores, but a read-only filesystem it does not.
      for (const path of [file, dirname(file)]) {
        const denied = await access(path, constants.W_OK).then(
          () => undefined,
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        );
        if (denied === 'ENOENT') return report(`${file} was deleted`);
        if (denied !== undefined) return report(`${path} is no longer writable (${denied})`);
      }
      const space = await statfs(dirname(file));
      const free = space.bavail * space.bsize;
      if (free < MIN_FREE_BYTES) return report(`the filesystem holding ${file} is full (${free} bytes free)`);
    } catch (error) {
      // The file or its folder gone, before or between the checks above.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report(`${file} was deleted`);
      report(`${file} cannot be checked: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      checking = false;
    }
  };
  void check();
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The writer lock of an SQLite file: a small SQLite database beside it. */
export function writerLockFile(file: string): string {
  return `${file}-lock`;
}

/** Who holds a writer lock, as the holder wrote it. */
interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** How long a start waits for a lock that is being taken or given up at that moment. */
const LOCK_WAIT_MS = 1_000;

/**
 * Takes the writer lock of an SQLite file, or throws one line naming the file and the process that
 * holds it. The lock is an open write transaction on `<file>-lock`: SQLite's own file locks, which
 * the operating system drops when the process ends however it ends (kill -9 included), so a lock is
 * never left behind. The holder's pid, host and start are in that file, readable while it is held.
 * Returns the release.
 */
function holdWriterLock(SQLite: typeof import('better-sqlite3'), file: string): () => void {
  let lock: import('better-sqlite3').Database;
  try {
    lock = new SQLite(writerLockFile(file), { timeout: LOCK_WAIT_MS });
  } catch (error) {
    throw new Error(`cannot open the store's writer lock ${writerLockFile(file)}: ${(error as Error).message}`, { cause: error });
  }
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const release = () => lock.close();
  try {
    lock.exec('create table if not exists holder (id integer primary key check (id = 1), pid integer not null, host text not null, since text not null)');
    // The holder's row is committed before the lock is taken for good, so that others can read
    // it; another process may take the lock in between, hence the check that the row is ours.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryImmediate(lock) === 'busy') throw new Error(heldBy(file, readHolder(lock)));
      lock.prepare('insert or replace into holder (id, pid, host, since) values (1, ?, ?, ?)').run(me.pid, me.host, me.since);
      lock.exec('commit');
      if (tryImmediate(lock) === 'busy') continue;
      const row = readHolder(lock);
      if (row?.pid === me.pid && row.host === me.host && row.since === me.since) return release;
      lock.exec('rollback');
    }
    throw new Error(heldBy(file, readHolder(lock)));
  } catch (error) {
    release();
    throw error;
  }
}

function tryImmediate(lock: import('better-sqlite3').Database): 'held' | 'busy' {
  try {
    lock.exec('begin immediate');
    return 'held';
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return 'busy';
    throw error;
  }
}

function readHolder(lock: import('better-sqlite3').Database): Holder | undefined {
  try {
    return lock.prepare('select pid, host, since from holder where id = 1').get() as Holder | undefined;
  } catch {
    return undefined;
  }
}

function heldBy(file: string, holder: Holder | undefined): string {
  const who = holder ? `process ${holder.pid} on ${holder.host} (serving since ${holder.since})` : 'another process';
  return `the store ${file} is in use by ${who}: one process serves an SQLite store; stop that one first, or set EXRATES_DATABASE_URL to another file (or PostgreSQL, for several instances)`;
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
