/**
 * Bounded work per request, and the HTTP edge as an attacker meets it, over real sockets on
 * loopback: bodies refused from their headers before a byte of them is read, JSON-RPC batches on
 * /mcp as the negotiated protocol version allows them and each message counted, two Host headers,
 * /metrics off the public port, /readyz without upstream addresses, the /docs redirect, and every
 * request under /api/ with a valid key counted however its target is written.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { buildMetricsApp } from '../../src/app.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';
import { createTestApp, issueKey, tempDir, testConfig, type TestApp } from '../helper.js';
import { freePort, listenApp } from '../support/ports.js';
import { parseMetrics } from '../support/prometheus.js';
import { parseResponse, rawRequest, type RawReply } from '../support/raw-http.js';

const TODAY = '2026-03-06';

/**
 * Sends the request's head (and whatever body bytes are given, never the rest) and keeps the
 * connection open: the answer as parsed, whether the server closed the connection after it, and
 * how many bytes were written in all.
 */
function headOnly(port: number, head: string, bodyBytes = 0): Promise<{ reply: RawReply; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let reply: RawReply | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      if (reply) resolve({ reply, closedByServer: false });
      else reject(new Error(`no answer: ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      reply ??= parseResponse(Buffer.concat(chunks));
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      reply ??= parseResponse(Buffer.concat(chunks));
      if (reply) resolve({ reply, closedByServer: true });
      else reject(new Error('closed without an answer'));
    });
    socket.on('error', () => undefined);
    socket.write(head);
    if (bodyBytes > 0) socket.write(Buffer.alloc(bodyBytes, 0x61));
  });
}

function problemOf(reply: RawReply): { status: number; code: string; detail: string } {
  assert.match(String(reply.headers['content-type']), /^application\/problem\+json/);
  return JSON.parse(reply.body.toString('utf8')) as { status: number; code: string; detail: string };
}

describe('the HTTP edge', () => {
  let test: TestApp;
  let port: number;
  let key: string;
  let base: string;

  before(async () => {
    test = await createTestApp({ EXRATES_METRICS_TOKEN: 'scrape-token-0123456789' });
    key = await issueKey(test.deps, 'pro');
    base = await listenApp(test.app);
    port = Number(new URL(base).port);
  });

  after(async () => {
    await test?.close();
  });

  async function used(): Promise<number> {
    const record = (await test.deps.keys.list()).find((r) => key.startsWith(r.prefix))!;
    return test.deps.quotas.used(record.id, TODAY);
  }

  it('refuses a body longer than its route reads from its headers, with 413, and closes without reading it', async () => {
    const tenMegabytes = 10 * 1024 * 1024;
    const before = await used();
    const rate = await headOnly(port, `GET /api/v1/rate?from=EUR&to=USD HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Length: ${tenMegabytes}\r\n\r\n`, 1000);
    assert.equal(rate.reply.status, 413);
    assert.equal(problemOf(rate.reply).code, 'payload_too_large');
    assert.equal(rate.reply.headers.connection, 'close');
    assert.ok(rate.closedByServer, 'the connection is closed, so the rest of the body is never read');
    assert.equal(await used(), before + 1, 'a request with a valid key counts, as every one under /api/ does');

    // Without a key, the 401 comes first (nothing of the body is read either way).
    const unkeyed = await headOnly(port, `GET /api/v1/rate?from=EUR&to=USD HTTP/1.1\r\nHost: x\r\nContent-Length: ${tenMegabytes}\r\n\r\n`);
    assert.equal(unkeyed.reply.status, 401);
    assert.ok(unkeyed.closedByServer);

    for (const target of ['/healthz', '/readyz', '/docs/', '/api/v1/openapi.json', '/', '/nothing']) {
      const { reply, closedByServer } = await headOnly(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: ${tenMegabytes}\r\n\r\n`);
      assert.equal(reply.status, 413, target);
      assert.equal(problemOf(reply).code, 'payload_too_large', target);
      assert.ok(closedByServer, target);
    }
    // A path under /api/ or a method that no route takes is answered as such (counted with a
    // valid key), and its body is not read either.
    for (const [head, status] of [
      [`GET /api/v1/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: ${tenMegabytes}\r\n\r\n`, 404],
      [`POST /api/v1/rate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${tenMegabytes}\r\n\r\n`, 405],
    ] as const) {
      const { reply, closedByServer } = await headOnly(port, head);
      assert.equal(reply.status, status, head);
      assert.ok(closedByServer, head);
    }
    // /mcp reads up to 64 KiB, once the key is valid.
    const mcp = await headOnly(port, `POST /mcp HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n`);
    assert.equal(mcp.reply.status, 413);
    assert.equal(problemOf(mcp.reply).code, 'payload_too_large');
    assert.ok(mcp.closedByServer);
  });

  it('does not ask for a body it will refuse (Expect: 100-continue), and asks for one it reads', async () => {
    const refused = await headOnly(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`);
    assert.equal(refused.reply.status, 413, 'the first answer is the 413, not a 100 Continue');
    assert.ok(refused.closedByServer);
    const mcp = await rawRequest(port, `POST /mcp HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}`);
    assert.equal(mcp.status, 100, 'the first answer asks for the body');
  });

  it('a body within the limit is still read and the connection kept', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const ask = () =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const request = http.request(`${base}/healthz`, { method: 'GET', agent, headers: { 'content-length': '1024' } }, (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, reused: request.reusedSocket }));
          });
          request.on('error', reject);
          request.end(Buffer.alloc(1024, 0x61));
        });
      assert.deepEqual(await ask(), { status: 200, reused: false });
      assert.deepEqual(await ask(), { status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('closes the connection after answering a chunked body no route reads, instead of reading it to its end', async () => {
    const { reply, closedByServer } = await headOnly(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n' + 'a'.repeat(1024) + '\r\n');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.connection, 'close');
    assert.ok(closedByServer);
  });

  it('a body /mcp cannot read is its own code, with the status the problems table gives it', async () => {
    const post = (type: string, body: string) => fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': type, 'x-api-key': key }, body });
    for (const [response, status, code] of [
      [await post('application/xml', '<a/>'), 415, 'unsupported_media_type'],
      [await post('application/json', '{"jsonrpc": '), 400, 'malformed_request'],
    ] as const) {
      assert.equal(response.status, status);
      const problem = (await response.json()) as { status: number; code: string; type: string };
      assert.deepEqual([problem.status, problem.code, problem.type], [status, code, `/problems/${code}`]);
    }
  });

  it('two Host headers are a 400 (RFC 9112 §3.2)', async () => {
    const two = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n');
    assert.equal(two.status, 400);
    assert.match(problemOf(two).detail, /more than one Host/);
    assert.equal((await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200);
  });

  it('serves /metrics on the public port only to a bearer of the token; to anyone else it is a 404', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: 'Basic scrape-token-0123456789' }];
    for (const headers of attempts) {
      const response = await fetch(`${base}/metrics`, { headers });
      assert.equal(response.status, 404, JSON.stringify(headers));
      assert.equal(((await response.json()) as { code: string }).code, 'not_found');
    }
    const scraped = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456789' } });
    assert.equal(scraped.status, 200);
    assert.ok(parseMetrics(await scraped.text()).size > 10);
  });

  it('hides upstream URLs and addresses from /readyz, which anyone may read', async () => {
    await test.deps.rates.recordAttempt('file', {
      at: '2026-03-06T11:00:00Z',
      ok: false,
      error: 'GET http://mirror.internal:4000/stats/latest.json?app_id=s3cr3t-app-id failed: connect ECONNREFUSED 10.1.2.3:4000; getaddrinfo ENOTFOUND backup.internal',
    });
    test.deps.book.invalidate();
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { providers: Array<{ lastError: string }> };
    const error = ready.providers[0]!.lastError;
    assert.equal(error, 'GET <upstream>/stats/latest.json failed: connect ECONNREFUSED <address withheld>; getaddrinfo ENOTFOUND <host withheld>');
    await test.deps.rates.recordAttempt('file', { at: '2026-03-06T11:10:00Z', ok: true });
    test.deps.book.invalidate();
  });

  it('sends /docs/static/index.html to the page, with or without a query, never to itself', async () => {
    for (const target of ['/docs/static/index.html', '/docs/static/index.html?x', '/docs/static/index.html?url=/docs/static/index.html']) {
      const response = await fetch(`${base}${target}`, { redirect: 'manual' });
      assert.equal(response.status, 302, target);
      assert.equal(response.headers.get('location'), '/docs/', target);
    }
    const page = await fetch(`${base}/docs/static/index.html?x`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
  });

  it('counts every request under /api/ with a valid key, however its target is written', async () => {
    const targets = [
      'http://x/api/v1/rate?from=EUR&to=USD',
      '/%61pi/v1/rate?from=EUR&to=USD',
      '/api/v1/%72ate?from=EUR&to=USD',
      '/api/v1/nothing',
      'http://x/api/v1/nothing',
      '/%61pi/v1/nothing',
      '/%61pi/v1/%72ate?from=EUR&to=USD',
    ];
    for (const target of targets) {
      const before = await used();
      const reply = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\n\r\n`);
      assert.ok(reply.status === 200 || reply.status === 404, `${target}: ${reply.status}`);
      assert.equal(await used(), before + 1, target);
      assert.ok(reply.headers['x-ratelimit-remaining'], `${target} carries the quota headers of its count`);
    }
    // A CORS preflight is not counted (README, "Quotas"): browsers send it without the key.
    const before = await used();
    const preflight = await rawRequest(port, `OPTIONS /api/v1/rate HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\nX-Api-Key: ${key}\r\n\r\n`);
    assert.equal(preflight.status, 204);
    assert.equal(await used(), before);
  });
});

describe('JSON-RPC batches on /mcp', () => {
  let test: TestApp;
  let base: string;
  let key: string;

  before(async () => {
    test = await createTestApp({ EXRATES_QUOTA_FREE: '5' });
    key = test.key;
    base = await listenApp(test.app);
  });

  after(async () => {
    await test?.close();
  });

  async function used(): Promise<number> {
    const record = (await test.deps.keys.list()).find((r) => key.startsWith(r.prefix))!;
    return test.deps.quotas.used(record.id, TODAY);
  }

  const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

  function post(body: unknown, version?: string): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key };
    if (version !== undefined) headers['mcp-protocol-version'] = version;
    return fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  }

  it('refuses a batch from a client whose protocol version has none, or that names none, counting nothing', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => list(i + 1));
    for (const version of [undefined, '2025-06-18', '2025-11-25']) {
      const before = await used();
      const response = await post(batch, version);
      assert.equal(response.status, 400, String(version));
      const answer = (await response.json()) as { id: null; error: { code: number; message: string } };
      assert.equal(answer.error.code, -32600);
      assert.match(answer.error.message, /batches are part of MCP 2025-03-26 only/);
      assert.equal(await used(), before, 'nothing counted');
    }
  });

  it('takes a small batch under 2025-03-26, each message counted; a larger one is refused', async () => {
    const tooMany = await post(Array.from({ length: 11 }, (_, i) => list(i + 1)), '2025-03-26');
    assert.equal(tooMany.status, 400);
    assert.match(((await tooMany.json()) as { error: { message: string } }).error.message, /at most 10 messages/);

    const before = await used();
    const response = await post([list(1), list(2), { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_rate', arguments: { from: 'EUR', to: 'USD' } } }], '2025-03-26');
    assert.equal(response.status, 200);
    const answers = (await response.json()) as Array<{ id: number; result?: { tools?: unknown[]; structuredContent?: { rate: string } } }>;
    assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3]);
    assert.equal(answers.find((a) => a.id === 3)!.result!.structuredContent!.rate, '1.1618');
    assert.equal(await used(), before + 3, 'each message once, the tool call included');
    assert.equal(response.headers.get('x-ratelimit-remaining'), String(5 - before - 3));
  });

  it('answers a batch past the quota with the 429 problem for what it cannot count, and counts only what it answers', async () => {
    const left = 5 - (await used());
    assert.ok(left > 0 && left < 4, `left ${left}`);
    const response = await post([list(1), list(2), list(3), list(4)], '2025-03-26');
    assert.equal(response.status, 200);
    const answers = (await response.json()) as Array<{ id: number; result?: unknown; error?: { code: number; data: { code: string } } }>;
    assert.equal(answers.filter((a) => a.result !== undefined).length, left);
    const refused = answers.filter((a) => a.error !== undefined);
    assert.equal(refused.length, 4 - left);
    for (const answer of refused) assert.equal(answer.error!.data.code, 'quota_exceeded');
    assert.equal(await used(), 5);

    const none = await post([list(1), list(2)], '2025-03-26');
    assert.equal(none.status, 429);
    assert.equal(((await none.json()) as { code: string }).code, 'quota_exceeded');
    assert.equal(await used(), 5, 'a refused batch is not counted');
  });
});

describe('the metrics listener', () => {
  let test: TestApp;

  before(async () => {
    test = await createTestApp();
  });

  after(async () => {
    await test?.close();
  });

  it('serves /metrics without a token and nothing else; the public port does not serve it by default', async () => {
    const metricsApp = await buildMetricsApp(test.deps);
    try {
      const base = await listenApp(metricsApp);
      const scraped = await fetch(`${base}/metrics`);
      assert.equal(scraped.status, 200);
      assert.match(scraped.headers.get('content-type') ?? '', /^text\/plain/);
      assert.ok(parseMetrics(await scraped.text()).size > 10);
      for (const path of ['/healthz', '/api/v1/rate?from=EUR&to=USD']) assert.equal((await fetch(`${base}${path}`)).status, 404, path);
    } finally {
      await metricsApp.close();
    }
    const publicPort = await test.app.inject('/metrics');
    assert.equal(publicPort.statusCode, 404);
    const doc = (await test.app.inject('/api/v1/openapi.json')).json() as { paths: Record<string, unknown> };
    assert.equal(doc.paths['/metrics'], undefined, 'not in the document of a port that does not serve it');
  });

  it('is started and stopped with the server, which says where it is', async () => {
    const dir = tempDir();
    const metricsPort = await freePort();
    const lines: string[] = [];
    const server = await startServer(testConfig(dir.path, { PORT: '0', HOST: '127.0.0.1', EXRATES_METRICS_PORT: String(metricsPort), EXRATES_LOG_LEVEL: 'info' }), {
      log: createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString('utf8')), done()) })),
    });
    try {
      const port = (server.app.server.address() as net.AddressInfo).port;
      assert.ok(lines.some((line) => line.includes(`metrics http://127.0.0.1:${metricsPort}/metrics`)), lines.join(''));
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404);
    } finally {
      await server.close();
      dir.remove();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 'the metrics listener is closed with the server');
  });
});
