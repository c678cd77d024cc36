/**
 * The MCP endpoint through the MCP Inspector's CLI (@modelcontextprotocol/inspector 2.x, run as
 * `mcp-inspector --cli`), a client written by others, against a listening server: it lists the
 * tools, calls them with the API's answers, gets a problem as a tool error, and shows a bad key's
 * 401 problem rather than starting an OAuth flow.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { tempDir, unissuedKey, type TestApp } from '../helper.js';
import { listeningTestApp } from '../support/apps.js';
import { ROOT } from '../support/processes.js';

const INSPECTOR = join(ROOT, 'node_modules', '.bin', 'mcp-inspector');

/**
 * Runs the Inspector's CLI. Its launcher starts `node` from PATH, so the one running the tests is
 * put first; HOME is a folder of the test's own, as the CLI keeps a catalog and OAuth state there.
 */
async function inspect(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = tempDir('exrates-inspector-');
  const env = { ...process.env, HOME: home.path, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [INSPECTOR, '--cli', ...args], { cwd: ROOT, env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  } finally {
    home.remove();
  }
}

/** The JSON document the CLI prints, after its own notices. */
function printed(stdout: string): Record<string, unknown> {
  const start = stdout.search(/^\{/m);
  assert.ok(start >= 0, `no JSON in ${stdout}`);
  return JSON.parse(stdout.slice(start)) as Record<string, unknown>;
}

describe('the MCP endpoint, through the MCP Inspector CLI', () => {
  let test: TestApp;
  let base: string;
  let key: string;

  before(async () => {
    ({ test, base, key } = await listeningTestApp());
  });

  after(async () => {
    await test?.close();
  });

  const rest = async (path: string) => (await (await fetch(`${base}${path}`, { headers: { 'X-Api-Key': key } })).json()) as Record<string, unknown>;

  it('lists the tools and calls them, with the key in X-Api-Key or as a Bearer token', async () => {
    const listed = await inspect([`${base}/mcp`, '--transport', 'http', '--method', 'tools/list', '--header', `X-Api-Key: ${key}`]);
    assert.equal(listed.code, 0, listed.stderr);
    const tools = (printed(listed.stdout).tools as Array<{ name: string }>).map((tool) => tool.name).sort();
    assert.deepEqual(tools, ['convert', 'get_history', 'get_rate', 'get_rates', 'list_currencies', 'list_providers']);

    // The CLI sends `amount=100` as the JSON number 100.
    const converted = await inspect([
      `${base}/mcp`,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'convert',
      '--tool-arg',
      'from=GBP',
      'to=JPY',
      'amount=100',
      '--header',
      `Authorization: Bearer ${key}`,
    ]);
    assert.equal(converted.code, 0, converted.stderr);
    assert.deepEqual(printed(converted.stdout).structuredContent, await rest('/api/v1/convert?from=GBP&to=JPY&amount=100'));

    const history = await inspect([
      `${base}/mcp`,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'get_history',
      '--tool-arg',
      'from=EUR',
      'to=USD',
      'range=3m',
      'group=week',
      '--header',
      `X-Api-Key: ${key}`,
    ]);
    assert.equal(history.code, 0, history.stderr);
    assert.deepEqual(printed(history.stdout).structuredContent, await rest('/api/v1/history?from=EUR&to=USD&range=3m&group=week'));
  });

  it('gets a problem as a tool error, and is refused without a key', async () => {
    const unsupported = await inspect([
      `${base}/mcp`,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'get_rate',
      '--tool-arg',
      'from=EUR',
      'to=KES',
      '--header',
      `X-Api-Key: ${key}`,
    ]);
    // The 2.x CLI prints the result and exits 5 for a tool error (tool_is_error on stderr).
    assert.equal(unsupported.code, 5, unsupported.stderr);
    assert.match(unsupported.stderr, /tool_is_error/);
    const result = printed(unsupported.stdout);
    assert.equal(result.isError, true);
    assert.deepEqual(result.structuredContent, await rest('/api/v1/rate?from=EUR&to=KES'));

    // With --stored-auth-only (what the README shows) a bad key is the 401 problem, not an OAuth flow.
    for (const header of [[], ['--header', `Authorization: Bearer ${unissuedKey()}`]]) {
      const refused = await inspect([`${base}/mcp`, '--transport', 'http', '--stored-auth-only', '--method', 'tools/list', ...header]);
      assert.notEqual(refused.code, 0);
      const shown = printed(refused.stdout + refused.stderr) as { error: { message: string } };
      assert.match(shown.error.message, /"code":"unauthorized"/);
      assert.match(shown.error.message, /Send a valid API key in the X-Api-Key header or as Authorization: Bearer <key>/);
    }
  });
});
