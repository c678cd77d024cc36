/**
 * Measures the live-feed paths against the local fake upstreams (test/feeds/fake-upstreams.ts):
 *  1. a first /api/v1/rate request that backfills five years of NGN, against a request for a
 *     stored pair in the same run (median of 5 runs, each on a fresh store);
 *  2. p50/p99 latency of 2,000 stored-pair requests through app.inject while ECB is healthy,
 *     answering HTTP 500, and hanging with a refresh in flight.
 *
 * Run: node --import tsx scripts/measure-feeds.ts
 */
import {
  cleanup,
  createEcbTemplate,
  createFeedsService,
  startFakeUpstreams,
  type FakeUpstreams,
  type FeedsService,
} from '../test/feeds/fake-upstreams.js';

const BACKFILL_RUNS = 5;
const LATENCY_REQUESTS = 2_000;
const WARM_UP_REQUESTS = 1_000;
const TIME_LIMIT_MS = 60_000;

const STORED_PATHS = [
  '/api/v1/rate?from=EUR&to=USD',
  '/api/v1/rate?from=GBP&to=JPY',
  '/api/v1/convert?from=CHF&to=SEK&amount=1250.75',
  '/api/v1/rate?from=USD&to=NGN',
];

const median = (values: number[]) => quantile(values, 0.5);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function timed(service: FeedsService, url: string): Promise<number> {
  const started = performance.now();
  const response = await service.app.inject({ method: 'GET', url, headers: { 'x-api-key': service.key } });
  const ms = performance.now() - started;
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body}`);
  return ms;
}

async function measureBackfill(fake: FakeUpstreams, template: string): Promise<{ backfill: number; stored: number }> {
  const backfills: number[] = [];
  const stored: number[] = [];
  for (let run = 0; run < BACKFILL_RUNS; run++) {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      // The first request reads the store into memory; that cost is neither backfill nor steady state.
      await timed(service, '/api/v1/rate?from=EUR&to=USD');
      const before = fake.calls('/frankfurter/v2/rates');
      backfills.push(await timed(service, '/api/v1/rate?from=EUR&to=NGN'));
      if (fake.calls('/frankfurter/v2/rates') !== before + 1) throw new Error('the first NGN request did not backfill');
      stored.push(await timed(service, '/api/v1/rate?from=GBP&to=CHF'));
    } finally {
      await service.close();
    }
  }
  return { backfill: median(backfills), stored: median(stored) };
}

async function latencies(service: FeedsService, count: number): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i++) result.push(await timed(service, STORED_PATHS[i % STORED_PATHS.length]!));
  return result;
}

async function main(): Promise<void> {
  const started = performance.now();
  const fake = await startFakeUpstreams();
  try {
    const template = await createEcbTemplate(fake);
    const backfill = await measureBackfill(fake, template);

    await fake.reset();
    const service = await createFeedsService(fake, { copyFrom: template, tier: 'pro', env: { EXRATES_UPSTREAM_TIMEOUT_MS: '60000' } });
    const rows: Array<{ state: string; p50: number; p99: number }> = [];
    try {
      await latencies(service, WARM_UP_REQUESTS);
      const healthy = await latencies(service, LATENCY_REQUESTS);
      rows.push({ state: 'ECB healthy', p50: quantile(healthy, 0.5), p99: quantile(healthy, 0.99) });

      await fake.ecb.setMode('http500');
      const [failed] = await service.deps.refresher.refreshAll();
      if (failed!.ok) throw new Error('the ECB refresh should have failed');
      const probe = await service.app.inject({ method: 'GET', url: STORED_PATHS[0]!, headers: { 'x-api-key': service.key } });
      if ((probe.json() as { stale: boolean }).stale !== true) throw new Error('rates should be served as stale while ECB fails');
      const down = await latencies(service, LATENCY_REQUESTS);
      rows.push({ state: 'ECB HTTP 500 (stale)', p50: quantile(down, 0.5), p99: quantile(down, 0.99) });

      await fake.ecb.setMode('hang');
      const refreshing = service.deps.refresher.refreshAll();
      const hanging = await latencies(service, LATENCY_REQUESTS);
      rows.push({ state: 'ECB hanging, refresh in flight', p50: quantile(hanging, 0.5), p99: quantile(hanging, 0.99) });
      await fake.reset();
      await refreshing;

      // Measured again last, so warm-up order does not decide the comparison.
      const [recovered] = await service.deps.refresher.refreshAll();
      if (!recovered!.ok) throw new Error(`the ECB refresh should have succeeded: ${recovered!.error}`);
      const again = await latencies(service, LATENCY_REQUESTS);
      rows.push({ state: 'ECB healthy again', p50: quantile(again, 0.5), p99: quantile(again, 0.99) });
    } finally {
      await service.close();
    }

    const ms = (value: number) => `${value.toFixed(2)} ms`;
    const pad = (text: string, width: number) => text.padEnd(width);
    console.log(`\nBackfill through the first /api/v1/rate request (median of ${BACKFILL_RUNS} fresh stores)`);
    console.log(`  ${pad('first EUR→NGN request (5-year backfill)', 44)}${ms(backfill.backfill)}`);
    console.log(`  ${pad('stored pair GBP→CHF, same run', 44)}${ms(backfill.stored)}`);
    console.log(`  ${pad('ratio', 44)}${(backfill.backfill / backfill.stored).toFixed(1)}×`);

    const base = rows[0]!;
    console.log(`\nLatency of ${LATENCY_REQUESTS} stored-pair requests via app.inject`);
    console.log(`  ${pad('upstream state', 34)}${pad('p50', 12)}${pad('p99', 12)}${pad('p50 ratio', 11)}p99 ratio`);
    for (const row of rows) {
      console.log(
        `  ${pad(row.state, 34)}${pad(ms(row.p50), 12)}${pad(ms(row.p99), 12)}${pad(`${(row.p50 / base.p50).toFixed(2)}×`, 11)}${(row.p99 / base.p99).toFixed(2)}×`,
      );
    }
    console.log(`\nTotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await fake.close();
    cleanup();
  }
}

const limit = setTimeout(() => {
  console.error(`measure-feeds: gave up after ${TIME_LIMIT_MS / 1000} s`);
  process.exit(1);
}, TIME_LIMIT_MS);
limit.unref();

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
