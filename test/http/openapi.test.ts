import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { ERROR_CODES } from '../../src/core/errors.js';
import { createTestApp, type TestApp } from '../helper.js';

let t: TestApp;
before(async () => {
  // /metrics is in the document of a port that serves it: with EXRATES_METRICS_TOKEN set.
  t = await createTestApp({ EXRATES_METRICS_TOKEN: 'metrics-scrape-token-for-tests' }, { load: false });
});
after(async () => {
  await t.close();
});

test('the served OpenAPI document passes the recommended lint rules', async () => {
  const response = await t.app.inject('/api/v1/openapi.json');
  assert.equal(response.statusCode, 200);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: response.body, absoluteRef: 'openapi.json', config });
  const serious = problems.filter((p) => p.severity === 'error');
  assert.deepEqual(
    serious.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    [],
  );
  const warnings = problems.filter((p) => p.severity === 'warn').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
  assert.deepEqual(warnings, []);
});

test('the document describes the interface: version, security, parameters, errors, contact', async () => {
  const doc = (await t.app.inject('/api/v1/openapi.json')).json();
  assert.match(doc.openapi, /^3\.1\./);
  assert.equal(doc.info.version, '1.0.0');
  assert.equal(doc.info.contact.email, 'keys@example.org');
  // One scheme for the key, so that a generated client sends it once; the alternatives are in its description.
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['ApiKeyHeader', 'MetricsToken']);
  assert.deepEqual(doc.security, [{ ApiKeyHeader: [] }]);
  assert.match(doc.components.securitySchemes.ApiKeyHeader.description, /Authorization: Bearer <key>.*`apikey` query parameter/);
  assert.deepEqual(doc.paths['/metrics'].get.security, [{ MetricsToken: [] }]);
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/api/v1/convert', '/api/v1/currencies', '/api/v1/history', '/api/v1/history.csv', '/api/v1/history.ndjson', '/api/v1/providers', '/api/v1/rate', '/api/v1/rates', '/api/v1/usage', '/healthz', '/metrics', '/readyz']);
  const history = doc.paths['/api/v1/history'].get;
  assert.deepEqual(
    history.parameters.map((p: { in: string; name: string }) => `${p.in} ${p.name}`).sort(),
    ['header If-Modified-Since', 'header If-None-Match', 'query end', 'query format', 'query from', 'query group', 'query range', 'query source', 'query start', 'query to'],
  );
  // A HEAD declares the headers of its GET and no body; a 304 is no error and has no body.
  const head = doc.paths['/api/v1/history'].head;
  assert.equal(head.operationId, 'getHistory-head');
  for (const [status, response] of Object.entries(head.responses as Record<string, { content?: unknown }>)) assert.equal(response.content, undefined, `HEAD ${status} declares no body`);
  assert.equal(history.responses['304'].content, undefined);
  assert.ok(history.responses['304'].headers.ETag);
  // The JSON history is plain JSON; CSV and NDJSON are operations of their own, whose 200 is text.
  assert.deepEqual(Object.keys(history.responses['200'].content), ['application/json']);
  assert.doesNotMatch(doc.info.description, /Every 200 has/);
  for (const path of ['/healthz', '/readyz', '/metrics']) assert.ok(doc.paths[path].get.description.length > 40, `${path} is described`);
  assert.deepEqual(Object.keys(history.responses).sort(), ['200', '304', '400', '401', '404', '406', '413', '429', '503']);
  for (const [path, type, operationId] of [
    ['/api/v1/history.csv', 'text/csv', 'getHistoryCsv'],
    ['/api/v1/history.ndjson', 'application/x-ndjson', 'getHistoryNdjson'],
  ] as const) {
    const operation = doc.paths[path].get;
    assert.equal(operation.operationId, operationId);
    assert.deepEqual(Object.keys(operation.responses['200'].content), [type]);
    assert.equal(operation.responses['200'].content[type].schema.type, 'string');
    assert.deepEqual(Object.keys(operation.responses).sort(), ['200', '304', '400', '401', '404', '406', '413', '429', '503']);
    assert.ok(!operation.parameters.some((p: { name: string }) => p.name === 'format'), `${path} takes no format`);
  }
  assert.ok(doc.paths['/api/v1/history.csv'].get.responses['200'].headers['Content-Disposition']);
  const convert = doc.paths['/api/v1/convert'].get;
  const amount = convert.parameters.find((p: { name: string }) => p.name === 'amount');
  assert.equal(amount.schema.pattern, '^[0-9]{1,18}(\\.[0-9]{1,12})?$');
  const text = JSON.stringify(doc);
  for (const code of ERROR_CODES) assert.ok(text.includes(code), `the document mentions ${code}`);
  assert.match(doc.info.description, /margin/);
  assert.match(doc.info.description, /no forecasts/);
  assert.match(doc.info.description, /half-to-even/);
});

test('a parameter or field with a fixed set of values is one plain enum, never a union of one-value schemas', async () => {
  const doc = (await t.app.inject('/api/v1/openapi.json')).json();
  const parameters = doc.paths['/api/v1/history'].get.parameters as Array<{ name: string; schema: { type?: string; enum?: string[] } }>;
  const values = (name: string) => {
    const { schema } = parameters.find((p) => p.name === name)!;
    assert.equal(schema.type, 'string', name);
    return schema.enum;
  };
  assert.deepEqual(values('range'), ['1m', '3m', '6m', '1y', '5y']);
  assert.deepEqual(values('group'), ['week', 'month']);
  assert.deepEqual(values('format'), ['json', 'csv', 'ndjson']);
  assert.deepEqual(doc.components.schemas.Problem.properties.code.enum, [...ERROR_CODES]);
  const oneValueUnions: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    const { anyOf } = node as { anyOf?: Array<{ enum?: unknown[]; const?: unknown }> };
    if (anyOf?.some((branch) => branch.const !== undefined || branch.enum?.length === 1)) oneValueUnions.push(at);
    for (const [key, child] of Object.entries(node)) visit(child, `${at}/${key}`);
  };
  visit(doc, '#');
  assert.deepEqual(oneValueUnions, []);
});

test('a value outside an enum is refused with the parameter named, as before', async () => {
  const headers = { 'x-api-key': t.key };
  for (const [query, code, detail] of [
    ['range=2y', 'invalid_range', 'range must be given once, as one of 1m, 3m, 6m, 1y, 5y.'],
    ['group=day', 'invalid_range', 'group must be given once, as week or month.'],
    ['format=xml', 'invalid_format', 'format must be given once, as json, csv or ndjson.'],
  ] as const) {
    const response = await t.app.inject({ url: `/api/v1/history?from=EUR&to=USD&${query}`, headers });
    assert.equal(response.statusCode, 400, query);
    assert.deepEqual([response.json().code, response.json().detail], [code, detail], query);
  }
});
