import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { Metrics } from './core/ports.js';

/** The requests of one route, method and status. */
interface RequestSeries {
  /** Counts one request, answered in `seconds`. */
  observe(seconds: number): void;
}

export interface ServiceMetrics extends Metrics {
  registry: Registry;
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** Counts one command sent to Redis (to one node, on a cluster). */
  redisCommand(command: string): void;
}

/** Prometheus metrics on a registry of its own (nothing global, so tests can build many apps). */
export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'exrates_' });
  const refreshes = new Counter({
    name: 'exrates_refresh_total',
    help: 'Refreshes by provider and outcome.',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const refreshDuration = new Histogram({
    name: 'exrates_refresh_duration_seconds',
    help: 'Duration of refreshes by provider.',
    labelNames: ['provider'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const upstream = new Histogram({
    name: 'exrates_upstream_request_duration_seconds',
    help: 'Latency of upstream provider requests by provider, operation and outcome.',
    labelNames: ['provider', 'operation', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const backfills = new Counter({
    name: 'exrates_backfills_total',
    help: 'Backfills of currencies on first request, by provider and outcome.',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const stale = new Counter({ name: 'exrates_stale_responses_total', help: 'Rates served with stale: true.', registers: [registry] });
  const quota = new Counter({ name: 'exrates_quota_rejections_total', help: 'Requests refused with 429.', registers: [registry] });
  const outliers = new Gauge({
    name: 'exrates_cross_check_outliers',
    help: 'Numbers of a provider (currency and day) that differ from the median of the other providers by more than EXRATES_CROSSCHECK_PERCENT, at the latest cross-check; served="false": set aside, not served.',
    labelNames: ['provider', 'served'],
    // Every process checks the same stored numbers: the same count, not one to add up.
    aggregator: 'max',
    registers: [registry],
  });
  const redisCommand = redisCommandCounter(registry);
  const requests = createRequestMetrics(registry);
  return {
    registry,
    httpRequest(route, method, status, seconds) {
      requests.series(route, method, status).observe(seconds);
    },
    refresh(provider, outcome, seconds) {
      refreshes.inc({ provider, outcome });
      refreshDuration.observe({ provider }, seconds);
    },
    upstream(provider, operation, outcome, seconds) {
      upstream.observe({ provider, operation, outcome }, seconds);
    },
    backfill(provider, outcome) {
      backfills.inc({ provider, outcome });
    },
    staleServed() {
      stale.inc();
    },
    quotaRejected() {
      quota.inc();
    },
    crossCheck(provider, served, setAside) {
      outliers.set({ provider, served: 'true' }, served);
      outliers.set({ provider, served: 'false' }, setAside);
    },
    redisCommand,
  };
}

/**
 * exrates_redis_commands_total on `registry`; returns what counts one command. Also the main
 * process's own metric when it sends its workers' quota decisions to Redis (cluster.ts).
 */
export function redisCommandCounter(registry: Registry): (command: string) => void {
  const redisCommands = new Counter({
    name: 'exrates_redis_commands_total',
    help: 'Commands sent to Redis, by command: against exrates_http_requests_total, the Redis round trips per request.',
    labelNames: ['command'],
    registers: [registry],
  });
  return (command) => redisCommands.inc({ command: command.toLowerCase() });
}

export const HTTP_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * exrates_http_requests_total and exrates_http_request_duration_seconds, counted in plain numbers
 * on every request and handed to the registry when it is read. Written by hand because a labelled
 * prom-client observation works out its labels' key on every call, which costs more than a whole
 * cached answer; the counter is still prom-client's (fed on scrape), and the histogram is
 * reported in the shape prom-client's own histograms have, so cluster aggregation sums it alike.
 */
function createRequestMetrics(registry: Registry): { series(route: string, method: string, status: number): RequestSeries } {
  interface Latency {
    route: string;
    /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
    counts: Float64Array;
    sum: number;
    count: number;
  }
  interface Series extends RequestSeries {
    labels: { route: string; method: string; status: string };
    pending: number;
  }
  const all: Series[] = [];
  const index = new Map<string, Map<string, Map<number, Series>>>();
  const latencies = new Map<string, Latency>();

  const requests = new Counter({
    name: 'exrates_http_requests_total',
    help: 'HTTP requests by route and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect() {
      for (const series of all) {
        if (series.pending === 0) continue;
        this.inc(series.labels, series.pending);
        series.pending = 0;
      }
    },
  });

  const name = 'exrates_http_request_duration_seconds';
  const help = 'HTTP request latency by route.';
  const latencyMetric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      for (const latency of latencies.values()) {
        // As with prom-client's histograms, a series appears once observed (again, after a reset).
        if (latency.count === 0) continue;
        const { route } = latency;
        let cumulative = 0;
        HTTP_BUCKETS.forEach((le, i) => {
          cumulative += latency.counts[i]!;
          values.push({ labels: { le, route }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push(
          { labels: { le: '+Inf', route }, value: latency.count, metricName: `${name}_bucket` },
          { labels: { route }, value: latency.sum, metricName: `${name}_sum` },
          { labels: { route }, value: latency.count, metricName: `${name}_count` },
        );
      }
      return Promise.resolve({ name, help, type: 'histogram', values, aggregator: 'sum' });
    },
    reset() {
      for (const latency of latencies.values()) {
        latency.counts.fill(0);
        latency.sum = 0;
        latency.count = 0;
      }
    },
  };
  registry.registerMetric(latencyMetric as unknown as Metric);
  // Registry.resetMetrics() resets the counter; pending counts go with it.
  const resetCounter = requests.reset.bind(requests);
  requests.reset = () => {
    for (const series of all) series.pending = 0;
    resetCounter();
  };

  function latencyOf(route: string): Latency {
    let latency = latencies.get(route);
    if (!latency) latencies.set(route, (latency = { route, counts: new Float64Array(HTTP_BUCKETS.length + 1), sum: 0, count: 0 }));
    return latency;
  }

  return {
    series(route, method, status) {
      // Nested by label rather than one joined key: no key string is built per request.
      let byMethod = index.get(route);
      if (!byMethod) index.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      let series = byStatus.get(status);
      if (!series) {
        const latency = latencyOf(route);
        series = {
          labels: { route, method, status: String(status) },
          pending: 0,
          observe(seconds) {
            this.pending += 1;
            let i = 0;
            while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]!) i++;
            latency.counts[i] = latency.counts[i]! + 1;
            latency.sum += seconds;
            latency.count += 1;
          },
        };
        all.push(series);
        byStatus.set(status, series);
      }
      return series;
    },
  };
}
