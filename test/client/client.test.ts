/**
 * The generated TypeScript client against a live server on loopback: its checked-in types must
 * equal a fresh openapi-typescript generation from the document that server serves, and every
 * call through it must give what the API gives over plain HTTP, errors included as typed
 * problem documents.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createExratesClient, ExratesError, ExratesFormatError, parseHistoryNdjson, type ProblemCode } from '../../client/index.js';
import { CLIENT_SCHEMA, renderClientSchema } from '../../scripts/client-schema.js';
import { unissuedKey, type TestApp } from '../helper.js';
import { listeningTestApp } from '../support/apps.js';

describe('the generated client, on a listening server', () => {
  let test: TestApp;
  let base: string;
  let key: string;

  before(async () => {
    ({ test, base, key } = await listeningTestApp());
  });

  after(async () => {
    await test?.close();
  });

  async function plain(path: string, apiKey = key): Promise<{ status: number; type: string; body: string }> {
    const response = await fetch(`${base}${path}`, { headers: { 'X-Api-Key': apiKey } });
    return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
  }

  it('is generated from the document this server serves (run npm run client:generate when this fails)', async () => {
    const response = await fetch(`${base}/api/v1/openapi.json`);
    assert.equal(response.status, 200);
    const fresh = await renderClientSchema(await response.json());
    assert.ok(fresh.includes('"/api/v1/rate"') && fresh.includes('"/api/v1/convert"') && fresh.includes('"/api/v1/history"'));
    assert.equal(readFileSync(CLIENT_SCHEMA, 'utf8'), fresh, 'client/schema.d.ts differs from a fresh generation: run npm run client:generate');
  });

  it('reads a rate, a conversion and a history exactly as the API answers them', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });

    const rate = await exrates.rate('eur', 'usd');
    assert.deepEqual(rate, { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1618', asOf: '2026-03-05T15:00:00Z', stale: false });
    assert.deepEqual(rate, JSON.parse((await plain('/api/v1/rate?from=eur&to=usd')).body));

    const conversion = await exrates.convert('GBP', 'JPY', '100');
    assert.deepEqual(conversion, JSON.parse((await plain('/api/v1/convert?from=GBP&to=JPY&amount=100')).body));
    assert.equal(conversion.amount, '100');
    assert.match(conversion.result, /^\d+$/, 'JPY has no minor units');

    const history = await exrates.history('USD', 'CHF', '1m');
    assert.deepEqual(history, JSON.parse((await plain('/api/v1/history?from=USD&to=CHF&range=1m')).body));
    assert.equal(history.range, '1m');
    assert.equal(history.count, history.points.length);
    assert.ok(history.count > 15);
    assert.equal(history.points.at(-1)!.date, '2026-03-05');
    assert.equal(typeof history.stats.changePct, 'number');

    const csv = await exrates.historyCsv('USD', 'CHF', '1m');
    assert.equal(csv, (await plain('/api/v1/history?from=USD&to=CHF&range=1m&format=csv')).body);
    assert.equal(csv.split('\r\n')[0], 'date,rate');

    // The openapi-fetch client underneath, with the raw response.
    const { data, response } = await exrates.api.GET('/api/v1/rate', { params: { query: { from: 'CHF', to: 'CHF' } } });
    assert.equal(response.status, 200);
    assert.equal(data?.rate, '1');
    assert.equal(response.headers.get('x-ratelimit-limit'), '100000');
  });

  it('reads a history by dates, grouped, from one source, as JSON and CSV, exactly as the API answers it', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });

    const dated = await exrates.history('EUR', 'GBP', { start: '2025-01-01', end: '2025-06-30' });
    assert.deepEqual(dated, JSON.parse((await plain('/api/v1/history?from=EUR&to=GBP&start=2025-01-01&end=2025-06-30')).body));
    assert.equal(dated.range, '2025-01-01/2025-06-30');
    assert.equal(dated.points[0]!.date, '2025-01-02');

    const monthly = await exrates.history('EUR', 'GBP', { start: '2025-01-01', end: '2025-06-30', group: 'month', source: 'file' });
    assert.deepEqual(monthly, JSON.parse((await plain('/api/v1/history?from=EUR&to=GBP&start=2025-01-01&end=2025-06-30&group=month&source=file')).body));
    assert.equal(monthly.group, 'month');
    assert.deepEqual(
      monthly.points.map((point) => point.date),
      ['2025-01-01', '2025-02-01', '2025-03-01', '2025-04-01', '2025-05-01', '2025-06-01'],
    );
    assert.equal(
      monthly.points.reduce((days, point) => days + point.days!, 0),
      dated.count,
    );

    const weekly = await exrates.history('USD', 'JPY', { range: '3m', group: 'week' });
    assert.deepEqual(weekly, JSON.parse((await plain('/api/v1/history?from=USD&to=JPY&range=3m&group=week')).body));
    assert.equal(weekly.range, '3m');

    const fromStart = await exrates.history('EUR', 'USD', { start: '2026-02-01' });
    assert.equal(fromStart.range, '2026-02-01/2026-03-06', 'end defaults to today');

    const csv = await exrates.historyCsv('EUR', 'GBP', { start: '2025-01-01', end: '2025-06-30', group: 'month' });
    assert.equal(csv, (await plain('/api/v1/history?from=EUR&to=GBP&start=2025-01-01&end=2025-06-30&group=month&format=csv')).body);
    assert.equal(csv.split('\r\n')[0], 'date,rate,days');

    await assert.rejects(exrates.history('EUR', 'USD', { range: '1m', start: '2026-01-01' }), (thrown: unknown) => thrown instanceof ExratesError && thrown.problem.code === 'invalid_range');
    await assert.rejects(exrates.history('EUR', 'USD', { end: '2026-01-01' }), (thrown: unknown) => thrown instanceof ExratesError && thrown.problem.code === 'missing_parameter');
  });

  it('calls currencies, rates on a date, many targets and usage, as the server answers them', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });
    const { currencies } = await exrates.currencies();
    assert.ok(currencies.some((c) => c.code === 'EUR' && c.minorUnits === 2 && !c.onRequest));
    const dated = await exrates.rate('EUR', 'USD', '2026-03-01');
    assert.deepEqual(dated, JSON.parse((await plain('/api/v1/rate?from=EUR&to=USD&date=2026-03-01')).body));
    assert.equal(dated.asOf, '2026-02-27T15:00:00Z');
    assert.equal((await exrates.convert('EUR', 'USD', '10', '2026-03-01')).rate, dated.rate);
    const many = await exrates.rates('EUR', { to: ['USD', 'GBP'], amount: '10', date: '2026-03-01' });
    assert.deepEqual(many, JSON.parse((await plain('/api/v1/rates?from=EUR&to=USD,GBP&amount=10&date=2026-03-01')).body));
    assert.deepEqual(
      many.rates.map((r) => r.to),
      ['GBP', 'USD'],
    );
    const before = await exrates.usage();
    const after = await exrates.usage();
    assert.equal(after.used, before.used);
    assert.equal(after.remaining, after.limit - after.used);
    await assert.rejects(exrates.rate('EUR', 'USD', '2026-03-07'), (thrown: unknown) => thrown instanceof ExratesError && thrown.problem.code === 'invalid_date');
  });

  it('sends HEAD, conditional requests with typed validators, and reads CSV, as the document types them', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });
    const query = { from: 'EUR', to: 'USD' };

    // HEAD declares no body: the client gives none, and the headers of the GET.
    const head = await exrates.api.HEAD('/api/v1/rate', { params: { query } });
    const nothing: undefined = head.data;
    assert.equal(nothing, undefined);
    assert.equal(head.response.status, 200);
    const got = await exrates.api.GET('/api/v1/rate', { params: { query } });
    const etag = got.response.headers.get('etag')!;
    assert.equal(head.response.headers.get('etag'), etag);
    assert.equal(head.response.headers.get('content-length'), got.response.headers.get('content-length'));

    // If-None-Match and If-Modified-Since are parameters of the operation: a 304, no body, not a problem.
    const unchanged = await exrates.api.GET('/api/v1/rate', { params: { query, header: { 'If-None-Match': etag } } });
    const { response: notModified, data: unchangedData, error: unchangedError } = unchanged;
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get('etag'), etag);
    assert.equal(unchangedData, undefined);
    assert.ok(!unchangedError, 'a 304 carries no problem document');
    const lastModified = got.response.headers.get('last-modified')!;
    const since = await exrates.api.GET('/api/v1/history', { params: { query: { ...query, range: '1m' }, header: { 'If-Modified-Since': lastModified } } });
    assert.equal(since.response.status, 304);
    const changed = await exrates.api.GET('/api/v1/rate', { params: { query, header: { 'If-None-Match': '"other"' } } });
    assert.equal(changed.response.status, 200);
    assert.equal(changed.data?.rate, got.data?.rate);

    // The history's 200 is JSON or CSV: the CSV media type is typed as text.
    const csv = await exrates.api.GET('/api/v1/history', { params: { query: { ...query, range: '1m', format: 'csv' } }, parseAs: 'text' });
    assert.equal(csv.response.status, 200);
    assert.match(csv.response.headers.get('content-type')!, /^text\/csv/);
    assert.equal(csv.data?.split('\r\n')[0], 'date,rate');
    assert.equal(csv.data, (await plain('/api/v1/history?from=EUR&to=USD&range=1m&format=csv')).body);
  });

  it('lists the providers as the API does', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });
    const { providers } = await exrates.providers();
    assert.deepEqual({ providers }, JSON.parse((await plain('/api/v1/providers')).body));
    assert.ok(providers.length > 0);
    for (const provider of providers) {
      assert.equal(typeof provider.id, 'string');
      assert.ok(['central bank', 'peg', 'aggregator', 'commercial', 'file'].includes(provider.kind), provider.kind);
    }
  });

  it('reads an NDJSON history line by line into the History the JSON format gives', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });
    for (const window of ['1m', { start: '2025-01-01', end: '2025-06-30', group: 'week' }] as const) {
      const lines = await exrates.historyNdjson('EUR', 'GBP', window);
      assert.deepEqual(lines, await exrates.history('EUR', 'GBP', window));
      assert.ok(lines.points.length > 15);
    }
  });

  it('names the NDJSON line that is not JSON, through the client and on its own', async () => {
    // A fetch that spoils the third line of what the server sent, as a broken proxy would.
    const spoiling: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const lines = (await response.text()).split('\n');
      lines[2] = `${lines[2]!.slice(0, 10)}<html>`;
      return new Response(lines.join('\n'), { status: response.status, headers: response.headers });
    };
    const exrates = createExratesClient({ baseUrl: base, apiKey: key, fetch: spoiling });
    await assert.rejects(exrates.historyNdjson('EUR', 'USD', '1m'), (thrown: unknown) => {
      assert.ok(thrown instanceof ExratesFormatError);
      assert.equal(thrown.line, 3);
      assert.match(thrown.message, /^NDJSON line 3 is not JSON: \{"date":"2<html>$/);
      assert.ok(thrown.cause instanceof SyntaxError);
      return true;
    });
    assert.throws(() => parseHistoryNdjson('{"date":"2026-01-02","rate":"1.1"}\nnot json\n{}\n'), { name: 'ExratesFormatError', line: 2 });
    assert.throws(() => parseHistoryNdjson(''), { name: 'ExratesFormatError', line: 1 });
  });

  it('gives errors as typed problem documents', async () => {
    const exrates = createExratesClient({ baseUrl: base, apiKey: key });

    const { data, error, response } = await exrates.api.GET('/api/v1/convert', { params: { query: { from: 'EUR', to: 'XYZ', amount: '1' } } });
    assert.equal(data, undefined);
    assert.equal(response.status, 400);
    assert.match(response.headers.get('content-type')!, /^application\/problem\+json/);
    const code: ProblemCode | undefined = error?.code;
    assert.equal(code, 'invalid_currency');
    assert.equal(error?.param, 'to');
    assert.deepEqual(error, JSON.parse((await plain('/api/v1/convert?from=EUR&to=XYZ&amount=1')).body));

    await assert.rejects(exrates.convert('EUR', 'USD', '-5'), (thrown: unknown) => {
      assert.ok(thrown instanceof ExratesError);
      assert.equal(thrown.status, 400);
      assert.equal(thrown.problem.code, 'invalid_amount');
      assert.equal(thrown.problem.param, 'amount');
      return true;
    });

    await assert.rejects(exrates.history('EUR', 'USD', '2y' as never), (thrown: unknown) => thrown instanceof ExratesError && thrown.problem.code === 'invalid_range');

    const stranger = createExratesClient({ baseUrl: base, apiKey: unissuedKey() });
    await assert.rejects(stranger.rate('EUR', 'USD'), (thrown: unknown) => {
      assert.ok(thrown instanceof ExratesError);
      assert.equal(thrown.status, 401);
      assert.equal(thrown.problem.code, 'unauthorized');
      assert.match(thrown.problem.detail, /keys@example\.org/);
      return true;
    });
  });
});
