import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../helper.js';
import { get } from '../support/http.js';
import { listenApp } from '../support/ports.js';

describe('/history.csv and /history.ndjson: the history in one text format, as operations of their own', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = await listenApp(t.app);
  });
  after(async () => {
    await t.close();
  });
  const fetchWith = (path: string, headers: Record<string, string> = {}) => get(`${base}${path}`, { headers: { 'x-api-key': t.key, ...headers } });

  test('each answers what /history answers with that format: body, type, file name and validator', async () => {
    for (const format of ['csv', 'ndjson'] as const) {
      for (const query of ['from=EUR&to=USD&range=1m', 'from=USD&to=JPY&start=2026-02-02&end=2026-03-02&group=week']) {
        const byFormat = await fetchWith(`/api/v1/history?${query}&format=${format}`);
        const own = await fetchWith(`/api/v1/history.${format}?${query}`);
        assert.equal(own.status, 200, `${format} ${query}`);
        assert.equal(own.body, byFormat.body);
        assert.ok(own.body.length > 0);
        assert.equal(own.headers['content-type'], byFormat.headers['content-type']);
        assert.equal(own.headers['content-disposition'], byFormat.headers['content-disposition']);
        assert.equal(own.headers.etag, byFormat.headers.etag);
        assert.equal(own.headers['cache-control'], byFormat.headers['cache-control']);
        // Its one type is chosen unless Accept excludes it (a 406): it varies on Accept, where format= does not.
        assert.match(String(own.headers.vary), /\bAccept\b/);
      }
    }
    const csv = await fetchWith('/api/v1/history.csv?from=EUR&to=USD&range=1m');
    assert.match(csv.body, /^date,rate\r\n/);
    assert.match(String(csv.headers['content-disposition']), /^attachment; filename="EURUSD_1m\.csv"$/);
  });

  test('they count, take conditional requests and HEAD, and refuse what /history refuses', async () => {
    const first = await fetchWith('/api/v1/history.ndjson?from=EUR&to=USD&range=1m');
    const second = await fetchWith('/api/v1/history.ndjson?from=EUR&to=USD&range=1m', { 'if-none-match': String(first.headers.etag) });
    assert.equal(second.status, 304);
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
    const head = await t.app.inject({ method: 'HEAD', url: '/api/v1/history.csv?from=EUR&to=USD&range=1m', headers: { 'x-api-key': t.key } });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    const bad = await fetchWith('/api/v1/history.csv?from=EUR&to=USD&range=2w');
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.body).code, 'invalid_range');
    const keyless = await get(`${base}/api/v1/history.csv?from=EUR&to=USD`);
    assert.equal(keyless.status, 401);
  });

  test('an Accept that does not admit the operation\'s one type is a 406 naming it', async () => {
    for (const [path, type] of [
      ['/api/v1/history.csv?from=EUR&to=USD', 'text/csv'],
      ['/api/v1/history.ndjson?from=EUR&to=USD', 'application/x-ndjson'],
    ] as const) {
      const refused = await fetchWith(path, { accept: 'application/json' });
      assert.equal(refused.status, 406, path);
      const problem = JSON.parse(refused.body) as { code: string; detail: string };
      assert.equal(problem.code, 'not_acceptable');
      assert.ok(problem.detail.includes(type), problem.detail);
      assert.equal((await fetchWith(path, { accept: `${type}, application/json;q=0.5` })).status, 200);
      assert.equal((await fetchWith(path, { accept: '*/*' })).status, 200);
    }
  });
});
