/**
 * EXRATES_HISTORY_YEARS=all on the ECB's whole history (1999-01-04 on): every published day is
 * served by start and by range=max, as JSON, CSV, NDJSON, through MCP and named by the portal and
 * the OpenAPI document, each checked against the ECB's CSV read here with decimal.js; with the
 * default, the interface's five ranges and its five years stay the only ones.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, issueKey, type TestApp } from '../helper.js';
import { D, expectedHistory, formatRate, parseEcbCsv, type EcbTable } from '../e2e/independent.js';
import { ECB_CSV } from '../support/data.js';
import { listenApp } from '../support/ports.js';

const TODAY = '2026-03-06';
const FIVE_RANGES = ['1m', '3m', '6m', '1y', '5y'];

interface Body {
  pair: string;
  range: string;
  count: number;
  points: Array<{ date: string; rate: string; days?: number }>;
  stats: Record<string, unknown>;
}

/** A currency's numbers as the ECB's CSV writes them (newest row first), oldest first. */
function publishedTexts(code: string): Array<{ date: string; rate: string }> {
  const [header, ...rows] = readFileSync(ECB_CSV, 'utf8').trim().split(/\r?\n/);
  const column = header!.split(',').indexOf(code);
  return rows
    .map((row) => row.split(','))
    .filter((cells) => cells[column] !== 'N/A')
    .map((cells) => ({ date: cells[0]!, rate: cells[column]! }))
    .reverse();
}

/** The monthly means of a pair's points, each the exact mean rounded once to 8 significant digits, with its day count. */
function monthlyMeans(points: ReadonlyArray<{ date: string; rate: string }>): Array<{ date: string; rate: string; days: number }> {
  const months = new Map<string, string[]>();
  for (const p of points) months.set(`${p.date.slice(0, 7)}-01`, [...(months.get(`${p.date.slice(0, 7)}-01`) ?? []), p.rate]);
  return [...months].map(([date, rates]) => ({ date, rate: formatRate(rates.reduce((sum, r) => sum.add(r), new D(0)).div(rates.length)), days: rates.length }));
}

describe('EXRATES_HISTORY_YEARS=all: every ECB day since 1999-01-04', () => {
  let test: TestApp;
  let table: EcbTable;
  const get = (url: string, headers: Record<string, string> = {}) => test.app.inject({ method: 'GET', url, headers: { 'x-api-key': test.key, ...headers } });

  before(async () => {
    table = parseEcbCsv(ECB_CSV);
    test = await createTestApp({ EXRATES_HISTORY_YEARS: 'all' });
    test.key = await issueKey(test.deps, 'pro');
  });
  after(() => test?.close());

  it('start=1999-01-04 answers every day the ECB published a dollar rate, each exactly as published', async () => {
    const response = await get('/api/v1/history?from=EUR&to=USD&start=1999-01-04');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<Body>();
    const published = publishedTexts('USD');
    assert.equal(published[0]!.date, '1999-01-04');
    assert.ok(published.length > 6900, `${published.length} days`);
    assert.equal(body.range, `1999-01-04/${TODAY}`);
    assert.equal(body.count, published.length);
    // EUR→USD is the ECB's own number: the text as published, not only the same value.
    assert.deepEqual(body.points, published);
  });

  it('range=max is the same points with exact statistics, for a cross through the euro too', async () => {
    for (const [from, to] of [['EUR', 'USD'], ['GBP', 'JPY'], ['CHF', 'SEK']] as const) {
      const response = await get(`/api/v1/history?from=${from}&to=${to}&range=max`);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json<Body>();
      const expected = expectedHistory(table, from, to, 'max', TODAY)!;
      assert.equal(body.range, 'max');
      assert.equal(expected.points[0]!.date, '1999-01-04');
      assert.deepEqual(body.points, expected.points, `${from}${to}`);
      assert.deepEqual(body.stats, expected.stats, `${from}${to}`);
    }
  });

  it('group=month over the 27 years: each month the exact mean of its days, the statistics over those means', async () => {
    const response = await get('/api/v1/history?from=GBP&to=JPY&range=max&group=month');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<Body>();
    const daily = expectedHistory(table, 'GBP', 'JPY', 'max', TODAY)!.points;
    const months = monthlyMeans(daily);
    assert.equal(months.length, body.count);
    assert.ok(months.length > 320, `${months.length} months`);
    assert.deepEqual(body.points, months);
    const values = months.map((m) => new D(m.rate));
    const mean = values.reduce((sum, v) => sum.add(v), new D(0)).div(values.length);
    assert.equal(body.stats['average'], formatRate(mean));
  });

  it('range=max as CSV and NDJSON: the same points, named max', async () => {
    const expected = expectedHistory(table, 'USD', 'CHF', 'max', TODAY)!;
    const csv = await get('/api/v1/history?from=USD&to=CHF&range=max&format=csv');
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-disposition']), /filename="USDCHF_max\.csv"/);
    assert.equal(csv.body, `date,rate\r\n${expected.points.map((p) => `${p.date},${p.rate}\r\n`).join('')}`);
    const ndjson = await get('/api/v1/history?from=USD&to=CHF&range=max&format=ndjson');
    assert.equal(ndjson.statusCode, 200, ndjson.body);
    const lines = ndjson.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.slice(0, -1), expected.points);
    assert.deepEqual(lines.at(-1), { pair: 'USDCHF', range: 'max', count: expected.count, stats: expected.stats });
  });

  it('10y counts ten calendar years back', async () => {
    const response = await get('/api/v1/history?from=EUR&to=GBP&range=10y');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<Body>();
    assert.equal(body.range, '10y');
    assert.ok(body.points[0]!.date >= '2016-03-06' && body.points[0]!.date <= '2016-03-09', body.points[0]!.date);
    assert.deepEqual(body.points, expectedHistory(table, 'EUR', 'GBP', '10y', TODAY)!.points);
  });

  it('the OpenAPI document, the errors and the portal name the seven ranges', async () => {
    const doc = (await get('/api/v1/openapi.json')).json<{ paths: Record<string, { get: { parameters: Array<{ name: string; schema: { enum: string[] }; description?: string }> } }> }>();
    const range = doc.paths['/api/v1/history']!.get.parameters.find((p) => p.name === 'range')!;
    assert.deepEqual(range.schema.enum, [...FIVE_RANGES, '10y', 'max']);
    const bad = await get('/api/v1/history?from=EUR&to=USD&range=20y');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json<{ detail: string }>().detail, 'range must be given once, as one of 1m, 3m, 6m, 1y, 5y, 10y, max.');
    const page = await test.app.inject({ method: 'GET', url: '/' });
    const config = JSON.parse(/<script type="application\/json" id="portal-config">(.*?)<\/script>/s.exec(page.body)![1]!) as { history: { ranges: string[]; oldest: string } };
    assert.deepEqual(config.history, { ranges: [...FIVE_RANGES, '10y', 'max'], oldest: '1999-01-04' });
    assert.match(page.body, /data-range="max"/);
    assert.match(page.body, /daily history as far back as its sources publish/);
  });
});

describe('EXRATES_HISTORY_YEARS=all through MCP', () => {
  let test: TestApp;
  let client: Client;

  before(async () => {
    test = await createTestApp({ EXRATES_HISTORY_YEARS: 'all' });
    const key = await issueKey(test.deps, 'pro');
    client = new Client({ name: 'exrates-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${await listenApp(test.app)}/mcp`), { requestInit: { headers: { 'X-Api-Key': key } } }));
  });
  after(async () => {
    await client?.close();
    await test?.close();
  });

  it('get_history takes range max and answers what the API answers; its description names the ranges', async () => {
    const { tools } = await client.listTools();
    const history = tools.find((tool) => tool.name === 'get_history')!;
    assert.match(history.description!, /1m, 3m, 6m, 1y, 5y, 10y, max back from today/);
    assert.match(history.description!, /within the retained history/);
    const result = (await client.callTool({ name: 'get_history', arguments: { from: 'EUR', to: 'USD', range: 'max' } })) as CallToolResult;
    assert.ok(!result.isError, JSON.stringify(result.content));
    const structured = result.structuredContent as unknown as Body;
    const expected = expectedHistory(parseEcbCsv(ECB_CSV), 'EUR', 'USD', 'max', TODAY)!;
    assert.equal(structured.range, 'max');
    assert.deepEqual(structured.points, expected.points);
    assert.deepEqual(structured.stats, expected.stats);
  });
});

describe('the default: the interface\'s five ranges and five years', () => {
  let test: TestApp;
  before(async () => {
    test = await createTestApp();
  });
  after(() => test?.close());
  const get = (url: string) => test.app.inject({ method: 'GET', url, headers: { 'x-api-key': test.key } });

  it('refuses 10y, max and a start before the five years, naming what it takes', async () => {
    for (const range of ['10y', 'max']) {
      const response = await get(`/api/v1/history?from=EUR&to=USD&range=${range}`);
      assert.equal(response.statusCode, 400, range);
      assert.equal(response.json<{ code: string; detail: string }>().detail, 'range must be given once, as one of 1m, 3m, 6m, 1y, 5y.');
    }
    const early = await get('/api/v1/history?from=EUR&to=USD&start=1999-01-04');
    assert.equal(early.statusCode, 400);
    assert.deepEqual(
      { code: early.json<{ code: string }>().code, detail: early.json<{ detail: string }>().detail },
      { code: 'invalid_date', detail: 'start must be within the retained 5 years: on or after 2021-03-06.' },
    );
  });

  it('names only the five ranges in the OpenAPI document and the portal, and keeps 5 years and a month', async () => {
    const doc = (await get('/api/v1/openapi.json')).json<{ paths: Record<string, { get: { parameters: Array<{ name: string; schema: { enum: string[] } }> } }> }>();
    const range = doc.paths['/api/v1/history']!.get.parameters.find((p) => p.name === 'range')!;
    assert.deepEqual(range.schema.enum, FIVE_RANGES);
    const page = await test.app.inject({ method: 'GET', url: '/' });
    const config = JSON.parse(/<script type="application\/json" id="portal-config">(.*?)<\/script>/s.exec(page.body)![1]!) as { history: { ranges: string[]; oldest: string } };
    assert.deepEqual(config.history.ranges, FIVE_RANGES);
    assert.ok(config.history.oldest >= '2021-02-06', config.history.oldest);
    assert.match(page.body, /up to 5 years of daily history/);
  });
});
