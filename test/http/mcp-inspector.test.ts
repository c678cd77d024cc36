/**
 * The MCP endpoint through the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli), a client
 * written by others, against a listening server: it lists the tools, calls them with the API's
 * answers, is refused without a key, and gets a problem as a tool error.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { TestApp } from '../helper.js';
import { listeningTestApp } from '../support/apps.js';
import { ROOT } from '../support/processes.js';

const INSPECTOR = join(ROOT, 'node_modules', '.bin', 'mcp-inspector-cli');

/**
 * Runs the Inspector's CLI. Its launcher starts `node` from PATH, so the one running the tests is
 * put first. It reads its own package.json by a path it checks against the working folder, not
 * its own, so it runs in a folder whose parent holds a package.json (test/).
 */
async function inspect(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [INSPECTOR, '--cli', ...args], { cwd: join(ROOT, 'test'), env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
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
    assert.equal(unsupported.code, 0, unsupported.stderr);
    const result = printed(unsupported.stdout);
    assert.equal(result.isError, true);
    assert.deepEqual(result.structuredContent, await rest('/api/v1/rate?from=EUR&to=KES'));

    const refused = await inspect([`${base}/mcp`, '--transport', 'http', '--method', 'tools/list']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout + refused.stderr, /401|unauthorized/);
  });
});
