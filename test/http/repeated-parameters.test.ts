import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../helper.js';

// A parameter sent twice is refused with the parameter's own code, and the detail says it must be
// given once, rather than that the value is malformed.
describe('a query parameter given twice', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  const cases = [
    { url: '/api/v1/rate?from=EUR&from=USD&to=GBP', code: 'invalid_currency', param: 'from' },
    { url: '/api/v1/rate?from=EUR&to=USD&to=GBP', code: 'invalid_currency', param: 'to' },
    { url: '/api/v1/convert?from=EUR&to=USD&amount=1&amount=2', code: 'invalid_amount', param: 'amount' },
    { url: '/api/v1/history?from=EUR&to=USD&range=1m&range=1y', code: 'invalid_range', param: 'range' },
    { url: '/api/v1/history?from=EUR&to=USD&start=2025-01-01&start=2025-02-01', code: 'invalid_date', param: 'start' },
    { url: '/api/v1/history?from=EUR&to=USD&start=2025-01-01&end=2025-02-01&end=2025-03-01', code: 'invalid_date', param: 'end' },
    { url: '/api/v1/history?from=EUR&to=USD&group=week&group=month', code: 'invalid_range', param: 'group' },
    { url: '/api/v1/history?from=EUR&to=USD&format=csv&format=ndjson', code: 'invalid_format', param: 'format' },
  ];
  for (const { url, code, param } of cases) {
    test(`${param} twice: 400 ${code}, "must be given once"`, async () => {
      const response = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key } });
      assert.equal(response.statusCode, 400, response.body);
      const body = JSON.parse(response.body) as { code: string; param: string; detail: string };
      assert.equal(body.code, code);
      assert.equal(body.param, param);
      assert.match(body.detail, /must be given once/);
      // The detail names the parameter that was refused.
      assert.match(body.detail, new RegExp(`^'?${param}'? must be given once`));
    });
  }
});
