/**
 * One process serves an SQLite file: its writer lock, held by a real second process and dropped
 * when that process is killed; and the watch that reports a file deleted or replaced under it.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { tempDir } from '../helper.js';
import { openDatabase } from '../../src/storage/database.js';
import { sleep, waitFor } from '../support/wait.js';

/** A child process that opens the store holding its writer lock, says so, and waits to be killed. */
const HOLD = `
import { openDatabase } from './src/storage/database.ts';
await openDatabase(process.argv[1], { holdWriterLock: true });
process.stdout.write('held\\n');
setInterval(() => {}, 60_000);
`;

function holdInChild(url: string): Promise<{ pid: number; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', HOLD, url], {
    cwd: new URL('../../', import.meta.url),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((ready, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) {
        ready({
          pid: child.pid!,
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
    void exited.then(() => fail(new Error(`the holder exited: ${output}`)));
  });
}

describe('the writer lock of an SQLite file', () => {
  test('a second holder is refused with one line naming the file and the holding process, and gets it once that process is killed', async () => {
    const dir = tempDir();
    const file = resolve(join(dir.path, 'one.db'));
    try {
      const holder = await holdInChild(`sqlite:${file}`);
      const refused = await openDatabase(`sqlite:${file}`, { holdWriterLock: true }).then(
        async (database) => {
          await database.close();
          assert.fail('opened a store another process holds');
        },
        (error: Error) => error,
      );
      assert.equal(refused.message.split('\n').length, 1);
      assert.ok(refused.message.startsWith(`the store ${file} is in use by process ${holder.pid} on ${hostname()} (serving since 20`), refused.message);
      // Opening without the lock (a command beside the server) is still allowed.
      const beside = await openDatabase(`sqlite:${file}`);
      await beside.close();
      // kill -9 leaves no lock behind: the operating system drops SQLite's file locks.
      await holder.kill();
      const next = await openDatabase(`sqlite:${file}`, { holdWriterLock: true });
      await next.close();
    } finally {
      dir.remove();
    }
  });

  test('closing the store gives the lock up; a store in memory has none', async () => {
    const dir = tempDir();
    try {
      const url = `sqlite:${join(dir.path, 'two.db')}`;
      const first = await openDatabase(url, { holdWriterLock: true });
      await assert.rejects(openDatabase(url, { holdWriterLock: true }), /is in use by process \d+ on /);
      await first.close();
      const second = await openDatabase(url, { holdWriterLock: true });
      await second.close();
      const memory = [await openDatabase('sqlite::memory:', { holdWriterLock: true }), await openDatabase('sqlite::memory:', { holdWriterLock: true })];
      for (const database of memory) await database.close();
    } finally {
      dir.remove();
    }
  });
});

describe('the watch of an SQLite file', () => {
  test('a folder deleted under the store is reported once, as a fault', async () => {
    const dir = tempDir();
    const folder = join(dir.path, 'store');
    const database = await openDatabase(`sqlite:${join(folder, 'gone.db')}`, { watchMs: 50 });
    try {
      const told: string[] = [];
      database.onFault((reason) => told.push(reason));
      await sleep(150);
      assert.equal(database.fault(), undefined, 'a healthy store has no fault');
      rmSync(folder, { recursive: true, force: true });
      await waitFor(() => database.fault() !== undefined, 5_000, 'the fault reported');
      assert.match(database.fault()!, /gone\.db was deleted$/);
      await sleep(200);
      assert.deepEqual(told, [database.fault()], 'told once');
    } finally {
      await database.close();
      dir.remove();
    }
  });

  test('a write SQLite refuses for the file itself (its disk full) is reported, and thrown all the same', async (t) => {
    const dir = tempDir();
    const at = join(dir.path, 'small');
    mkdirSync(at);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', at], { stdio: 'pipe' });
    } catch {
      dir.remove();
      return t.skip('cannot mount a tmpfs here: needs root with CAP_SYS_ADMIN');
    }
    // No watch: the write's own failure is what is reported.
    const database = await openDatabase(`sqlite:${join(at, 'full.db')}`);
    try {
      await sql`create table filler (data blob not null)`.execute(database.db);
      const { bavail, bsize } = statfsSync(at);
      writeFileSync(join(at, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - 8 * 1024)));
      const blob = Buffer.alloc(256 * 1024, 1);
      const error = await sql`insert into filler (data) values (${blob})`.execute(database.db).then(
        () => assert.fail('wrote to a full disk'),
        (caught: Error & { code?: string }) => caught,
      );
      assert.match(String(error.code), /^SQLITE_(FULL|IOERR)/);
      assert.match(database.fault()!, /^SQLite refused a statement: SQLITE_(FULL|IOERR)/);
    } finally {
      await database.close().catch(() => undefined);
      execFileSync('umount', [at]);
      dir.remove();
    }
  });

  test('a file replaced under the store is reported', async () => {
    const dir = tempDir();
    const file = join(dir.path, 'replaced.db');
    const database = await openDatabase(`sqlite:${file}`, { watchMs: 50 });
    try {
      await sleep(150);
      renameSync(file, `${file}.old`);
      writeFileSync(file, '');
      await waitFor(() => database.fault() !== undefined, 5_000, 'the fault reported');
      assert.match(database.fault()!, /replaced\.db was replaced by another file$/);
    } finally {
      await database.close();
      dir.remove();
    }
  });
});
