import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latencyQuantile, readServiceCounters } from '../../bench/servers.js';
import { createMetrics } from '../../src/metrics.js';

// The bench reads the service's own /metrics text: this is what the service's metrics module writes.
async function reading(observe: (metrics: ReturnType<typeof createMetrics>) => void, metrics = createMetrics()) {
  observe(metrics);
  return { metrics, counters: readServiceCounters(await metrics.registry.metrics()) };
}

test('the in-service p99 comes from the API routes\' latency buckets counted between two readings, as histogram_quantile works it out', async () => {
  const { metrics, counters: before } = await reading((m) => {
    // Before the measured run: slow requests that must not count.
    for (let i = 0; i < 50; i++) m.httpRequest('/api/v1/rate', 'GET', 200, 0.2);
  });
  const { counters: after } = await reading((m) => {
    for (let i = 0; i < 980; i++) m.httpRequest('/api/v1/rate', 'GET', 200, 0.0003);
    for (let i = 0; i < 20; i++) m.httpRequest('/api/v1/convert', 'GET', 200, 0.003);
    // Not an API route: left out.
    for (let i = 0; i < 500; i++) m.httpRequest('/metrics', 'GET', 200, 0.9);
  }, metrics);
  assert.equal(after.apiLatency.get(Infinity)! - before.apiLatency.get(Infinity)!, 1000);
  // The 990th of 1,000 is the 10th of the 20 in the (0.0025, 0.005] bucket: halfway through it.
  assert.equal(latencyQuantile(0.99, before.apiLatency, after.apiLatency), 0.0025 + 0.0025 * (10 / 20));
  // The 490th falls in the first bucket, (0, 0.0005].
  assert.equal(latencyQuantile(0.49, before.apiLatency, after.apiLatency), 0.0005 * (490 / 980));
});

test('no API request between the readings gives no quantile; one above every bucket gives the highest bound', async () => {
  const { metrics, counters: before } = await reading(() => {});
  assert.equal(latencyQuantile(0.99, before.apiLatency, before.apiLatency), undefined);
  const { counters: after } = await reading((m) => m.httpRequest('/api/v1/rate', 'GET', 200, 30), metrics);
  assert.equal(latencyQuantile(0.99, before.apiLatency, after.apiLatency), 2.5);
});
