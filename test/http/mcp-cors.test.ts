/**
 * /mcp and the API for web pages and HTTP clients: the CORS preflight of each (POST and the MCP
 * headers on /mcp; Authorization on the API), the headers an answer exposes, the Origin check of
 * EXRATES_MCP_ORIGINS, Authorization: Bearer on the API, and the transport's own defects (a body
 * that is not JSON, a chunked body past the bound) answered with their own codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createTestApp, unissuedKey, type TestApp } from '../helper.js';
import { listenApp } from '../support/ports.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
});
const GET_RATE = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_rate', arguments: { from: 'EUR', to: 'USD' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

const listed = (value: string | number | string[] | undefined) =>
  String(value ?? '')
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');

describe('CORS and keys for pages and clients, any origin (the default)', () => {
  let test: TestApp;

  before(async () => {
    test = await createTestApp();
  });

  after(async () => {
    await test?.close();
  });

  const used = async () => (JSON.parse((await test.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': test.key } })).body) as { used: number }).used;

  it('answers the preflight of /mcp with POST and every header an MCP client sends', async () => {
    const response = await test.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization,mcp-protocol-version,mcp-session-id,last-event-id',
      },
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.ok(listed(response.headers['access-control-allow-methods']).includes('post'));
    const allowed = listed(response.headers['access-control-allow-headers']);
    for (const header of ['content-type', 'authorization', 'x-api-key', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) assert.ok(allowed.includes(header), header);
  });

  it('answers the API preflight with Authorization allowed, for a Bearer key, and still GET and HEAD only', async () => {
    const response = await test.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/rate?from=EUR&to=USD',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.deepEqual(listed(response.headers['access-control-allow-methods']), ['get', 'head']);
    assert.ok(listed(response.headers['access-control-allow-headers']).includes('authorization'));
    assert.ok(listed(response.headers['access-control-allow-headers']).includes('x-api-key'));
  });

  it('exposes the MCP headers beside the quota headers on every /mcp answer, the 401 included', async () => {
    const answered = await test.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, origin: 'https://app.example.com', authorization: `Bearer ${test.key}` }, payload: GET_RATE });
    assert.equal(answered.statusCode, 200);
    assert.equal(answered.headers['access-control-allow-origin'], '*');
    const exposed = listed(answered.headers['access-control-expose-headers']);
    for (const header of ['mcp-session-id', 'mcp-protocol-version', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'www-authenticate']) {
      assert.ok(exposed.includes(header), header);
    }
    assert.ok(answered.headers['x-ratelimit-remaining'] !== undefined);
    const refused = await test.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, origin: 'https://app.example.com' }, payload: INITIALIZE });
    assert.equal(refused.statusCode, 401);
    assert.ok(listed(refused.headers['access-control-expose-headers']).includes('mcp-session-id'));
  });

  it('takes Authorization: Bearer on the API as on /mcp; X-Api-Key wins, another scheme leaves the query key', async () => {
    const rate = (headers: Record<string, string>, query = '') => test.app.inject({ url: `/api/v1/rate?from=EUR&to=USD${query}`, headers });
    const start = await used();
    const bearer = await rate({ authorization: `Bearer ${test.key}` });
    assert.equal(bearer.statusCode, 200);
    assert.equal((JSON.parse(bearer.body) as { rate: string }).rate, '1.1618');
    assert.equal(await used(), start + 1, 'a Bearer request counts against its key');
    assert.equal((await rate({ authorization: `bearer ${test.key}` })).statusCode, 200, 'the scheme is case-insensitive');

    const wrong = await rate({ authorization: `Bearer ${unissuedKey()}` });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.headers['www-authenticate'], 'ApiKey realm="exrates", header="X-Api-Key", query="apikey"');
    const problem = JSON.parse(wrong.body) as { code: string; detail: string };
    assert.equal(problem.code, 'unauthorized');
    assert.match(problem.detail, /X-Api-Key header, as Authorization: Bearer <key> or in the apikey query parameter/);

    assert.equal((await rate({ 'x-api-key': test.key, authorization: `Bearer ${unissuedKey()}` })).statusCode, 200, 'X-Api-Key wins over Bearer');
    assert.equal((await rate({ 'x-api-key': unissuedKey(), authorization: `Bearer ${test.key}` })).statusCode, 401, 'a wrong X-Api-Key is not rescued by Bearer');
    assert.equal((await rate({ authorization: `Basic ${test.key}` }, `&apikey=${test.key}`)).statusCode, 200, 'a Basic header (a proxy\'s) leaves the query key');
    assert.equal((await rate({ authorization: `Bearer ${unissuedKey()}` }, `&apikey=${test.key}`)).statusCode, 401, 'Bearer wins over the query');
  });

  it('answers the MCP 401 with an ApiKey challenge, not the Bearer one clients take for OAuth, and serves no OAuth metadata', async () => {
    const refused = await test.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, authorization: `Bearer ${unissuedKey()}` }, payload: INITIALIZE });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['www-authenticate'], 'ApiKey realm="exrates", header="X-Api-Key"');
    assert.doesNotMatch(String(refused.headers['www-authenticate']), /^Bearer|resource_metadata/);
    assert.equal((JSON.parse(refused.body) as { code: string }).code, 'unauthorized');
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server']) {
      assert.equal((await test.app.inject({ url: path })).statusCode, 404, path);
    }
  });

  it('answers a body that is not JSON with malformed_request and a chunked body past 64 KiB with payload_too_large', async () => {
    const base = await listenApp(test.app);
    const notJson = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': test.key }, body: '{"jsonrpc": "2.0", "id": 1,' });
    assert.equal(notJson.status, 400);
    assert.equal(((await notJson.json()) as { code: string }).code, 'malformed_request');
    const chunk = new TextEncoder().encode(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(70 * 1024)}"}}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const chunked = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'x-api-key': test.key }, body, duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(((await chunked.json()) as { code: string }).code, 'payload_too_large');
  });
});

describe('EXRATES_MCP_ORIGINS: the origins whose pages may call /mcp', () => {
  let test: TestApp;
  const ALLOWED = 'https://app.example.com';

  before(async () => {
    test = await createTestApp({ EXRATES_MCP_ORIGINS: `${ALLOWED}, http://localhost:3000` });
  });

  after(async () => {
    await test?.close();
  });

  const used = async () => (JSON.parse((await test.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': test.key } })).body) as { used: number }).used;
  const post = (headers: Record<string, string>, payload = GET_RATE) => test.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, 'x-api-key': test.key, ...headers }, payload });

  it('reads the setting as the origins browsers send, or * alone, and names an entry that is not an origin', () => {
    assert.equal(loadConfig({}).mcpOrigins, '*');
    assert.equal(loadConfig({ EXRATES_MCP_ORIGINS: ' * ' }).mcpOrigins, '*');
    assert.deepEqual(loadConfig({ EXRATES_MCP_ORIGINS: 'https://App.Example.com/, http://localhost:3000, https://x.example:443' }).mcpOrigins, [
      'https://app.example.com',
      'http://localhost:3000',
      'https://x.example',
    ]);
    for (const [value, entry] of [
      ['https://app.example.com/path', 'https://app.example.com/path'],
      ['app.example.com', 'app.example.com'],
      ['*, https://app.example.com', '*'],
      ['https://a.example,,https://b.example', ''],
      ['ftp://files.example', 'ftp://files.example'],
    ] as const) {
      assert.throws(() => loadConfig({ EXRATES_MCP_ORIGINS: value }), (error: Error) => {
        assert.ok(error.message.includes(`EXRATES_MCP_ORIGINS: '${entry}' is not an origin`), error.message);
        return true;
      });
    }
  });

  it('answers a page of a listed origin with that origin, varying on Origin', async () => {
    const answered = await post({ origin: ALLOWED });
    assert.equal(answered.statusCode, 200);
    assert.equal(answered.headers['access-control-allow-origin'], ALLOWED);
    assert.ok(listed(answered.headers.vary).includes('origin'));
    const preflight = await test.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:3000');
  });

  it('refuses a page of another origin with a 403 before its key is read, counting nothing and granting no CORS', async () => {
    const start = await used();
    for (const origin of ['https://evil.example', 'null', 'https://app.example.com.evil.example']) {
      const refused = await post({ origin });
      assert.equal(refused.statusCode, 403, origin);
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
      const answer = JSON.parse(refused.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
      assert.equal(answer.jsonrpc, '2.0');
      assert.equal(answer.id, null);
      assert.match(answer.error.message, /may not call this MCP endpoint/);
      assert.doesNotMatch(answer.error.message, /localhost:3000/, 'the allowed origins are not told');
    }
    assert.equal((await post({ origin: 'https://evil.example' }, INITIALIZE)).statusCode, 403);
    assert.equal((await test.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, origin: 'https://evil.example' }, payload: INITIALIZE })).statusCode, 403, 'not a 401: the origin is judged first');
    assert.equal(await used(), start);
    const preflight = await test.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  });

  it('answers a client that sends no Origin (not a browser), and keeps the API open to every origin', async () => {
    const start = await used();
    const answered = await post({});
    assert.equal(answered.statusCode, 200);
    assert.equal(answered.headers['access-control-allow-origin'], undefined);
    assert.equal(await used(), start + 1);
    const rest = await test.app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { origin: 'https://evil.example', 'x-api-key': test.key } });
    assert.equal(rest.statusCode, 200);
    assert.equal(rest.headers['access-control-allow-origin'], '*');
  });
});
