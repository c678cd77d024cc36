/**
 * The MCP endpoint through the official SDK's own client, against a listening server: every tool
 * gives what the REST API gives for the same parameters (the same decimal strings, asOf and
 * stale), behind the same keys, each call counted once against the same quota, and every error
 * is the API's problem as a tool error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, issueKey, unissuedKey, type TestApp } from '../helper.js';
import { listeningTestApp } from '../support/apps.js';
import { listenApp } from '../support/ports.js';

const TOOLS = ['convert', 'get_history', 'get_rate', 'get_rates', 'list_currencies', 'list_providers'];

async function connect(base: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'exrates-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}

/** A tool call's result; an answer also gives its structured content as JSON text, after the short text. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError) {
    assert.equal(result.content.length, 2);
    const json = result.content[1]!;
    assert.ok(json.type === 'text');
    assert.deepEqual(JSON.parse(json.text), result.structuredContent);
  }
  return result;
}

function text(result: CallToolResult): string {
  const [first] = result.content;
  assert.ok(first?.type === 'text');
  return first.text;
}

describe('the MCP endpoint, through the SDK client on a listening server', () => {
  let test: TestApp;
  let base: string;
  let key: string;
  let client: Client;

  before(async () => {
    ({ test, base, key } = await listeningTestApp());
    client = await connect(base, { 'X-Api-Key': key });
  });

  after(async () => {
    await client?.close();
    await test?.close();
  });

  async function rest(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${base}${path}`, { headers: { 'X-Api-Key': key } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function used(apiKey = key): Promise<number> {
    const response = await fetch(`${base}/api/v1/usage`, { headers: { 'X-Api-Key': apiKey } });
    return ((await response.json()) as { used: number }).used;
  }

  it('lists the tools, each with a description and an input schema named by the API parameters', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOLS);
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 80, `${tool.name} is described`);
      assert.equal(tool.inputSchema.type, 'object');
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(Object.keys(byName.get('get_rate')!.inputSchema.properties!).sort(), ['date', 'from', 'source', 'to']);
    assert.deepEqual(byName.get('convert')!.inputSchema.required?.slice().sort(), ['amount', 'from', 'to']);
    assert.deepEqual(Object.keys(byName.get('get_history')!.inputSchema.properties!).sort(), ['end', 'from', 'group', 'range', 'source', 'start', 'to']);
    assert.deepEqual(Object.keys(byName.get('get_rates')!.inputSchema.properties!).sort(), ['amount', 'date', 'from', 'source', 'to']);
  });

  it('answers get_rate and convert exactly as /rate and /convert, live and on a date', async () => {
    const rate = await call(client, 'get_rate', { from: 'eur', to: 'usd' });
    assert.equal(rate.isError, undefined);
    const restRate = await rest('/api/v1/rate?from=eur&to=usd');
    assert.deepEqual(rate.structuredContent, restRate.body);
    assert.deepEqual(rate.structuredContent, { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1618', asOf: '2026-03-05T15:00:00Z', stale: false });
    assert.equal(text(rate), '1 EUR = 1.1618 USD (mid-market, as of 2026-03-05T15:00:00Z).');

    const dated = await call(client, 'get_rate', { from: 'EUR', to: 'USD', date: '2026-03-01' });
    assert.deepEqual(dated.structuredContent, (await rest('/api/v1/rate?from=EUR&to=USD&date=2026-03-01')).body);
    assert.equal((dated.structuredContent as { asOf: string }).asOf, '2026-02-27T15:00:00Z');

    const conversion = await call(client, 'convert', { from: 'GBP', to: 'JPY', amount: '100' });
    const restConversion = (await rest('/api/v1/convert?from=GBP&to=JPY&amount=100')).body;
    assert.deepEqual(conversion.structuredContent, restConversion);
    assert.equal(text(conversion), `100 GBP = ${String(restConversion.result)} JPY at 1 GBP = ${String(restConversion.rate)} JPY (mid-market, as of ${String(restConversion.asOf)}).`);

    const pastConversion = await call(client, 'convert', { from: 'EUR', to: 'CHF', amount: '0099.95', date: '2026-03-01', source: 'file' });
    assert.deepEqual(pastConversion.structuredContent, (await rest('/api/v1/convert?from=EUR&to=CHF&amount=0099.95&date=2026-03-01&source=file')).body);
    assert.equal((pastConversion.structuredContent as { amount: string }).amount, '99.95');
  });

  it('answers get_rates and get_history exactly as /rates and /history', async () => {
    const many = await call(client, 'get_rates', { from: 'EUR', to: 'USD,GBP,JPY', amount: '10' });
    const restMany = (await rest('/api/v1/rates?from=EUR&to=USD,GBP,JPY&amount=10')).body;
    assert.deepEqual(many.structuredContent, restMany);
    const entries = restMany.rates as Array<{ to: string; rate: string; result: string }>;
    assert.deepEqual(
      entries.map((entry) => entry.to),
      ['GBP', 'JPY', 'USD'],
    );
    for (const entry of entries) assert.ok(text(many).includes(`${entry.to} ${entry.result} (rate ${entry.rate})`), `${entry.to} in the text`);

    const every = await call(client, 'get_rates', { from: 'USD', date: '2026-03-02' });
    assert.deepEqual(every.structuredContent, (await rest('/api/v1/rates?from=USD&date=2026-03-02')).body);

    const history = await call(client, 'get_history', { from: 'USD', to: 'CHF', range: '1m' });
    const restHistory = (await rest('/api/v1/history?from=USD&to=CHF&range=1m')).body;
    assert.deepEqual(history.structuredContent, restHistory);
    const stats = restHistory.stats as { best: string; bestDate: string; average: string };
    assert.match(text(history), new RegExp(`^USDCHF over 1m: ${String(restHistory.count)} daily points from `));
    assert.ok(text(history).includes(`Best ${stats.best} on ${stats.bestDate}`) && text(history).includes(`average ${stats.average}`));

    const grouped = await call(client, 'get_history', { from: 'EUR', to: 'GBP', start: '2025-01-01', end: '2025-06-30', group: 'month' });
    const restGrouped = (await rest('/api/v1/history?from=EUR&to=GBP&start=2025-01-01&end=2025-06-30&group=month')).body;
    assert.deepEqual(grouped.structuredContent, restGrouped);
    assert.equal(restGrouped.count, 6);
    assert.match(text(grouped), /^EURGBP over 2025-01-01\/2025-06-30: 6 monthly means/);
  });

  it('answers list_currencies and list_providers exactly as /currencies and /providers', async () => {
    const currencies = await call(client, 'list_currencies');
    const restCurrencies = (await rest('/api/v1/currencies')).body;
    assert.deepEqual(currencies.structuredContent, restCurrencies);
    const listed = restCurrencies.currencies as Array<{ code: string; name: string }>;
    assert.ok(text(currencies).startsWith(`${listed.length} currencies answered now: `));
    assert.ok(text(currencies).includes('USD (US Dollar)'));

    const providers = await call(client, 'list_providers');
    const restProviders = (await rest('/api/v1/providers')).body;
    assert.deepEqual(providers.structuredContent, restProviders);
    assert.match(text(providers), /^file: .*, base EUR, \d+ currencies, newest day 2026-03-05$/);
  });

  it('gives the API problem, code and detail, as a tool error for a bad argument', async () => {
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['get_rate', { from: 'EUR', to: 'KES' }, '/api/v1/rate?from=EUR&to=KES', 'unsupported_currency'],
      ['get_rate', { from: 'EUR', to: 'XYZ' }, '/api/v1/rate?from=EUR&to=XYZ', 'invalid_currency'],
      ['get_rate', { from: 'EUR', to: 'US' }, '/api/v1/rate?from=EUR&to=US', 'invalid_currency'],
      ['get_rate', { from: 'EUR', to: 'USD', date: '2026-02-30' }, '/api/v1/rate?from=EUR&to=USD&date=2026-02-30', 'invalid_date'],
      ['get_rate', { from: 'EUR', to: 'USD', source: 'nowhere' }, '/api/v1/rate?from=EUR&to=USD&source=nowhere', 'unsupported_source'],
      ['convert', { from: 'EUR', to: 'USD', amount: '-5' }, '/api/v1/convert?from=EUR&to=USD&amount=-5', 'invalid_amount'],
      ['convert', { from: 'EUR', to: 'USD' }, '/api/v1/convert?from=EUR&to=USD', 'missing_parameter'],
      ['get_rates', { from: 'EUR', to: 'USD,USD' }, '/api/v1/rates?from=EUR&to=USD,USD', 'invalid_currency'],
      ['get_history', { from: 'EUR', to: 'USD', range: '2y' }, '/api/v1/history?from=EUR&to=USD&range=2y', 'invalid_range'],
      ['get_history', { from: 'EUR', to: 'USD', end: '2026-01-01' }, '/api/v1/history?from=EUR&to=USD&end=2026-01-01', 'missing_parameter'],
    ];
    for (const [tool, args, path, code] of cases) {
      const result = await call(client, tool, args);
      const problem = (await rest(path)).body;
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
      assert.equal(problem.code, code, path);
      assert.deepEqual(result.structuredContent, problem, `${tool} ${JSON.stringify(args)}`);
      assert.equal(text(result), `${code}: ${String(problem.detail)}`);
    }
    // An amount sent as a JSON number is taken when it is certainly the number written, and refused when digits may be lost.
    for (const amount of [100, 99.95]) {
      const numeric = await call(client, 'convert', { from: 'EUR', to: 'USD', amount });
      assert.deepEqual(numeric.structuredContent, (await rest(`/api/v1/convert?from=EUR&to=USD&amount=${amount}`)).body);
    }
    const lossy = await call(client, 'convert', { from: 'EUR', to: 'USD', amount: 1234567890123456.7 });
    assert.equal(lossy.isError, true);
    assert.equal((lossy.structuredContent as { code: string }).code, 'invalid_amount');
    assert.match(text(lossy), /send it as a decimal string/);
    // A negative number is refused as the API refuses amount=-5, with its wording.
    const negative = await call(client, 'convert', { from: 'EUR', to: 'USD', amount: -5 });
    assert.deepEqual(negative.structuredContent, (await rest('/api/v1/convert?from=EUR&to=USD&amount=-5')).body);
    assert.match(text(negative), /^invalid_amount: amount must be given once, as a non-negative decimal/);
    const boolean = await call(client, 'convert', { from: 'EUR', to: 'USD', amount: true });
    assert.deepEqual(boolean.structuredContent, (await rest('/api/v1/convert?from=EUR&to=USD&amount=true')).body);
  });

  it('counts each tool call once, and nothing else, against the key', async () => {
    const start = await used();
    const other = await connect(base, { 'X-Api-Key': key });
    await other.listTools();
    assert.equal(await used(), start, 'initialize, the initialized notification and tools/list do not count');
    await call(other, 'get_rate', { from: 'EUR', to: 'USD' });
    assert.equal(await used(), start + 1);
    await call(other, 'get_rate', { from: 'EUR', to: 'XYZ' });
    assert.equal(await used(), start + 2, 'a call refused for its arguments counts, as an API request does');
    // The client's McpError names the code once: "MCP error -32602: No tool …", not twice.
    await assert.rejects(call(other, 'get_weather', {}), (error: Error) => {
      assert.equal(error.message, "MCP error -32602: No tool 'get_weather': tools/list names them.");
      return true;
    });
    assert.equal(await used(), start + 3, 'a call of a tool that does not exist counts, as a request to an API path that names nothing does');
    await other.close();
    assert.equal(await used(), start + 3);
  });

  it('carries the quota headers of the count on the answer to a tool call', async () => {
    const headers = { 'X-Api-Key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_rate', arguments: { from: 'EUR', to: 'USD' } } });
    const before = await used();
    const response = await fetch(`${base}/mcp`, { method: 'POST', headers, body });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-ratelimit-limit'), '100000');
    assert.equal(response.headers.get('x-ratelimit-remaining'), String(100000 - before - 1));
    const answer = (await response.json()) as { result: CallToolResult };
    assert.equal((answer.result.structuredContent as { rate: string }).rate, '1.1618');
  });

  it('refuses every request without a valid key with the API 401, before reading it, and takes Bearer', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const post = (headers: Record<string, string>, body = initialize) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
    const refusedHeaders: Array<Record<string, string>> = [{}, { 'X-Api-Key': unissuedKey() }, { authorization: `Bearer ${unissuedKey()}` }, { authorization: `Basic ${key}` }];
    for (const headers of refusedHeaders) {
      const response = await post(headers);
      assert.equal(response.status, 401, JSON.stringify(headers));
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
      // Not a Bearer challenge, which MCP clients take as an OAuth server's and start a flow from.
      assert.equal(response.headers.get('www-authenticate'), 'ApiKey realm="exrates", header="X-Api-Key"');
      const problem = (await response.json()) as { code: string; detail: string };
      assert.equal(problem.code, 'unauthorized');
      assert.match(problem.detail, /keys@example\.org/);
    }
    // Not even a body too large or not JSON is looked at without a key; with one, the bound is 64 KiB.
    assert.equal((await post({}, 'x'.repeat(200_000))).status, 401);
    const tooLarge = await post({ 'X-Api-Key': key }, 'x'.repeat(65 * 1024));
    assert.equal(tooLarge.status, 413);
    assert.match(tooLarge.headers.get('content-type') ?? '', /^application\/problem\+json/);

    await assert.rejects(connect(base, {}), /401/);
    await assert.rejects(connect(base, { 'X-Api-Key': unissuedKey() }), /401/);

    const start = await used();
    const bearer = await connect(base, { Authorization: `Bearer ${key}` });
    const rate = await call(bearer, 'get_rate', { from: 'EUR', to: 'USD' });
    assert.equal((rate.structuredContent as { rate: string }).rate, '1.1618');
    assert.equal(await used(), start + 1);
    await bearer.close();

    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      assert.equal((await fetch(`${base}/mcp`, { method })).status, 401);
      const response = await fetch(`${base}/mcp`, { method, headers: { 'X-Api-Key': key } });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'POST');
    }
  });
});

describe('the MCP endpoint at the quota, and when a feed fails', () => {
  let test: TestApp;
  let base: string;

  before(async () => {
    test = await createTestApp({ EXRATES_QUOTA_FREE: '3' });
    base = await listenApp(test.app);
  });

  after(async () => {
    await test?.close();
  });

  it('says stale: true as the API does once the provider\'s latest refresh failed', async () => {
    const key = await issueKey(test.deps, 'pro');
    await test.deps.rates.recordAttempt('file', { at: '2026-03-06T11:00:00Z', ok: false, error: 'unreachable' });
    test.deps.book.invalidate();
    const client = await connect(base, { 'X-Api-Key': key });
    const rest = async (path: string) => (await (await fetch(`${base}${path}`, { headers: { 'X-Api-Key': key } })).json()) as Record<string, unknown>;
    const rate = await call(client, 'get_rate', { from: 'EUR', to: 'USD' });
    assert.deepEqual(rate.structuredContent, await rest('/api/v1/rate?from=EUR&to=USD'));
    assert.equal((rate.structuredContent as { stale: boolean }).stale, true);
    assert.match(text(rate), /STALE: the provider's latest refresh failed/);
    const many = await call(client, 'get_rates', { from: 'EUR', to: 'USD,GBP', amount: '5' });
    assert.deepEqual(many.structuredContent, await rest('/api/v1/rates?from=EUR&to=USD,GBP&amount=5'));
    assert.match(text(many), /USD [\d.]+ \(rate [\d.]+\), as of 2026-03-05T15:00:00Z, STALE/);
    const providers = await call(client, 'list_providers');
    assert.deepEqual(providers.structuredContent, await rest('/api/v1/providers'));
    assert.match(text(providers), /latest refresh FAILED$/);
    await test.deps.rates.recordAttempt('file', { at: '2026-03-06T11:10:00Z', ok: true });
    test.deps.book.invalidate();
    assert.equal(((await call(client, 'get_rate', { from: 'EUR', to: 'USD' })).structuredContent as { stale: boolean }).stale, false);
    await client.close();
  });

  it('answers a tool call past the quota with the API 429 problem as a tool error, not counted', async () => {
    const key = await issueKey(test.deps, 'free');
    const client = await connect(base, { 'X-Api-Key': key });
    for (let i = 0; i < 2; i += 1) assert.equal((await call(client, 'get_rate', { from: 'EUR', to: 'USD' })).isError, undefined);
    const rest = await fetch(`${base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key } });
    assert.equal(rest.status, 200, 'the third request of three, through the API');

    const refused = await call(client, 'convert', { from: 'EUR', to: 'USD', amount: '1' });
    assert.equal(refused.isError, true);
    const restRefused = await fetch(`${base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key } });
    assert.equal(restRefused.status, 429);
    const problem = (await restRefused.json()) as { code: string; detail: string };
    assert.equal(problem.code, 'quota_exceeded');
    assert.deepEqual(refused.structuredContent, problem);
    assert.equal(text(refused), `quota_exceeded: ${problem.detail}`);
    // Listing still answers: only tool calls count, and a refused one is not counted.
    assert.equal((await client.listTools()).tools.length, TOOLS.length);
    const usage = (await (await fetch(`${base}/api/v1/usage`, { headers: { 'X-Api-Key': key } })).json()) as { used: number; remaining: number };
    assert.deepEqual([usage.used, usage.remaining], [3, 0]);
    await client.close();
  });
});
