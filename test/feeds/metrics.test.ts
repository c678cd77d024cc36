import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds, type FeedsService } from '../support/apps.js';
import { parseMetrics, sampleKey } from '../support/prometheus.js';
import type { FakeUpstreams } from '../support/upstreams.js';

const SCRAPE_TOKEN = 'metrics-scrape-token-for-tests';
const SCRAPE = { authorization: `Bearer ${SCRAPE_TOKEN}` };
const HTTP_BUCKETS = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '+Inf'];

let fake: FakeUpstreams;
let service: FeedsService;
let text: string;
let samples: Map<string, number>;
let contentType: string;

/** A known sequence of traffic and refreshes, so every counter below has an exact expected value. */
before(async () => {
  let template: string;
  ({ fake, template } = await startFakeFeeds());
  await fake.reset();
  // /metrics on the app's own port, as EXRATES_METRICS_TOKEN serves it to a scraper that sends the token.
  service = await createFeedsService(fake, { copyFrom: template, env: { EXRATES_METRICS_TOKEN: SCRAPE_TOKEN } });

  for (let i = 0; i < 3; i++) assert.equal((await service.get('/api/v1/rate?from=EUR&to=USD')).status, 200);
  assert.equal((await service.get('/api/v1/rate?from=EUR&to=ABC')).status, 400);
  assert.equal((await service.get('/api/v1/convert?from=EUR&to=NGN&amount=10')).status, 200);
  assert.equal((await service.get('/api/v1/history?from=EUR&to=GBP&range=1m')).status, 200);
  assert.equal((await service.get('/api/v1/rate?from=EUR&to=XAU')).status, 400);

  await fake.ecb.setMode('http500');
  await service.deps.refresher.refreshAll();
  assert.equal((await service.get('/api/v1/rate?from=GBP&to=USD')).body.stale, true);
  assert.equal((await service.get('/api/v1/convert?from=GBP&to=USD&amount=1')).body.stale, true);
  // History carries no stale flag, so it does not count as a stale response.
  assert.equal((await service.get('/api/v1/history?from=GBP&to=USD&range=1m')).status, 200);

  await fake.ecb.setMode('ok');
  await service.deps.refresher.refreshAll();
  assert.equal((await service.get('/api/v1/rate?from=GBP&to=USD')).body.stale, false);

  const response = await service.app.inject({ method: 'GET', url: '/metrics', headers: SCRAPE });
  assert.equal(response.statusCode, 200);
  contentType = String(response.headers['content-type']);
  text = response.body;
  samples = parseMetrics(text);
});
after(async () => {
  await service.close();
  await closeFakeFeeds(fake);
});

const value = (name: string, labels: Record<string, string> = {}) => samples.get(sampleKey(name, labels));

describe('/metrics', () => {
  it('is Prometheus text with help and type lines for the service metrics', () => {
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    for (const [name, type] of [
      ['exrates_refresh_total', 'counter'],
      ['exrates_refresh_duration_seconds', 'histogram'],
      ['exrates_upstream_request_duration_seconds', 'histogram'],
      ['exrates_backfills_total', 'counter'],
      ['exrates_stale_responses_total', 'counter'],
      ['exrates_http_requests_total', 'counter'],
      ['exrates_http_request_duration_seconds', 'histogram'],
    ]) {
      assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'), name);
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
    }
  });

  it('counts refresh outcomes per provider, with durations', () => {
    // One failure, one success for ECB; Frankfurter refreshed NGN successfully both times.
    assert.equal(value('exrates_refresh_total', { provider: 'ecb', outcome: 'failure' }), 1);
    assert.equal(value('exrates_refresh_total', { provider: 'ecb', outcome: 'success' }), 1);
    assert.equal(value('exrates_refresh_total', { provider: 'frankfurter', outcome: 'success' }), 2);
    assert.equal(value('exrates_refresh_total', { provider: 'frankfurter', outcome: 'failure' }), undefined);
    assert.equal(value('exrates_refresh_duration_seconds_count', { provider: 'ecb' }), 2);
    assert.equal(value('exrates_refresh_duration_seconds_bucket', { provider: 'ecb', le: '+Inf' }), 2);
    assert.equal(value('exrates_refresh_duration_seconds_count', { provider: 'frankfurter' }), 2);
    const ecbSeconds = value('exrates_refresh_duration_seconds_sum', { provider: 'ecb' })!;
    assert.ok(ecbSeconds > 0 && ecbSeconds < 5, `ECB refreshes took ${ecbSeconds} s in all`);
  });

  it('times upstream requests per provider, operation and outcome', () => {
    const count = (provider: string, operation: string, outcome: string) =>
      value('exrates_upstream_request_duration_seconds_count', { provider, operation, outcome });
    assert.equal(count('ecb', 'latest', 'failure'), 1);
    assert.equal(count('ecb', 'latest', 'success'), 1);
    assert.equal(count('frankfurter', 'currencies', 'success'), 1);
    assert.equal(count('frankfurter', 'series', 'success'), 1);
    assert.equal(count('frankfurter', 'latest', 'success'), 2);
    assert.equal(value('exrates_upstream_request_duration_seconds_bucket', { provider: 'ecb', operation: 'latest', outcome: 'success', le: '+Inf' }), 1);
  });

  it('counts backfills and stale responses', () => {
    assert.equal(value('exrates_backfills_total', { provider: 'frankfurter', outcome: 'stored' }), 1);
    assert.equal(value('exrates_backfills_total', { provider: 'frankfurter', outcome: 'failure' }), undefined);
    assert.equal(value('exrates_stale_responses_total'), 2);
  });

  it('counts requests by route, method and status, with latency buckets per route', () => {
    const requests = (route: string, status: string) => value('exrates_http_requests_total', { route, method: 'GET', status });
    assert.equal(requests('/api/v1/rate', '200'), 5);
    assert.equal(requests('/api/v1/rate', '400'), 2);
    assert.equal(requests('/api/v1/convert', '200'), 2);
    assert.equal(requests('/api/v1/history', '200'), 2);
    assert.equal(requests('/api/v1/history', '400'), undefined);

    for (const route of ['/api/v1/rate', '/api/v1/convert', '/api/v1/history']) {
      const buckets = HTTP_BUCKETS.map((le) => value('exrates_http_request_duration_seconds_bucket', { route, le }));
      assert.ok(
        buckets.every((b) => b !== undefined),
        `${route} has every bucket`,
      );
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]! >= buckets[i - 1]!, 'buckets are cumulative');
      const total = route === '/api/v1/rate' ? 7 : 2;
      assert.equal(buckets.at(-1), total);
      assert.equal(value('exrates_http_request_duration_seconds_count', { route }), total);
    }
  });

  it('counts its own scrapes on the next scrape', async () => {
    const next = parseMetrics((await service.app.inject({ method: 'GET', url: '/metrics', headers: SCRAPE })).body);
    assert.equal(next.get(sampleKey('exrates_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })), 1);
  });
});
