/**
 * Two apps in one process share no state: each builds its own caches of rendered answers, its
 * key and quota step and its metrics, so the same requests to both give each app's own answers,
 * in any order, however warm the other's caches are.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ECB_CSV } from '../support/data.js';
import { createTestApp, type TestApp } from '../helper.js';

/** The shared ECB history's newest month with every EUR→USD rate doubled: other data for the same pairs. */
function doubledUsdHistory(file: string): void {
  const [header, ...rows] = readFileSync(ECB_CSV, 'utf8').split('\n');
  const doubled = rows.slice(0, 40).map((row) => {
    const cells = row.split(',');
    cells[1] = String(Number(cells[1]) * 2);
    return cells.join(',');
  });
  writeFileSync(file, [header, ...doubled, ''].join('\n'));
}

describe('two apps in one process', () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await createTestApp();
    const other = join(a.dir, 'doubled.csv');
    doubledUsdHistory(other);
    b = await createTestApp({ EXRATES_FILE_URL: other });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  const get = (t: TestApp, url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key, ...headers } });

  it('answer from their own data, whichever is asked first and however often', async () => {
    for (const order of [
      [a, b],
      [b, a],
      [a, b],
    ]) {
      for (const t of order) {
        const rate = await get(t, '/api/v1/rate?from=EUR&to=USD');
        assert.equal(rate.statusCode, 200);
        assert.equal(rate.json().rate, t === a ? '1.1618' : '2.3236');
        const converted = await get(t, '/api/v1/convert?from=EUR&to=USD&amount=10');
        assert.equal(converted.json().result, t === a ? '11.62' : '23.24');
        const history = await get(t, '/api/v1/history?from=EUR&to=USD&range=1m', { 'accept-encoding': 'gzip' });
        assert.equal(history.statusCode, 200);
        assert.equal(history.headers['content-encoding'], 'gzip');
        const many = await get(t, '/api/v1/rates?from=EUR&to=USD,JPY');
        assert.equal(many.json().rates.find((r: { to: string }) => r.to === 'USD').rate, t === a ? '1.1618' : '2.3236');
      }
    }
    const plainA = await get(a, '/api/v1/history?from=EUR&to=USD&range=1m');
    const plainB = await get(b, '/api/v1/history?from=EUR&to=USD&range=1m');
    assert.notEqual(plainA.headers.etag, plainB.headers.etag);
    assert.notEqual(plainA.json().stats.average, plainB.json().stats.average);
  });

  it('validate only their own ETags', async () => {
    const fromA = await get(a, '/api/v1/rate?from=EUR&to=USD');
    assert.equal((await get(a, '/api/v1/rate?from=EUR&to=USD', { 'if-none-match': String(fromA.headers.etag) })).statusCode, 304);
    const atB = await get(b, '/api/v1/rate?from=EUR&to=USD', { 'if-none-match': String(fromA.headers.etag) });
    assert.equal(atB.statusCode, 200);
    assert.notEqual(atB.headers.etag, fromA.headers.etag);
  });

  it('know only their own keys, count only their own requests, and measure only their own', async () => {
    assert.equal((await get(b, '/api/v1/usage', { 'x-api-key': a.key })).statusCode, 401);
    const before = (await get(b, '/api/v1/usage')).json().used;
    for (let i = 0; i < 3; i++) await get(a, '/api/v1/currencies');
    assert.equal((await get(b, '/api/v1/usage')).json().used, before);
    const requests = async (t: TestApp) => {
      const text = await t.deps.metricsText();
      const match = text.match(/^exrates_http_requests_total\{[^}]*route="\/api\/v1\/currencies"[^}]*\} (\d+)$/m);
      return match ? Number(match[1]) : 0;
    };
    assert.equal(await requests(a), 3);
    assert.equal(await requests(b), 0);
  });
});
