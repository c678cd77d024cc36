/**
 * The README's quick start, followed literally on a fresh clone of this repository (its committed
 * state) beside the shared data, offline: the commands of its marked blocks run as written through
 * bash, in the folder and the order it gives, and what they print is held to what it shows. Two
 * things differ, and only these: `npm install` is not run again (the clone gets this checkout's
 * node_modules and dist/, which CI has just installed and built), and the port is a free one
 * (PORT in the environment; `localhost:8080` in the commands becomes that port).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigSchema } from '../src/config.js';
import { PROVIDER_REGISTRY } from '../src/providers/registry.js';
import { SHARED_DATA, tempDir } from './helper.js';
import { ensureBuilt, ROOT } from './support/processes.js';
import { get } from './support/http.js';
import { freePort } from './support/ports.js';
import { processEnv } from './support/env.js';
import { waitFor } from './support/wait.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block right after `<!-- name -->`. */
function block(name: string): string {
  const found = new RegExp(`<!-- ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  assert.ok(found, `README.md has no block marked ${name}`);
  return found[1]!;
}

/** `expected` may hold `…` for "anything here"; the rest must appear in order, from the start. */
function matchesShown(actual: string, expected: string): boolean {
  const parts = expected.split('…');
  if (!actual.startsWith(parts[0]!)) return false;
  let at = parts[0]!.length;
  for (const part of parts.slice(1)) {
    const found = actual.indexOf(part, at);
    if (found === -1) return false;
    at = found + part.length;
  }
  return true;
}

function npxCacheEntries(): Set<string> {
  const dir = join(homedir(), '.npm', '_npx');
  return new Set(existsSync(dir) ? readdirSync(dir) : []);
}

// What the README says of the code, read against the code: no clone or server needed.
describe('README text', () => {
  test('the settings a newcomer meets are named where they matter, and are settings', () => {
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('### Your first API key'));
    for (const name of ['EXRATES_CONTACT_EMAIL', 'EXRATES_NOW', 'EXRATES_OLD_RATES_DAYS', 'EXRATES_PROVIDERS', 'EXRATES_FILE_URL']) {
      assert.ok(quickStart.includes(`\`${name}`), `the quick start names ${name}`);
      assert.ok(name in ConfigSchema.properties, `${name} is a setting`);
    }
    const quotas = /^- \*\*Quotas:\*\*[\s\S]*?(?=\n- \*\*)/m.exec(README)?.[0] ?? '';
    for (const name of ['EXRATES_QUOTA_FREE', 'EXRATES_QUOTA_PRO']) {
      assert.ok(quotas.includes(`\`${name}\``), `the quotas paragraph names ${name}`);
      assert.ok(name in ConfigSchema.properties, `${name} is a setting`);
    }
    assert.match(quickStart, /Run the whole test suite \([^)]*\) with:\n\n```sh\nnpm test\n```/);
  });

  test('the quick start and the architecture picture name what the defaults load, as the provider registry has it', () => {
    const defaults = PROVIDER_REGISTRY.filter((entry) => entry.byDefault);
    const loaded = defaults.filter((entry) => entry.family === undefined && !entry.loadsOnRequest).map((entry) => entry.metadata.label);
    assert.equal(/<!-- defaults:start -->([\s\S]*?)<!-- defaults:end -->/.exec(README)?.[1], loaded.join(', '));
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('### Your first API key'));
    for (const entry of defaults.filter((e) => e.loadsOnRequest)) assert.ok(quickStart.includes(entry.metadata.label), `the quick start says where ${entry.id} comes in`);
    for (const family of new Set(defaults.flatMap((e) => (e.family === undefined ? [] : [e.family])))) assert.ok(quickStart.includes(`(\`${family}\`)`), `the quick start names ${family}`);

    const picture = README.slice(README.indexOf('## Architecture'));
    const named = /src\/providers\/[\s\S]*?by default ([\s\S]*?);\s+on request ([^\n]+)/.exec(picture);
    assert.ok(named, 'the picture lists the providers by default and on request');
    const list = (text: string) => text.replace(/\s+/g, ' ').replace(' + ECB parsers', '').split(', ').map((name) => name.trim());
    const byName = (entries: typeof PROVIDER_REGISTRY) => [...new Set(entries.map((e) => e.family ?? e.id))];
    assert.deepEqual(list(named[1]!), byName(defaults));
    assert.deepEqual(list(named[2]!), byName(PROVIDER_REGISTRY.filter((e) => !e.byDefault)).sort());
  });
});

describe('README quick start, followed on a fresh clone', () => {
  const dir = tempDir('exrates-readme-');
  const clone = join(dir.path, 'exrates');
  let port = 0;
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess | undefined;
  let key = '';
  const npxBefore = npxCacheEntries();

  const sh = (script: string, extra: Record<string, string> = {}) =>
    execFileSync('bash', ['-euo', 'pipefail', '-c', script.replaceAll('localhost:8080', `localhost:${port}`)], {
      cwd: clone,
      env: { ...env, ...extra },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });

  before(async () => {
    await ensureBuilt();
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    // `../shared/data/…` from the clone, as from this checkout.
    symlinkSync(dirname(SHARED_DATA.replace(/\/$/, '')), join(dir.path, 'shared'));
    // Hard links: a copy of the installed tree in a second, not a second npm install.
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(clone, 'node_modules')]);
    cpSync(join(ROOT, 'dist'), join(clone, 'dist'), { recursive: true });
    port = await freePort();
    env = processEnv({ PORT: String(port) });
  });

  after(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      // npm start's node is in the process group bash leads.
      process.kill(-server.pid, 'SIGTERM');
      await new Promise((resolve) => server!.once('exit', resolve));
    }
    dir.remove();
    // npx installs the clone's own package into its cache under a name of its own: remove it.
    for (const entry of npxCacheEntries()) if (!npxBefore.has(entry)) rmSync(join(homedir(), '.npm', '_npx', entry), { recursive: true, force: true });
  });

  test('the server block is npm install and npm start', () => {
    assert.equal(block('quickstart:server'), 'npm install\nnpm start');
  });

  test('the offline variant starts and loads the 5 years', async () => {
    const offline = block('quickstart:offline');
    assert.match(offline, /\nnpm start$/);
    server = spawn('bash', ['-euo', 'pipefail', '-c', offline], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => {
        if (server!.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
        return output.includes('ready: 39,750 file rates, 5 years, newest 2026-03-05');
      }, 60_000, 'the ready line', 100);
    assert.equal((await get(`http://localhost:${port}/readyz`)).status, 200);
    assert.ok(existsSync(join(clone, 'data', 'exrates.db')), 'the store is ./data/exrates.db');
  });

  test('the second terminal: a key in EXRATES_KEY, and the rate the API section shows', () => {
    // The block runs as written; the key it exported is then read back from the same shell.
    const printed = sh(`${block('quickstart:client')}\necho; echo "EXRATES_KEY=$EXRATES_KEY"`);
    key = /^EXRATES_KEY=(exr_[0-9A-Za-z]+)$/m.exec(printed)?.[1] ?? '';
    assert.ok(key, printed);
    const shown = /# (\{"pair":"EURUSD".*\})/.exec(block('readme:api'))![1]!;
    assert.equal(printed.split('\n')[0], shown);
  });

  test("the API section's commands print what it shows", () => {
    const lines = block('readme:api').split('\n');
    let checked = 0;
    for (let i = 0; i < lines.length; i += 1) {
      if (!lines[i]!.startsWith('curl ')) continue;
      const shown: string[] = [];
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith('# '); j += 1) shown.push(lines[j]!.slice(2).trim());
      const printed = sh(lines[i]!, { EXRATES_KEY: key });
      if (shown.length === 0) {
        assert.match(printed, /^date,rate\r\n/);
      } else {
        assert.ok(matchesShown(printed, shown.join('')), `${lines[i]}\nprinted: ${printed.slice(0, 300)}\nshown:   ${shown.join('')}`);
      }
      checked += 1;
    }
    assert.equal(checked, 4);
  });

  test('the TypeScript client snippet runs as written, saved as example.ts', () => {
    writeFileSync(join(clone, 'example.ts'), block('readme:client').replaceAll('localhost:8080', `localhost:${port}`));
    const printed = sh('npx tsx example.ts', { EXRATES_KEY: key });
    assert.match(printed, /^100 GBP = 21050 JPY at 210\.50029 \(as of 2026-03-05T15:00:00Z\)\nUSD\/CHF over a year: best 0\.\d+ on 20\d\d-\d\d-\d\d, \d+ days\n$/);
  });
});
