import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { providerEntry } from '../../src/providers/registry.js';
import { createTestApp, type TestApp } from '../helper.js';

describe('GET /api/v1/providers', () => {
  let t: TestApp;
  let empty: TestApp;
  before(async () => {
    t = await createTestApp();
    empty = await createTestApp({}, { load: false });
  });
  after(async () => {
    await t?.close();
    await empty?.close();
  });

  const get = (app: TestApp, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
    app.app.inject({ method, url: '/api/v1/providers', headers: { 'x-api-key': app.key, ...headers } });

  it('lists each configured provider: its base, the currencies it quotes now, its newest day and its refreshes', async () => {
    const response = await get(t);
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const { providers } = response.json();
    assert.equal(providers.length, 1);
    const [file] = providers;
    assert.deepEqual(Object.keys(file), ['id', 'name', 'kind', 'base', 'currencies', 'latestDay', 'refresh', 'termsUrl', 'schedule', 'crossCheck', 'revisions', 'held', 'flagged']);
    assert.equal(file.id, 'file');
    // What the registry says of it, word for word.
    const { metadata } = providerEntry('file')!;
    assert.equal(file.name, metadata.name);
    assert.equal(file.kind, 'file');
    assert.equal(file.termsUrl, null);
    assert.equal(file.schedule, metadata.schedule);
    assert.equal(file.base, 'EUR');
    assert.equal(file.latestDay, '2026-03-05');
    // Every currency /currencies lists as answered now, but those replaced (answered through their successor), is quoted by the one provider.
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/currencies', headers: { 'x-api-key': t.key } })).json();
    assert.deepEqual(
      file.currencies,
      listed.currencies.filter((c: { onRequest: boolean; replacedBy?: object }) => !c.onRequest && c.replacedBy === undefined).map((c: { code: string }) => c.code),
    );
    assert.ok(file.currencies.includes('EUR') && file.currencies.includes('USD'));
    assert.ok(!file.currencies.includes('CYP'), 'a currency whose rates ended is not quoted now');
    assert.equal(file.refresh.failing, false);
    assert.equal(file.refresh.lastFailureAt, null);
    assert.match(file.refresh.lastSuccessAt, /^\d{4}-\d{2}-\d{2}T/);
  });

  it('is keyed, counted, cacheable until the next refresh and conditional, like /currencies', async () => {
    const first = await get(t);
    const second = await get(t);
    assert.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
    assert.match(String(first.headers['cache-control']), /^private, max-age=\d+$/);
    assert.equal(first.headers.vary, 'X-Api-Key, Authorization, Accept');
    assert.equal(first.headers['access-control-allow-origin'], '*');
    assert.equal(first.headers['x-content-type-options'], 'nosniff');
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[^"]+"$/);
    const unchanged = await get(t, { 'if-none-match': etag });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.body, '');
    assert.equal(Number(unchanged.headers['x-ratelimit-remaining']), Number(second.headers['x-ratelimit-remaining']) - 1);
    const head = await get(t, {}, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers.etag, etag);
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/providers' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().code, 'unauthorized');
    const posted = await t.app.inject({ method: 'POST', url: '/api/v1/providers', headers: { 'x-api-key': t.key } });
    assert.equal(posted.statusCode, 405);
    assert.equal(posted.headers.allow, 'GET, HEAD');
  });

  it('says so when a provider has nothing stored yet', async () => {
    const response = await get(empty);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json().providers, [
      {
        id: 'file',
        name: 'ECB file',
        kind: 'file',
        base: 'EUR',
        currencies: [],
        latestDay: null,
        refresh: { lastSuccessAt: null, lastFailureAt: null, failing: false },
        termsUrl: null,
        schedule: 'whenever the operator replaces the file',
        // No other provider to compare its numbers with.
        crossCheck: { state: 'unchecked', outliers: [] },
        // Nothing published, so nothing corrected, held or flagged.
        revisions: [],
        held: [],
        flagged: [],
      },
    ]);
  });

  it('is in the OpenAPI document with its shapes', async () => {
    const doc = (await t.app.inject('/api/v1/openapi.json')).json();
    const operation = doc.paths['/api/v1/providers'].get;
    assert.equal(operation.operationId, 'listProviders');
    assert.deepEqual(operation.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ProviderList' });
    assert.deepEqual(Object.keys(doc.components.schemas.Provider.properties), ['id', 'name', 'kind', 'base', 'currencies', 'latestDay', 'refresh', 'termsUrl', 'schedule', 'crossCheck', 'revisions', 'held', 'flagged']);
    assert.deepEqual(doc.components.schemas.Provider.properties.kind.enum, ['central bank', 'peg', 'aggregator', 'commercial', 'file']);
    assert.equal(doc.paths['/api/v1/providers'].head.responses['200'].content, undefined);
  });
});
