import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTypeChooser, preferredType } from '../../src/http/accept.js';
import { createTestApp, type TestApp } from '../helper.js';
import { get } from '../support/http.js';
import { listenApp } from '../support/ports.js';

describe('preferredType', () => {
  const offered = ['application/json', 'application/x-ndjson', 'text/csv'];

  test('takes the q of the most specific range naming each type, then an exact name, then the order offered', () => {
    assert.equal(preferredType(undefined, offered), 'application/json');
    assert.equal(preferredType('', offered), 'application/json');
    assert.equal(preferredType('*/*', offered), 'application/json');
    assert.equal(preferredType('application/*', offered), 'application/json');
    assert.equal(preferredType('text/*', offered), 'text/csv');
    assert.equal(preferredType('TEXT/CSV; charset=utf-8', offered), 'text/csv');
    assert.equal(preferredType('text/csv;q=0.4, application/json;q=0.5', offered), 'application/json');
    assert.equal(preferredType('application/json;q=0, */*', offered), 'application/x-ndjson');
    assert.equal(preferredType('*/*, text/csv', offered), 'text/csv');
    assert.equal(preferredType('application/json;q=0.001, text/html', ['application/json']), 'application/json');
  });

  test('admits nothing when every offered type is refused or unnamed', () => {
    assert.equal(preferredType('application/xml', ['application/json']), undefined);
    assert.equal(preferredType('application/json;q=0', ['application/json']), undefined);
    assert.equal(preferredType('*/*;q=0', offered), undefined);
    assert.equal(preferredType('text/*', ['application/json']), undefined);
  });
});

describe('createTypeChooser', () => {
  test('answers as preferredType for every Accept, kept or not, within its bound', () => {
    const offered = ['application/json', 'text/csv'] as const;
    const choose = createTypeChooser(offered, 2);
    const long = `${'application/xml;q=0.9, '.repeat(20)}text/csv`;
    const accepts = [undefined, '', '*/*', 'text/csv', 'application/xml', 'application/json;q=0', long, '*/*', 'text/csv', 'application/xml', long];
    // Twice over, past the bound of two: each answer, first made or kept, is preferredType's.
    for (const accept of [...accepts, ...accepts]) assert.equal(choose(accept), preferredType(accept, offered), String(accept));
    assert.equal(choose('application/xml'), undefined);
    assert.equal(choose(long), 'text/csv');
  });
});

describe('content negotiation over HTTP', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = await listenApp(t.app);
  });
  after(async () => {
    await t.close();
  });
  const fetchWith = (path: string, accept?: string) =>
    get(`${base}${path}`, { headers: { 'x-api-key': t.key, ...(accept === undefined ? {} : { accept }) } });

  test('Accept: text/csv on /history answers what format=csv answers, and says it varies on Accept', async () => {
    const byFormat = await fetchWith('/api/v1/history?from=EUR&to=USD&range=1m&format=csv');
    const byAccept = await fetchWith('/api/v1/history?from=EUR&to=USD&range=1m', 'text/csv');
    assert.equal(byAccept.status, 200);
    assert.equal(byAccept.headers['content-type'], byFormat.headers['content-type']);
    assert.match(String(byAccept.headers['content-type']), /^text\/csv/);
    assert.equal(byAccept.body, byFormat.body);
    assert.match(byAccept.body, /^date,rate\r\n/);
    assert.equal(byAccept.headers['content-disposition'], byFormat.headers['content-disposition']);
    assert.match(String(byAccept.headers.vary), /\bAccept\b/);
    const json = await fetchWith('/api/v1/history?from=EUR&to=USD&range=1m&format=json', 'text/csv');
    assert.match(String(json.headers['content-type']), /^application\/json/);
  });

  test('an Accept that admits none of an endpoint\'s types is a 406 not_acceptable problem, not stored', async () => {
    for (const [path, accept] of [
      ['/api/v1/rate?from=EUR&to=USD', 'application/xml'],
      ['/api/v1/convert?from=EUR&to=USD&amount=10', 'text/csv'],
      ['/api/v1/rates?from=EUR&to=USD,GBP', 'application/json;q=0'],
      ['/api/v1/currencies', 'text/html'],
      ['/api/v1/providers', 'image/*'],
      ['/api/v1/usage', 'application/xml'],
      ['/api/v1/history?from=EUR&to=USD&range=1m', 'application/xml'],
    ]) {
      const response = await fetchWith(path!, accept);
      assert.equal(response.status, 406, `${path} ${accept}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.headers['cache-control'], 'no-store');
      const problem = JSON.parse(response.body) as { code: string; status: number; detail: string };
      assert.equal(problem.code, 'not_acceptable');
      assert.equal(problem.status, 406);
      // The 406 and the 200 of the same request differ only by Accept: both say so.
      assert.match(String(response.headers.vary), /\bAccept\b/, `${path}: the 406 varies on Accept`);
      assert.match(String((await fetchWith(path!)).headers.vary), /\bAccept\b/, `${path}: the 200 varies on Accept`);
      assert.match(problem.detail, /application\/json/);
    }
    const head = await t.app.inject({ method: 'HEAD', url: '/api/v1/rate?from=EUR&to=USD', headers: { 'x-api-key': t.key, accept: 'application/xml' } });
    assert.equal(head.statusCode, 406);
    assert.equal(head.body, '');
  });

  test('no Accept, */*, application/* and JSON at any q above 0 answer JSON', async () => {
    for (const accept of [undefined, '*/*', 'application/*', 'application/json', 'text/html, application/json;q=0.01', 'application/json; charset=utf-8']) {
      for (const path of ['/api/v1/rate?from=EUR&to=USD', '/api/v1/history?from=EUR&to=USD&range=1m', '/api/v1/usage']) {
        const response = await fetchWith(path, accept);
        assert.equal(response.status, 200, `${path} ${accept}`);
        assert.match(String(response.headers['content-type']), /^application\/json/, `${path} ${accept}`);
      }
    }
  });
});
