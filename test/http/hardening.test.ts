/**
 * Requests that never reach a route the ordinary way: what Node's HTTP parser rejects, methods
 * and bodies the read-only API does not take, errors raised before routing, and keys sent where
 * the log redaction did not look. Each is answered as problem+json (SPEC §7) with a code from the
 * fixed set, and no key reaches a log line. Raw sockets on a listening app, since `inject`
 * bypasses Node's parser.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { PROBLEMS } from '../../src/http/problem.js';
import { createLogger, redactUrl } from '../../src/log.js';
import { issueKey, loadAll, tempDir, testConfig } from '../helper.js';
import { listenApp } from '../support/ports.js';
import { rawRequest } from '../support/raw-http.js';

/** The first response to the bytes as sent, its body as UTF-8 text. */
async function raw(port: number, request: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const reply = await rawRequest(port, request, { timeoutMs: 5_000 });
  return { ...reply, body: reply.body.toString('utf8') };
}

function assertProblem(reply: { status: number; headers: Record<string, unknown>; body: string }, status: number, code: string): Record<string, unknown> {
  assert.equal(reply.status, status, reply.body);
  assert.equal(String(reply.headers['content-type']), 'application/problem+json; charset=utf-8');
  assert.equal(reply.headers['x-content-type-options'], 'nosniff');
  const problem = JSON.parse(reply.body) as Record<string, unknown>;
  assert.equal(problem.status, status);
  assert.equal(problem.code, code);
  assert.ok((ERROR_CODES as readonly string[]).includes(String(problem.code)));
  assert.equal(problem.type, `/problems/${code}`);
  assert.equal(PROBLEMS[code as keyof typeof PROBLEMS].status, status, 'a code means one status everywhere');
  assert.equal(typeof problem.title, 'string');
  assert.equal(typeof problem.detail, 'string');
  return problem;
}

describe('requests outside the ordinary path', () => {
  const dir = tempDir();
  const lines: string[] = [];
  let deps: Deps;
  let app: FastifyInstance;
  let port: number;
  let key: string;

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    deps = await createDeps(testConfig(dir.path), { log: createLogger('info', sink) });
    await loadAll(deps);
    app = await buildApp(deps, { logRequests: true });
    port = Number(new URL(await listenApp(app)).port);
    key = await issueKey(deps);
  });

  after(async () => {
    await app.close();
    await deps.close();
    dir.remove();
  });

  it('a request line the parser rejects is a 400 problem, not a bare JSON error', async () => {
    for (const request of ['GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /api/v1/rate\x00 HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /healthz HTTP/1.1\nHost: x\n\n', 'GET /api/v1/r\u00e1te HTTP/1.1\r\nHost: x\r\n\r\n']) {
      assertProblem(await raw(port, Buffer.from(request, 'utf8')), 400, 'malformed_request');
    }
  });

  it('malformed headers and framing are 400 problems', async () => {
    const requests = [
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n',
    ];
    for (const request of requests) assertProblem(await raw(port, request), 400, 'malformed_request');
  });

  it('a request line and headers over the limit are a 431 problem', async () => {
    assertProblem(await raw(port, `GET /api/v1/rate?from=EUR&to=USD HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'header_too_large');
    assertProblem(await raw(port, `GET /api/v1/rate?from=EUR&to=USD&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431, 'header_too_large');
  });

  it('a method the parser does not know, and CONNECT, are 405 problems with Allow', async () => {
    for (const request of ['FOO /api/v1/rate HTTP/1.1\r\nHost: x\r\n\r\n', 'GARBAGE\r\n\r\n']) {
      const unknown = await raw(port, request);
      assertProblem(unknown, 405, 'method_not_allowed');
      assert.equal(unknown.headers.allow, 'GET, HEAD');
    }
    const connect = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assertProblem(connect, 405, 'method_not_allowed');
    assert.equal(connect.headers.allow, 'GET, HEAD');
  });

  it("HTTP/2's preface method PRI is a 405 problem, also when its key would have to be looked up first", async () => {
    // Node closes such a connection as soon as the handler returns: an answer that waited for a key lookup was lost.
    const unknownKey = `exr_${'Q'.repeat(32)}`;
    for (const request of [
      `PRI /api/v1/history?from=USD&to=CHF&range=1m\r\nHost: x\r\nX-Api-Key: ${unknownKey}\r\n\r\n`,
      `PRI /api/v1/rate?from=EUR&to=USD\r\nHost: x\r\nX-Api-Key: ${key}\r\n\r\n`,
      'PRI /healthz\r\nHost: x\r\n\r\n',
    ]) {
      const reply = await raw(port, request);
      assertProblem(reply, 405, 'method_not_allowed');
      assert.equal(reply.headers.allow, 'GET, HEAD');
    }
  });

  it('an HTTP/1.1 request without Host is a 400 problem; HTTP/1.0 needs none', async () => {
    assertProblem(await raw(port, 'GET /healthz HTTP/1.1\r\n\r\n'), 400, 'malformed_request');
    assert.equal((await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
  });

  it('every other method on an API path is a 405 before any body is read, whatever its type or size', async () => {
    const bodies = [
      'POST /api/v1/rate HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 3\r\n\r\nabc',
      'POST /api/v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\nabc',
      `PUT /api/v1/history HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n${'a'.repeat(5000)}`,
      'PROPFIND /api/v1/rate HTTP/1.1\r\nHost: x\r\n\r\n',
      'SEARCH /api/v1/convert HTTP/1.1\r\nHost: x\r\n\r\n',
      'TRACE /api/v1/history HTTP/1.1\r\nHost: x\r\n\r\n',
    ];
    for (const request of bodies) {
      const reply = await raw(port, request);
      assertProblem(reply, 405, 'method_not_allowed');
      assert.equal(reply.headers.allow, 'GET, HEAD');
    }
  });

  it('a method nothing is routed for is a 404 before its body is read, not a 415 about the body', async () => {
    const reply = await raw(port, 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc');
    assertProblem(reply, 404, 'not_found');
  });

  it('a request read whole is answered whole, and counted once, even when bad bytes follow it on the connection', async () => {
    const record = (await deps.keys.list()).find((r) => key.startsWith(r.prefix))!;
    const before = await deps.quotas.used(record.id, '2026-03-06');
    const reply = await raw(port, `GET /api/v1/rate?from=EUR&to=USD HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\n\r\nGARBAGE\r\n\r\n`);
    assert.equal(reply.status, 200, reply.body);
    assert.equal(reply.headers['x-ratelimit-remaining'], String(1000 - before - 1), 'the answer the key was counted for');
    assert.equal(await deps.quotas.used(record.id, '2026-03-06'), before + 1);
  });

  it('errors raised before routing carry nosniff too', async () => {
    assertProblem(await raw(port, 'GET /api/v1/%zz HTTP/1.1\r\nHost: x\r\n\r\n'), 404, 'not_found');
    assertProblem(await raw(port, `GET /problems/${'x'.repeat(300)} HTTP/1.1\r\nHost: x\r\n\r\n`), 404, 'not_found');
  });

  it("a static file outside the docs folder is refused with a problem that names no parameter", async () => {
    const reply = await raw(port, 'GET /docs/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.ok(reply.status === 403 || reply.status === 404, String(reply.status));
    assertProblem(reply, reply.status, 'not_found');
    assert.doesNotMatch(reply.body, /root:/);
  });

  it('an OPTIONS request that is not a preflight gets CORS headers, not a bare-text 400', async () => {
    const reply = await raw(port, 'OPTIONS /api/v1/rate HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.ok(reply.status < 300, `${reply.status} ${reply.body}`);
    assert.equal(reply.headers['access-control-allow-origin'], '*');
  });

  it('no key reaches the log, however its parameter name is encoded or wherever it is put', async () => {
    const requests = [
      `GET /api/v1/rate?from=EUR&to=USD&%61pikey=${key} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/rate?from=EUR&to=USD&APIKEY=${key} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/rate?from=EUR&to=USD&apikey=${key.replace('_', '%5F')} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/${key}?from=EUR HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/rate?from=${key}&to=USD HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\n\r\n`,
    ];
    const first = await raw(port, requests[0]!);
    assert.equal(first.status, 200, 'a percent-encoded parameter name is still the apikey parameter');
    for (const request of requests.slice(1)) await raw(port, request);
    const log = lines.join('');
    assert.ok(log.includes('[REDACTED]'), 'requests were logged');
    assert.ok(!log.includes(key.slice(4)), 'no key body in the log');
  });

  it('redactUrl removes keys and leaves everything else', () => {
    assert.equal(redactUrl('/api/v1/rate?from=EUR&to=USD'), '/api/v1/rate?from=EUR&to=USD');
    assert.equal(redactUrl('/a?%61pikey=secret&from=EUR'), '/a?%61pikey=[REDACTED]&from=EUR');
    assert.equal(redactUrl('/a?apikey'), '/a?apikey=[REDACTED]');
    assert.equal(redactUrl('/a/exr_0123456789abcdef?x=exr%5F0123456789abcdef'), '/a/exr_[REDACTED]?x=exr_[REDACTED]');
    assert.equal(redactUrl('/a?%zz=1'), '/a?%zz=1');
  });
});
