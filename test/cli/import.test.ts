/**
 * `exrates import` as the README uses it: next to a running offline service, on its store. An
 * import only adds rates; it never prunes what the service serves, whatever its own clock says.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ECB_CSV, ECB_XML_DIR, FIXED_NOW, tempDir } from '../helper.js';
import { createKey, ensureBuilt, type Instance, runCommand, startInstance, stopInstance } from '../support/processes.js';
import { get } from '../support/http.js';
import { processEnv } from '../support/env.js';

const NINETY_DAYS = join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml');

describe('exrates import beside an offline service', () => {
  const dir = tempDir('exrates-import-');
  const dbPath = join(dir.path, 'exrates.db');
  // The README's offline example.
  const offline = { EXRATES_DATABASE_URL: `sqlite:${dbPath}`, EXRATES_PROVIDERS: 'file', EXRATES_FILE_URL: ECB_CSV, EXRATES_LOG_LEVEL: 'warn' };
  const setup = { env: processEnv({ ...offline, EXRATES_NOW: FIXED_NOW }), cwd: dir.path };
  let server: Instance | undefined;
  let key = '';

  before(async () => {
    await ensureBuilt();
    key = await createKey(setup, 'pro');
    server = await startInstance('offline', setup);
  });
  after(async () => {
    if (server) await stopInstance(server);
    dir.remove();
  });

  const stored = () => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.prepare('select provider, count(*) as n, min(day) as first from rates group by provider order by provider').all();
    } finally {
      db.close();
    }
  };
  const fiveYears = async () => {
    const reply = await get(`${server!.base}/api/v1/history?from=EUR&to=USD&range=5y`, { headers: { 'X-Api-Key': key } });
    assert.equal(reply.status, 200, reply.body);
    return JSON.parse(reply.body) as { count: number; points: Array<{ date: string }> };
  };

  test('an import without EXRATES_NOW leaves the 5-year history as it was', async () => {
    const history = await fiveYears();
    assert.equal(history.points[0]!.date, '2021-03-08');
    assert.equal(history.count, 1281);
    const rows = stored();

    // The import runs on the real clock, years after the service's fixed one.
    const run = await runCommand(['import', NINETY_DAYS], { env: processEnv(offline), cwd: dir.path });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^imported 1,\d{3} rates over 61 days as 'file', none new: every one was stored already \(newest day 2025-02-25\)\n$/);
    assert.match(run.stderr, /reading .*eurofxref-hist-90d_2025-02-25\.xml/);
    assert.match(run.stderr, /storing 61 days \(2024-11-28 to 2025-02-25\) as 'file'/);

    assert.deepEqual(stored(), rows);
    // The service sees a write to its store within two seconds: wait past that.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.deepEqual(await fiveYears(), history);
  });

  test('--provider names a provider an ECB file can be stored as; anything else is refused and changes nothing', async () => {
    const rows = stored();
    for (const provider of ['bogus', 'frankfurter']) {
      const run = await runCommand(['import', '--provider', provider, NINETY_DAYS], { env: processEnv(offline), cwd: dir.path });
      assert.equal(run.code, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `exrates: --provider '${provider}' is not valid: an ECB file can be stored as ecb or file\n`);
    }
    assert.deepEqual(stored(), rows);
  });

  test('days older than the service keeps are refused with the reason, changing nothing; a file holding some imports the rest', async () => {
    const rows = stored();
    const run = await runCommand(['import', join(ECB_XML_DIR, 'eurofxref-daily_2018-06-29.xml')], { env: processEnv(offline), cwd: dir.path });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const start = /^exrates: nothing imported: every day of \S+eurofxref-daily_2018-06-29\.xml \(2018-06-29 to 2018-06-29\) is before (\d{4}-\d{2}-\d{2}), and the service keeps 5 years and a month \(from \1\); to replay older days, import them with EXRATES_NOW set as the service has it \(its clock set back\)$/m.exec(run.stderr)?.[1];
    assert.ok(start && start > '2018-06-29', run.stderr);
    assert.deepEqual(stored(), rows);

    // The whole ECB history, from 1999: the days from the start on are imported, the others named.
    const whole = await runCommand(['import', ECB_CSV], { env: processEnv(offline), cwd: dir.path });
    assert.equal(whole.code, 0, whole.stderr);
    const skipped = /^note: ([\d,]+) days of this file before (\d{4}-\d{2}-\d{2}) skipped: the service keeps 5 years and a month \(from \2\)/m.exec(whole.stderr);
    assert.ok(skipped, whole.stderr);
    const from = /^storing [\d,]+ days \((\d{4}-\d{2}-\d{2}) to 2026-03-05\) as 'file'…$/m.exec(whole.stderr)?.[1];
    assert.ok(from !== undefined && from >= skipped[2]!, whole.stderr);
    const db = new Database(dbPath, { readonly: true });
    try {
      // Nothing older than what the service itself loaded (from its clock's start) was added.
      const oldest = (db.prepare("select min(day) as first from rates where provider = 'file'").get() as { first: string }).first;
      assert.equal(oldest, (rows as Array<{ provider: string; first: string }>).find((r) => r.provider === 'file')!.first);
    } finally {
      db.close();
    }
  });
});
