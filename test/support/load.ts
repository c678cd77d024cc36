/** Steady load for the fault suites: a fixed number of requests at a fixed rate, with events run at their times. */
import http from 'node:http';
import { get, type Reply } from './http.js';
import { sleep } from './wait.js';

export interface Outcome {
  /** Milliseconds from the start of the load when the request was sent. */
  at: number;
  /** The target's name. */
  instance: string;
  status: number | 'error';
  ms: number;
  error?: string;
  reply?: Reply;
}

export interface Load {
  outcomes: Outcome[];
  /** When each event ran, in milliseconds from the start of the load. */
  events: Record<string, number>;
}

export interface LoadOptions {
  /** Requests go round these in turn. */
  targets: ReadonlyArray<{ name: string; base: string }>;
  /** The path of the i-th request. */
  path: (i: number) => string;
  key: string;
  perSecond: number;
  durationMs: number;
  /** Run once each, `at` milliseconds after the start. */
  events?: Record<string, { at: number; run: () => Promise<unknown> | unknown }>;
  /** Reuse connections (one keep-alive agent for the whole load) instead of one connection per request. */
  keepAlive?: boolean;
}

/** Sends `perSecond` requests a second for `durationMs`; bounded, since the number of requests is fixed up front. */
export async function drive(options: LoadOptions): Promise<Load> {
  const agent = options.keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 64 }) : undefined;
  const started = performance.now();
  const total = Math.round((options.durationMs / 1000) * options.perSecond);
  const ran: Record<string, number> = {};
  const eventRuns = Object.entries(options.events ?? {}).map(async ([name, event]) => {
    await sleep(Math.max(0, event.at - (performance.now() - started)));
    ran[name] = performance.now() - started;
    await event.run();
  });
  const requests: Array<Promise<Outcome>> = [];
  for (let i = 0; i < total; i += 1) {
    await sleep(Math.max(0, (i * 1000) / options.perSecond - (performance.now() - started)));
    const target = options.targets[i % options.targets.length]!;
    const at = performance.now() - started;
    requests.push(
      get(`${target.base}${options.path(i)}`, { headers: { 'X-Api-Key': options.key }, agent, timeoutMs: 10_000 }).then(
        (reply): Outcome => ({ at, instance: target.name, status: reply.status, ms: reply.ms, reply }),
        (error: unknown): Outcome => ({ at, instance: target.name, status: 'error', ms: performance.now() - started - at, error: String(error) }),
      ),
    );
  }
  const outcomes = await Promise.all(requests);
  await Promise.all(eventRuns);
  agent?.destroy();
  return { outcomes, events: ran };
}
