import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { createDeps } from '../../src/deps.js';
import { createLogger } from '../../src/log.js';
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
