import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { QuotaCount, QuotaJournal } from '../core/ports.js';
import type { OpenDatabase } from './database.js';
import { countsJson } from './quota-store.js';
import type { Database } from './schema.js';

/** One append as the journal keeps it: `[[keyId, day, used], …]`, parsed. */
function parseCounts(text: string): QuotaCount[] {
  return (JSON.parse(text) as Array<[string, string, number]>).map(([keyId, day, used]) => ({ keyId, day, used }));
}

/**
 * The journal as rows of the store's `quota_journal` table: one insert per append, ids from the
 * table's own sequence. For PostgreSQL, where the journal must live with the store: an instance
 * may start again on another machine.
 */
export function createTableJournal(db: Kysely<Database>): QuotaJournal {
  const trim = async (throughId: number): Promise<void> => {
    await db.deleteFrom('quota_journal').where('id', '<=', throughId).execute();
  };
  return {
    async append(entries) {
      const row = await db.insertInto('quota_journal').values({ counts: countsJson(entries) }).returning('id').executeTakeFirstOrThrow();
      return Number(row.id);
    },
    trim,
    async leftover() {
      const rows = await db.selectFrom('quota_journal').select(['id', 'counts']).execute();
      const lastId = rows.reduce((highest, row) => Math.max(highest, Number(row.id)), 0);
      return { counts: rows.flatMap((row) => parseCounts(row.counts)), drop: () => trim(lastId) };
    },
    close: () => Promise.resolve(),
  };
}

/**
 * The journal of an SQLite store, in files beside its database file: an append is one line
 * written with one `write` (no transaction, no sync), where an insert into the store cost several
 * times the CPU and, at the commits that checkpoint the WAL, blocked on its fsyncs. What is written
 * is in the operating system's page cache at once, so a killed process loses nothing of it; an
 * operating system crash may lose the appends since the last fold, as a commit SQLite had not
 * synced yet would be.
 *
 * Written by hand: an append-only file of lines, rotated, is all it is; a library for logs
 * (pino's destinations, a write-ahead-log package) would bring buffering that a kill would lose.
 *
 * Each process appends to files of its own (`<db>-quota-<pid>-<random>-<n>`). After each fold the
 * file appended to is closed: deleted when the fold had all its appends, else left for the next
 * fold to delete, and the next append opens a new file. So at most two files per process, of
 * about a second of appends each. At start, every such file left beside the store (by a process
 * killed before it could fold them) is read and, once folded in, deleted.
 */
export function createFileJournal(databaseFile: string): QuotaJournal {
  const folder = dirname(databaseFile);
  const prefix = `${basename(databaseFile)}-quota-`;
  const own = `${prefix}${process.pid}-${randomBytes(6).toString('hex')}-`;
  let lastId = 0;
  let fileNumber = 0;
  /** The file appended to, opened at the first append after it changed. */
  let current: { path: string; fd: number; lastId: number } | undefined;
  /** Files no longer appended to, deleted once their appends are folded in. */
  const retired: Array<{ path: string; lastId: number }> = [];

  function removeFile(path: string): void {
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  /** Closes the file appended to, listed for deletion; the next append opens a new one. */
  function retireCurrent(): void {
    if (!current) return;
    const { path, fd, lastId: last } = current;
    current = undefined;
    retired.push({ path, lastId: last });
    closeSync(fd);
  }

  return {
    append(entries) {
      if (!current) {
        const path = join(folder, `${own}${++fileNumber}`);
        current = { path, fd: openSync(path, 'a'), lastId: 0 };
      }
      const line = `${countsJson(entries)}\n`;
      const size = Buffer.byteLength(line);
      const written = writeSync(current.fd, line);
      if (written !== size) {
        // A disk filling up may take part of a line: the next append must not be joined to it.
        retireCurrent();
        throw new Error(`the quota journal took ${written} of ${size} bytes`);
      }
      current.lastId = ++lastId;
      return Promise.resolve(lastId);
    },
    trim(throughId) {
      // A file with appends made after the fold began stays until the next fold has them.
      retireCurrent();
      while (retired.length > 0 && retired[0]!.lastId <= throughId) {
        removeFile(retired[0]!.path);
        retired.shift();
      }
      return Promise.resolve();
    },
    leftover() {
      const files = readdirSync(folder)
        .filter((name) => name.startsWith(prefix) && /^\d+-[0-9a-f]{12}-\d+$/.test(name.slice(prefix.length)))
        .map((name) => join(folder, name));
      const counts: QuotaCount[] = [];
      for (const file of files) {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (error) {
          // Folded in and deleted meanwhile by the process that wrote it.
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw error;
        }
        for (const line of text.split('\n')) {
          if (line === '') continue;
          try {
            counts.push(...parseCounts(line));
          } catch {
            // A line cut short (an operating system crash, a full disk): its counts are lost, as documented.
          }
        }
      }
      return Promise.resolve({
        counts,
        drop: () => {
          for (const file of files) removeFile(file);
          return Promise.resolve();
        },
      });
    },
    close() {
      // Whatever is still in the files was not folded in: the next start does it.
      if (current) closeSync(current.fd);
      current = undefined;
      return Promise.resolve();
    },
  };
}

/**
 * The journal this process appends to, and those whose leftovers are folded in at start: on an
 * SQLite file, files beside it (and the table that earlier versions journaled to); elsewhere the
 * store's table.
 */
export function quotaJournals(database: OpenDatabase): { own: QuotaJournal; leftBehind: QuotaJournal[] } {
  const table = createTableJournal(database.db);
  if (database.file === undefined) return { own: table, leftBehind: [table] };
  const files = createFileJournal(database.file);
  return { own: files, leftBehind: [files, table] };
}
