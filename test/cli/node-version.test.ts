/**
 * An unsupported Node.js fails at once: `npm install` refuses it (engine-strict in .npmrc) and
 * every command says which versions run exrates before loading anything that needs one. Node 20
 * is played by a preload that sets the version the process reports, so no old runtime is needed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { isSupportedNode, SUPPORTED_NODE, unsupportedNodeLine } from '../../src/cli/node-version.js';
import { tempDir } from '../helper.js';
import { processEnv } from '../support/env.js';
import { ensureBuilt, ROOT, runCommand } from '../support/processes.js';

const exec = promisify(execFile);

/** A preload that makes the process report another Node.js version, as process.version and process.versions.node. */
function reportedAs(version: string): string {
  return `--import=data:text/javascript,Object.defineProperty(process,'version',{value:'v${version}'});Object.defineProperty(process.versions,'node',{value:'${version}'})`;
}

describe('an unsupported Node.js', () => {
  const dir = tempDir('exrates-node-');
  before(() => ensureBuilt());
  after(() => dir.remove());

  test("the check admits what package.json's engines admits", () => {
    const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    assert.equal(engines.node, SUPPORTED_NODE);
    for (const version of ['22.12.0', '22.20.1', 'v24.0.0', '24.11.1', '26.0.0', '26.10.0', '28.1.0']) assert.equal(isSupportedNode(version), true, version);
    for (const version of ['18.20.8', '20.19.5', 'v22.11.0', '22.0.0', '23.11.0', '25.2.1']) assert.equal(isSupportedNode(version), false, version);
    assert.equal(unsupportedNodeLine(process.versions.node), undefined);
  });

  test('every command stops at once with one line: the running version, the supported ones, how to get one', async () => {
    for (const args of [['--version'], ['serve'], ['keys', 'list']]) {
      const run = await runCommand(args, { env: processEnv({ NODE_OPTIONS: reportedAs('20.19.5'), EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}` }), cwd: dir.path });
      assert.equal(run.code, 1, args.join(' '));
      assert.equal(run.stdout, '');
      assert.equal(
        run.stderr,
        'exrates: Node.js 20.19.5 is not supported; exrates needs Node.js 22.12 or later 22.x, 24.x, or 26 and later (^22.12 || ^24 || >=26): ' +
          'install one from https://nodejs.org/en/download or with a version manager (for example `nvm install 24`)\n',
      );
    }
    // The same preload on a supported version changes nothing.
    const run = await runCommand(['--version'], { env: processEnv({ NODE_OPTIONS: reportedAs('24.11.1') }), cwd: dir.path });
    assert.equal(run.code, 0, run.stderr);
  });

  test('npm install refuses it (engine-strict in .npmrc) instead of warning', async () => {
    assert.match(readFileSync(join(ROOT, '.npmrc'), 'utf8'), /^engine-strict=true$/m);
    const install = exec('npm', ['install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: reportedAs('20.19.5') },
    });
    await assert.rejects(install, (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, /EBADENGINE/);
      assert.match(error.stderr, /Required: \{"node":"\^22\.12 \|\| \^24 \|\| >=26"\}/);
      return true;
    });
  });
});
