import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createDeps } from '../../src/deps.js';
import { createLogger, deferringChildren } from '../../src/log.js';
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

test("a request's logger is made when the request first logs, and carries its bindings", () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const base = createLogger('info', sink);
  let made = 0;
  const makeChild = base.child.bind(base);
  base.child = ((...args: Parameters<typeof base.child>) => {
    made += 1;
    return makeChild(...args);
  }) as typeof base.child;
  const log = deferringChildren(base);
  const requestLog = log.child({ reqId: 'req-1' });
  assert.equal(made, 0, 'nothing is made for a request that does not log');
  assert.equal(requestLog.level, 'info');
  requestLog.warn({ dependency: 'redis' }, 'dependency unavailable');
  requestLog.info('again');
  assert.equal(made, 1, 'one child, made at the first line');
  log.info('not a request');
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    records.map(({ reqId, msg, dependency, service }) => ({ reqId, msg, dependency, service })),
    [
      { reqId: 'req-1', msg: 'dependency unavailable', dependency: 'redis', service: 'exrates' },
      { reqId: 'req-1', msg: 'again', dependency: undefined, service: 'exrates' },
      { reqId: undefined, msg: 'not a request', dependency: undefined, service: 'exrates' },
    ],
  );
  log.level = 'warn';
  assert.equal(base.level, 'warn', "the app logger's level is the logger's own");
});
