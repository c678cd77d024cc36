/** What the `exrates` command tells a person who asks it: its version, its help, its warnings. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ECB_CSV, FIXED_NOW, tempDir } from '../helper.js';
import { ensureBuilt, lines, records, ROOT, runCommand } from '../support/processes.js';
import { processEnv } from '../support/env.js';

describe('exrates --version, --help and warnings', () => {
  const dir = tempDir('exrates-help-');
  const env = processEnv({ EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'help.db')}` });
  before(() => ensureBuilt());
  after(() => dir.remove());

  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const run = await runCommand([flag], { env, cwd: dir.path });
      assert.equal(run.code, 0);
      assert.equal(run.stdout, `${version}\n`);
    }
  });

  test('the help of every command names its required options and points to docs/configuration.md', async () => {
    const usages: Record<string, RegExp> = {
      '': /^Usage: exrates \[options\] \[command\]$/m,
      serve: /^Usage: exrates serve \[options\]$/m,
      migrate: /^Usage: exrates migrate \[options\]$/m,
      import: /^Usage: exrates import \[--provider ecb\|file\] FILE$/m,
      refresh: /^Usage: exrates refresh \[options\]$/m,
      keys: /^Usage: exrates keys \[options\] \[command\]$/m,
      'keys create': /^Usage: exrates keys create --tier free\|pro --owner EMAIL$/m,
      'keys list': /^Usage: exrates keys list \[options\]$/m,
      'keys revoke': /^Usage: exrates keys revoke \[options\] <key-or-prefix>$/m,
    };
    for (const [command, usage] of Object.entries(usages)) {
      const run = await runCommand([...command.split(' ').filter(Boolean), '--help'], { env, cwd: dir.path });
      assert.equal(run.code, 0, `${command}: ${run.stderr}`);
      assert.match(run.stdout, usage, run.stdout);
      assert.match(run.stdout, /every variable is described in docs\/configuration\.md/, `${command}:\n${run.stdout}`);
    }
  });

  test('serve --help says what serve does', async () => {
    const run = await runCommand(['serve', '--help'], { env, cwd: dir.path });
    assert.match(run.stdout.replace(/\s+/g, ' '), /apply pending migrations, load rates \(EXRATES_HISTORY_YEARS of history, 5 by default, on an empty store\) and serve the HTTP API, the portal at \/ and the API docs at \/docs/);
  });

  test('a mistyped EXRATES_ variable is warned about with the nearest real name, and the command still runs', async () => {
    const run = await runCommand(['keys', 'list'], { env: { ...env, EXRATES_PROVIDER: 'file' }, cwd: dir.path });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      records(run.stderr).map((r) => [r.level, r.msg]),
      [[40, 'EXRATES_PROVIDER is not a setting of exrates (did you mean EXRATES_PROVIDERS?); it is ignored']],
    );
    assert.equal(lines(run.stdout)[0], 'prefix\ttier\towner\tcreated\trevoked');
  });

  test('a command that finds no store says it creates a new, empty one, and where; once there, nothing', async () => {
    const fresh = { ...env, EXRATES_DATABASE_URL: 'sqlite:./elsewhere/new.db' };
    const note = `note: no store at ${join(dir.path, 'elsewhere', 'new.db')}; this command creates a new, empty one (EXRATES_DATABASE_URL names the store, relative to the working directory)`;
    const first = await runCommand(['keys', 'list'], { env: fresh, cwd: dir.path });
    assert.equal(first.code, 0, first.stderr);
    assert.ok(lines(first.stderr).includes(note), first.stderr);
    const again = await runCommand(['keys', 'list'], { env: fresh, cwd: dir.path });
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /no store at/);
  });

  test('serve on a port another process listens on says so, names PORT and exits', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runCommand(['serve'], {
        env: { ...env, HOST: '127.0.0.1', PORT: String(port), EXRATES_PROVIDERS: 'file', EXRATES_FILE_URL: ECB_CSV, EXRATES_NOW: FIXED_NOW },
        cwd: dir.path,
      });
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, new RegExp(`^exrates: cannot listen on 127\\.0\\.0\\.1:${port}: another process listens there; stop it, or set PORT \\(and HOST\\) to listen elsewhere$`, 'm'), run.stderr);
    } finally {
      taken.close();
    }
  });
});
