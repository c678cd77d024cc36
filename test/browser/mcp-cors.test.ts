/// <reference lib="dom" />
/**
 * A web page on another origin (a second loopback server) calls /mcp and the API in Chromium, as
 * an integrator's page would, with the key as a Bearer token or in X-Api-Key: the browser's own
 * CORS checks pass, the page reads the exposed quota and MCP headers and the 401 problem; with
 * EXRATES_MCP_ORIGINS naming other origins, the page's MCP calls are refused and its API calls
 * still answered.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestApp, issueKey, unissuedKey, type TestApp } from '../helper.js';
import { listenApp, listenOnLoopback } from '../support/ports.js';
import { chromiumAvailable, launchBrowser, watch, type Browser } from './browser.js';

const available = chromiumAvailable();

/** What the page's script reports of one fetch: its status, the headers a page may read, its body; or the browser's refusal. */
interface Seen {
  status?: number;
  headers?: Record<string, string | null>;
  body?: unknown;
  refused?: string;
}

const READ = ['content-type', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'www-authenticate', 'mcp-session-id', 'mcp-protocol-version'];

describe('a page on another origin calls /mcp and the API, in Chromium', { skip: !available }, () => {
  let open: TestApp;
  let closed: TestApp;
  let openBase: string;
  let closedBase: string;
  let openKey: string;
  let closedKey: string;
  let pages: Server;
  let pageOrigin: string;
  let browser: Browser;

  before(async () => {
    pages = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>An integrator\'s page</title><h1>Rates</h1></html>');
    });
    pageOrigin = `http://127.0.0.1:${await listenOnLoopback(pages)}`;
    open = await createTestApp();
    openKey = await issueKey(open.deps, 'pro');
    openBase = await listenApp(open.app);
    // Another origin than the page's is allowed: the page's MCP calls are refused.
    closed = await createTestApp({ EXRATES_MCP_ORIGINS: 'https://app.example.com' });
    closedKey = await issueKey(closed.deps, 'pro');
    closedBase = await listenApp(closed.app);
    assert.notEqual(new URL(openBase).origin, pageOrigin);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await open?.close();
    await closed?.close();
    await new Promise((resolve) => pages?.close(resolve));
  });

  /** Runs fetches in a page of the page server's origin, as its own script would. */
  async function fromPage(calls: Array<{ url: string; method?: string; headers?: Record<string, string>; body?: string }>): Promise<{ seen: Seen[]; errors: string[] }> {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await page.goto(`${pageOrigin}/`);
      assert.equal(await page.evaluate(() => location.origin), pageOrigin);
      const results = await page.evaluate(
        async ({ calls, read }) => {
          const out: Seen[] = [];
          for (const call of calls) {
            try {
              const response = await fetch(call.url, { method: call.method ?? 'GET', headers: call.headers, body: call.body, mode: 'cors' });
              const headers: Record<string, string | null> = {};
              for (const name of read) headers[name] = response.headers.get(name);
              const text = await response.text();
              out.push({ status: response.status, headers, body: text === '' ? undefined : JSON.parse(text) });
            } catch (error) {
              out.push({ refused: String(error) });
            }
          }
          return out;
        },
        { calls, read: READ },
      );
      return { seen: results, errors: seen.errors };
    } finally {
      await page.close();
    }
  }

  const mcp = (base: string, headers: Record<string, string>, message: Record<string, unknown>) => ({
    url: `${base}/mcp`,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  const initialize = { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } };
  const getRate = { id: 2, method: 'tools/call', params: { name: 'get_rate', arguments: { from: 'EUR', to: 'USD' } } };

  it('calls /mcp with a Bearer key and the MCP headers, reads the answer and its quota headers, and the 401 problem of a bad key', async () => {
    const bearer = { authorization: `Bearer ${openKey}` };
    const { seen, errors } = await fromPage([
      mcp(openBase, bearer, initialize),
      mcp(openBase, bearer, getRate),
      mcp(openBase, { 'x-api-key': openKey }, { id: 3, method: 'tools/list' }),
      mcp(openBase, { authorization: `Bearer ${unissuedKey()}` }, initialize),
      { url: `${openBase}/api/v1/rate?from=EUR&to=USD`, headers: { 'x-api-key': openKey } },
    ]);
    const [started, rated, listedTools, refused, rest] = seen;
    assert.equal(started!.status, 200, JSON.stringify(started));
    assert.equal((started!.body as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'exrates');

    assert.equal(rated!.status, 200, JSON.stringify(rated));
    const result = (rated!.body as { result: { structuredContent: Record<string, unknown> } }).result;
    assert.deepEqual(result.structuredContent, rest!.body, 'the tool answers what the API answers');
    assert.match(rated!.headers!['x-ratelimit-remaining'] ?? '', /^\d+$/, 'the quota headers of the count are readable by the page');
    assert.match(rated!.headers!['x-ratelimit-limit'] ?? '', /^\d+$/);

    assert.equal(listedTools!.status, 200);
    assert.ok((listedTools!.body as { result: { tools: unknown[] } }).result.tools.length >= 6);

    assert.equal(refused!.status, 401);
    assert.equal((refused!.body as { code: string }).code, 'unauthorized');
    assert.equal(refused!.headers!['www-authenticate'], 'ApiKey realm="exrates", header="X-Api-Key"');
    assert.deepEqual(
      errors.filter((error) => /CORS|Access-Control/i.test(error)),
      [],
    );
  });

  it('calls the API with the key as a Bearer token or in X-Api-Key, and reads the quota headers', async () => {
    const { seen, errors } = await fromPage([
      { url: `${openBase}/api/v1/rate?from=EUR&to=USD`, headers: { authorization: `Bearer ${openKey}` } },
      { url: `${openBase}/api/v1/convert?from=EUR&to=USD&amount=100`, headers: { 'x-api-key': openKey } },
      { url: `${openBase}/api/v1/rate?from=EUR&to=USD`, headers: { authorization: `Bearer ${unissuedKey()}` } },
    ]);
    const [bearer, keyed, refused] = seen;
    assert.equal(bearer!.status, 200, JSON.stringify(bearer));
    assert.equal((bearer!.body as { rate: string }).rate, '1.1618');
    assert.match(bearer!.headers!['x-ratelimit-remaining'] ?? '', /^\d+$/);
    assert.equal(keyed!.status, 200);
    assert.equal((keyed!.body as { result: string }).result, '116.18');
    assert.equal(refused!.status, 401);
    assert.equal((refused!.body as { code: string }).code, 'unauthorized');
    assert.deepEqual(
      errors.filter((error) => /CORS|Access-Control/i.test(error)),
      [],
    );
  });

  it('is refused by /mcp when EXRATES_MCP_ORIGINS names other origins, counting nothing, while the API still answers it', async () => {
    const usage = async () => ((await (await fetch(`${closedBase}/api/v1/usage`, { headers: { 'x-api-key': closedKey } })).json()) as { used: number }).used;
    const start = await usage();
    const { seen } = await fromPage([
      mcp(closedBase, { authorization: `Bearer ${closedKey}` }, getRate),
      { url: `${closedBase}/api/v1/rate?from=EUR&to=USD`, headers: { authorization: `Bearer ${closedKey}` } },
    ]);
    const [mcpCall, rest] = seen;
    assert.match(mcpCall!.refused ?? '', /TypeError/, `the browser withholds the answer: ${JSON.stringify(mcpCall)}`);
    assert.equal(rest!.status, 200);
    assert.equal(await usage(), start + 1, 'only the API request counted');
  });
});
