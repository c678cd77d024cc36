import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metrics } from './core/ports.js';

export interface ServiceMetrics extends Metrics {
  registry: Registry;
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** A response given on the fast path (it is counted by httpRequest too). */
  fastPathServed(): void;
}

/** Prometheus metrics on a registry of its own (nothing global, so tests can build many apps). */
export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'exrates_' });
  const requests = new Counter({
    name: 'exrates_http_requests_total',
    help: 'HTTP requests by route and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'exrates_http_request_duration_seconds',
    help: 'HTTP request latency by route.',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
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
  const fastPath = new Counter({
    name: 'exrates_http_fast_path_responses_total',
    help: 'Responses answered on the fast path, without the full request pipeline (also counted in exrates_http_requests_total).',
    registers: [registry],
  });
  // Label children looked up once per route, method and status: resolving labels on every
  // request costs more than the observation itself.
  const requestChildren = new Map<string, { inc(): void }>();
  const latencyChildren = new Map<string, { observe(value: number): void }>();
  return {
    registry,
    httpRequest(route, method, status, seconds) {
      const key = `${route} ${method} ${status}`;
      let counter = requestChildren.get(key);
      if (!counter) requestChildren.set(key, (counter = requests.labels(route, method, String(status))));
      counter.inc();
      let histogram = latencyChildren.get(route);
      if (!histogram) latencyChildren.set(route, (histogram = latency.labels(route)));
      histogram.observe(seconds);
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
    fastPathServed() {
      fastPath.inc();
    },
  };
}
