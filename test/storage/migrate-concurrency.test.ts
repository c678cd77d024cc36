/**
 * Several processes starting at once on a new SQLite file (a server and a `keys create`, two
 * instances on one host) must all get a migrated store: the migrations run once, atomically.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../helper.js';

const MIGRATE = `
import { migrateToLatest, openDatabase } from './src/storage/database.ts';
const database = await openDatabase(process.argv[1]);
try { await migrateToLatest(database.db); } finally { await database.close(); }
`;

function migrateInChild(url: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', MIGRATE, url], {
      cwd: new URL('../../', import.meta.url),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

test('four processes migrating one new SQLite file at once all succeed, and the migrations run once', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'race.db');
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => migrateInChild(`sqlite:${file}`)));
    assert.deepEqual(
      outcomes.map((o) => o.code),
      [0, 0, 0, 0],
      outcomes.map((o) => o.stderr).join('\n'),
    );
    const db = new Database(file, { readonly: true });
    try {
      const applied = db.prepare('select name from exrates_migration order by name').all() as Array<{ name: string }>;
      assert.deepEqual(
        applied.map((row) => row.name),
        ['001-initial', '002-data-version', '003-quota-journal', '004-rate-revisions'],
      );
    } finally {
      db.close();
    }
  } finally {
    dir.remove();
  }
});
