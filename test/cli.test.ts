import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { serviceStart } from '../scripts/node-flags.js';
import { ECB_CSV, ECB_XML_DIR, FIXED_NOW, tempDir } from './helper.js';
import { processEnv } from './support/env.js';
import { send } from './support/http.js';
import { freePort } from './support/ports.js';
import { ensureBuilt } from './support/processes.js';
import { sleep, waitFor } from './support/wait.js';

const exec = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: Record<string, string>): Promise<Result> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('exrates CLI', () => {
  const dir = tempDir();
  const dbPath = join(dir.path, 'cli.db');
  const env = {
    EXRATES_DATABASE_URL: `sqlite:${dbPath}`,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: ECB_CSV,
    EXRATES_NOW: FIXED_NOW,
    EXRATES_LOG_LEVEL: 'warn',
  };
  let key = '';

  before(async () => {
    const migrated = await cli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied: 001-initial/);
  });
  after(() => dir.remove());

  test('migrate again has nothing to do', async () => {
    const result = await cli(['migrate'], env);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /up to date/);
  });

  test('keys create prints the key once and stores only its hash', async () => {
    const result = await cli(['keys', 'create', '--tier', 'pro', '--owner', 'ops@example.org'], env);
    assert.equal(result.code, 0, result.stderr);
    key = result.stdout.trim();
    assert.match(key, /^exr_[0-9A-Za-z]{32}$/);
    // Standard output is a pipe here, as in $(…): the message says where the key went.
    assert.equal(
      result.stderr,
      `issued a pro key for ops@example.org (prefix ${key.slice(0, 12)}); the key went to standard output, which is not this terminal (a file, a pipe or $(…) took it), and is not shown again\n`,
    );
    const db = new Database(dbPath, { readonly: true });
    const rows = db.prepare('select * from api_keys').all() as Array<Record<string, string>>;
    db.close();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.tier, 'pro');
    assert.equal(rows[0]!.prefix, key.slice(0, 12));
    assert.match(rows[0]!.hash!, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(rows).includes(key), 'the key itself is not stored');
  });

  test('on a terminal, keys create shows the key below its line', { skip: !existsSync('/usr/bin/script') && 'script(1) is not installed' }, async () => {
    // script(1) runs the command on a pseudo-terminal, as a person's shell does.
    const command = [process.execPath, ...CLI, 'keys', 'create', '--tier', 'free', '--owner', 'tty@example.org'].map((word) => `'${word}'`).join(' ');
    // A store of its own: the keys of this suite's store stay the ones its other tests issue.
    const own = { ...env, EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'tty.db')}` };
    assert.equal((await cli(['migrate'], own)).code, 0);
    const { stdout } = await exec('/usr/bin/script', ['-qec', command, '/dev/null'], { env: { ...process.env, ...own }, timeout: 60_000 });
    assert.match(stdout, /^issued a free key for tty@example\.org \(prefix exr_[0-9A-Za-z]{8}\); it is shown only now:\r?\nexr_[0-9A-Za-z]{32}\r?\n$/);
  });

  test('keys list shows prefixes, never keys', async () => {
    const result = await cli(['keys', 'list'], env);
    assert.equal(result.code, 0);
    assert.match(result.stdout, new RegExp(`${key.slice(0, 12)}\\tpro\\tops@example\\.org`));
    assert.ok(!result.stdout.includes(key));
    const json = JSON.parse((await cli(['keys', 'list', '--json'], env)).stdout) as Array<{ prefix: string }>;
    assert.equal(json[0]!.prefix, key.slice(0, 12));
  });

  test('bad key commands fail with a clear message', async () => {
    const tier = await cli(['keys', 'create', '--tier', 'gold', '--owner', 'a@example.org'], env);
    assert.equal(tier.code, 1);
    assert.match(tier.stderr, /unknown tier 'gold'/);
    const owner = await cli(['keys', 'create', '--tier', 'free', '--owner', 'nobody'], env);
    assert.equal(owner.code, 1);
    assert.match(owner.stderr, /e-mail/);
    const missing = await cli(['keys', 'create', '--tier', 'free'], env);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--owner/);
    const unknown = await cli(['keys', 'revoke', 'exr_zzzzzzzz'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no active key/);
  });

  test('import loads an ECB file; a bad file fails and changes nothing', async () => {
    const result = await cli(['import', join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml')], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^imported 1,\d{3} rates over 61 days as 'file', all new \(newest day 2025-02-25\)\n$/);
    const count = () => {
      const db = new Database(dbPath, { readonly: true });
      const n = (db.prepare('select count(*) as n from rates').get() as { n: number }).n;
      db.close();
      return n;
    };
    const before = count();
    const broken = join(dir.path, 'broken.xml');
    writeFileSync(broken, '<gesmes:Envelope><Cube><Cube time="2025-02-26"><Cube currency="USD" rate="1.05"/>');
    const bad = await cli(['import', broken], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /exrates: /);
    const missing = await cli(['import', join(dir.path, 'nope.csv')], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nope\.csv/);
    assert.equal(count(), before);
  });

  test('an import of rates stored already says that none were new', async () => {
    const again = await cli(['import', join(ECB_XML_DIR, 'eurofxref-hist-90d_2025-02-25.xml')], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^imported 1,\d{3} rates over 61 days as 'file', none new: every one was stored already \(newest day 2025-02-25\)\n$/);
  });

  test("a refresh that fails leaves the providers' recorded state as the service's own refreshes left it, and says so", async () => {
    const state = () => {
      const db = new Database(dbPath, { readonly: true });
      const row = db.prepare("select * from provider_state where provider = 'file'").get();
      db.close();
      return row;
    };
    const good = await cli(['refresh'], env);
    assert.equal(good.code, 0, good.stderr);
    const before = state();
    assert.ok(before, 'a successful refresh records its attempt');
    const missing = join(dir.path, 'nope.csv');
    const failed = await cli(['refresh'], { ...env, EXRATES_FILE_URL: missing });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^file: failed: .*nope\.csv/m);
    assert.match(failed.stderr, /^hint: check EXRATES_FILE_URL, or run offline from an ECB file: EXRATES_PROVIDERS=file EXRATES_FILE_URL=/m);
    assert.match(failed.stderr, /^note: not recorded as a failure of file: a running service reports its providers from its own refreshes$/m);
    assert.deepEqual(state(), before);
  });

  test('keys revoke refuses what is not the start of a key, and a start too short, each saying why, revoking nothing', async () => {
    for (const [prefix, why] of [
      ['abcdefghij', /^exrates: 'abcdefghij' is not the start of a key: every key starts with exr_ \(as shown by 'keys list'\), e\.g\. exr_AbC1$/m],
      ['exr_Ab', /^exrates: give at least the first 8 characters of the key \(as shown by 'keys list'\), e\.g\. exr_AbC1$/m],
    ] as const) {
      const result = await cli(['keys', 'revoke', prefix], env);
      assert.equal(result.code, 1);
      assert.match(result.stderr, why);
    }
    const listed = await cli(['keys', 'list'], env);
    assert.doesNotMatch(listed.stdout, /\d{4}-\d{2}-\d{2}T[^\t]*\t\d{4}-/);
  });

  test('keys revoke by prefix', async () => {
    const result = await cli(['keys', 'revoke', key.slice(0, 12)], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /revoked exr_/);
  });

  test('keys revoke takes the whole key, revokes exactly that key, and never prints it', async () => {
    const created = await cli(['keys', 'create', '--tier', 'pro', '--owner', 'whole@example.org'], env);
    assert.equal(created.code, 0, created.stderr);
    const whole = created.stdout.trim();
    const other = (await cli(['keys', 'create', '--tier', 'free', '--owner', 'other@example.org'], env)).stdout.trim();
    const result = await cli(['keys', 'revoke', whole], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `revoked ${whole.slice(0, 12)} (pro, whole@example.org)\n`);
    assert.ok(!`${result.stdout}${result.stderr}`.includes(whole.slice(12)), 'the secret part is not printed');
    const listed = JSON.parse((await cli(['keys', 'list', '--json'], env)).stdout) as Array<{ prefix: string; revokedAt: string | null }>;
    assert.notEqual(listed.find((k) => k.prefix === whole.slice(0, 12))?.revokedAt, null);
    assert.equal(listed.find((k) => k.prefix === other.slice(0, 12))?.revokedAt, null);

    // Again: revoked already; a mistyped whole key and something that is no key: each refused, named by its first 12 characters only.
    const mistyped = `${whole.slice(0, -1)}${whole.endsWith('A') ? 'B' : 'A'}`;
    for (const [given, why] of [
      [whole, /^exrates: no active key is exr_\w{8}… \(unknown, or revoked already\)$/m],
      [mistyped, /^exrates: no active key is exr_\w{8}… \(unknown, or revoked already\)$/m],
      [`${other}!`, /^exrates: 'exr_\w{8}…' is neither a whole key nor the start of one as shown by 'keys list'/m],
    ] as const) {
      const refused = await cli(['keys', 'revoke', given], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, why);
      assert.ok(!`${refused.stdout}${refused.stderr}`.includes(given.slice(12)), `the secret part of ${given.slice(0, 12)}… is not printed`);
    }
    const after = JSON.parse((await cli(['keys', 'list', '--json'], env)).stdout) as Array<{ prefix: string; revokedAt: string | null }>;
    assert.equal(after.find((k) => k.prefix === other.slice(0, 12))?.revokedAt, null, 'the other key is still active');
  });

  test('an invalid configuration stops the command that reads it with one line per problem', async () => {
    const result = await cli(['serve'], { ...env, PORT: 'x', EXRATES_QUOTA_FREE: '-1' });
    assert.equal(result.code, 1);
    // One line per bad setting, each whole on its own, and no heading.
    assert.deepEqual(result.stderr.split('\n').filter((line) => line !== '').sort(), [
      "exrates: invalid configuration: EXRATES_QUOTA_FREE: expected a whole number of at least 1; got '-1'",
      "exrates: invalid configuration: PORT: expected a whole number from 0 to 65535; got 'x'",
    ]);
  });

  test('a command checks only the settings it reads: a bad PORT or provider list stops no keys command, and stops what reads it, naming the bad entry', async () => {
    const bad = { ...env, PORT: 'abc', EXRATES_PROVIDERS: 'file,nosuch' };
    const listed = await cli(['keys', 'list'], bad);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^prefix\ttier\towner\tcreated\trevoked\n/);
    const migrated = await cli(['migrate'], bad);
    assert.equal(migrated.code, 0, migrated.stderr);
    const refreshed = await cli(['refresh'], bad);
    assert.equal(refreshed.code, 1);
    assert.match(refreshed.stderr, /^exrates: invalid configuration: EXRATES_PROVIDERS: 'nosuch' is not a provider; expected a comma-separated list of /);
    assert.doesNotMatch(refreshed.stderr, /PORT/, 'refresh does not read PORT');
    const served = await cli(['serve'], bad);
    assert.equal(served.code, 1);
    assert.match(served.stderr, /PORT: expected a whole number/);
    assert.match(served.stderr, /'nosuch' is not a provider/);
  });

  test('EXRATES_NOW moves the clock of the service only: keys are issued and revoked at the real time, and a rates command says it runs on the replay clock', async () => {
    const startedAt = Date.now();
    const created = await cli(['keys', 'create', '--tier', 'free', '--owner', 'clock@example.org'], env);
    assert.equal(created.code, 0, created.stderr);
    const issued = created.stdout.trim();
    assert.equal((await cli(['keys', 'revoke', issued], env)).code, 0);
    const endedAt = Date.now();
    const listed = JSON.parse((await cli(['keys', 'list', '--json'], env)).stdout) as Array<{ prefix: string; createdAt: string; revokedAt: string | null }>;
    const record = listed.find((k) => k.prefix === issued.slice(0, 12))!;
    for (const at of [record.createdAt, record.revokedAt!]) {
      assert.ok(Date.parse(at) >= startedAt - 1000 && Date.parse(at) <= endedAt + 1000, `${at} is the real time, not EXRATES_NOW (${FIXED_NOW})`);
    }
    assert.ok(record.revokedAt! >= record.createdAt, 'revoked after it was created');
    const refreshed = await cli(['refresh'], env);
    assert.equal(refreshed.code, 0, refreshed.stderr);
    assert.match(refreshed.stderr, new RegExp(`^note: EXRATES_NOW is set: this command runs on the replay clock, started at ${new Date(FIXED_NOW).toISOString().replaceAll('.', '\\.')} \\(today is ${FIXED_NOW.slice(0, 10)} for it\\)$`, 'm'));
  });

  test('an unknown command is an error', async () => {
    const result = await cli(['frobnicate'], env);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /unknown command/);
  });
});

test('npm start and the Docker image run the exrates command itself, whose first line is plain #!/usr/bin/env node', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  assert.deepEqual(serviceStart(root), { env: {}, flags: [] }, 'no engine flags and no allocator settings');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
  assert.equal(pkg.scripts.start, 'exec dist/cli/main.js serve');
  assert.equal(pkg.bin.exrates, 'dist/cli/main.js');
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
  assert.deepEqual(JSON.parse(entrypoint ?? 'null'), ['/app/dist/cli/main.js']);
  // The built command keeps the first line, is executable, and runs through it.
  const built = join(root, 'dist', 'cli', 'main.js');
  assert.equal(readFileSync(built, 'utf8').split('\n', 1)[0], '#!/usr/bin/env node');
  const { stdout } = await exec(built, ['--help'], { env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` } });
  assert.match(stdout, /Usage: exrates/);
});

/** Whether any process of a process group still runs. */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

test('a SIGTERM to npm start reaches the service, which drains and exits, leaving nothing behind', async () => {
  // npm passes the signal to its child, the shell of the script; the script execs the command, so
  // that child is node itself. Without the exec, the shell died and node ran on, orphaned.
  await ensureBuilt();
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dir = tempDir('exrates-npm-start-');
  const port = await freePort();
  const env = processEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'start.db')}`,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: ECB_CSV,
    EXRATES_NOW: FIXED_NOW,
  });
  // A process group of its own, so that the finally below also ends a node left behind.
  const npm = spawn('npm', ['start', '--silent'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  try {
    await waitFor(async () => (await send(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200, 60_000, 'npm start listening', 100);
    npm.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => Promise.reject(new Error(`npm did not exit on SIGTERM:\n${output}`)))]);
    await waitFor(() => output.includes('shutting down: draining in-flight requests'), 10_000, 'the service draining', 50);
    // Node exited too, not only npm: nothing of the process group is left.
    await waitFor(() => !groupAlive(npm.pid!), 15_000, 'every process of npm start gone', 100);
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // The group is gone: nothing was left behind.
    }
    dir.remove();
  }
});
