import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';
import { issueKey, loadAll, tempDir, testConfig } from '../helper.js';

test('request logs never contain an API key, from the header or the query', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const dir = tempDir();
  const deps = await createDeps(testConfig(dir.path), { log: createLogger('info', sink) });
  try {
    await loadAll(deps);
    const app = await buildApp(deps, { logRequests: true });
    const key = await issueKey(deps);
    await app.inject({ method: 'GET', url: `/api/v1/rate?from=EUR&to=USD&apikey=${key}` });
    await app.inject({ method: 'GET', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': key } });
    await app.inject({ method: 'GET', url: `/api/v1/rate?apikey=${key}&from=EUR&to=ZZZ` });
    await app.close();
    const log = lines.join('');
    assert.ok(lines.length >= 6, 'requests were logged');
    assert.match(log, /apikey=\[REDACTED\]/);
    assert.ok(!log.includes(key), 'the key does not appear in the log');
    assert.ok(!log.includes(key.slice(4)), 'no part of the key body appears either');
  } finally {
    await deps.close();
    dir.remove();
  }
});

test('a key in a header a line carries is redacted, X-Api-Key or Authorization alike', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = createLogger('info', sink);
  const secret = 'exr_0123456789abcdefghijklmnopqrstuv';
  // (A request itself is logged as its id, method, redacted URL and address: never its headers.)
  log.info({ headers: { 'x-api-key': secret, authorization: `Bearer ${secret}`, accept: 'text/csv' } }, 'headers');
  const text = lines.join('');
  assert.equal(lines.length, 1);
  assert.ok(!text.includes(secret.slice(4)), text);
  assert.deepEqual(JSON.parse(text).headers, { 'x-api-key': '[REDACTED]', authorization: '[REDACTED]', accept: 'text/csv' });
});

test('the start logs one listening line, with an address a person can open', async () => {
  const records: Array<{ msg?: string; url?: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line));
      done();
    },
  });
  const dir = tempDir();
  try {
    const server = await startServer(testConfig(dir.path, { PORT: '0', HOST: '0.0.0.0' }), { log: createLogger('info', sink) });
    await server.close();
    const listening = records.filter((r) => /listening/i.test(String(r.msg)));
    assert.equal(listening.length, 1, JSON.stringify(listening));
    assert.match(String(listening[0]!.url), /^http:\/\/localhost:\d+\/$/);
  } finally {
    dir.remove();
  }
});

test("a request's log lines carry its id and the service's bindings", async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const dir = tempDir();
  const log = createLogger('info', sink);
  const deps = await createDeps(testConfig(dir.path), { log });
  try {
    const app = await buildApp(deps, { logRequests: true });
    await app.inject({ method: 'GET', url: '/healthz' });
    await app.close();
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const incoming = records.find((r) => r.msg === 'incoming request');
    const completed = records.find((r) => r.msg === 'request completed');
    assert.ok(incoming && completed, JSON.stringify(records));
    assert.match(String(incoming.reqId), /^req-/);
    assert.equal(completed.reqId, incoming.reqId);
    assert.equal(incoming.service, 'exrates');
  } finally {
    await deps.close();
    dir.remove();
  }
});
