import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Config } from './config.js';
import { createLocalLock } from './core/local-lock.js';
import type { Lock, QuotaStore } from './core/ports.js';
import { createClock, openProcessQuotas, quotaMode, STORE_WATCH_MS } from './deps.js';
import type { Logger } from './log.js';
import { migrateToLatest, openDatabase } from './storage/database.js';

/**
 * EXRATES_WORKERS > 1: worker processes share one port (node:cluster), and the main process
 * holds what must be one for all of them when there is no Redis: the quota counters (so quotas
 * stay exact across workers) and the lock that lets one refresh or backfill run at a time. Workers reach both through calls over the cluster's IPC
 * channel, sent in batches: all the calls a worker makes in one turn of its event loop travel in
 * one message. With Redis, both are Redis's: each worker counts there and takes its lock as
 * separate instances do. Metrics go through the main process in every case.
 */

type Method = 'consume' | 'used' | 'acquire' | 'release' | 'isHeld' | 'metrics';
interface Call {
  id: number;
  method: Method;
  args: unknown[];
}
interface Result {
  id: number;
  value?: unknown;
  error?: string;
}
interface CallsMessage {
  exrates: 'calls';
  calls: Call[];
}
interface ResultsMessage {
  exrates: 'results';
  results: Result[];
}

/** The main process asks a worker for its metrics, which answers with them. */
interface MetricsRequest {
  exrates: 'metrics-request';
  id: number;
}
interface MetricsMessage {
  exrates: 'metrics';
  id: number;
  metrics?: Array<MetricObjectWithValues<MetricValue<string>>>;
  error?: string;
}

const isCalls = (message: unknown): message is CallsMessage => (message as CallsMessage | null)?.exrates === 'calls';
const isResults = (message: unknown): message is ResultsMessage => (message as ResultsMessage | null)?.exrates === 'results';
const isMetricsRequest = (message: unknown): message is MetricsRequest => (message as MetricsRequest | null)?.exrates === 'metrics-request';
const isMetrics = (message: unknown): message is MetricsMessage => (message as MetricsMessage | null)?.exrates === 'metrics';

/** How long the main process waits for workers to drain on shutdown before it stops them. */
const SHUTDOWN_GRACE_MS = 30_000;
/** A worker that dies is started again after this long (not at once: it may die at start). */
const RESTART_DELAY_MS = 1_000;
/** How long the main process waits for a worker's metrics. */
const METRICS_TIMEOUT_MS = 5_000;

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/** The main process: migrates, starts the workers, answers their calls, restarts the ones that die. */
export async function runPrimary(config: Config, log: Logger): Promise<{ stop(signal: string): Promise<void>; storeFault: Promise<string> }> {
  // The main process holds the store's writer lock for its workers, and watches the file as each of them does.
  const database = await openDatabase(config.databaseUrl, { holdWriterLock: true, watchMs: STORE_WATCH_MS });
  const storeFault = new Promise<string>((resolve) => {
    database.onFault((reason) => {
      log.error({ store: database.file, reason }, 'the store can no longer be written: stopping');
      resolve(reason);
    });
  });
  try {
    await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  // Counting in the main process (docs/operations.md, "Quota counts"): the workers' counters and lock are this process's.
  const counting = quotaMode(config) === 'main-process';
  let quotas: QuotaStore | undefined;
  if (counting) {
    try {
      quotas = await openProcessQuotas(database, { replayJournal: true, log, clock: createClock(config.now) });
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  const lock: Lock | undefined = counting ? createLocalLock() : undefined;
  const releases = new Map<number, () => Promise<void>>();
  let nextRelease = 1;

  async function answer(call: Call): Promise<unknown> {
    const args = call.args as [never, never, never];
    switch (call.method) {
      case 'consume':
        return quotas!.consume(args[0], args[1], args[2]);
      case 'used':
        return quotas!.used(args[0], args[1]);
      case 'acquire': {
        const release = await lock!.tryAcquire(args[0], args[1]);
        if (!release) return null;
        const token = nextRelease++;
        releases.set(token, release);
        return token;
      }
      case 'release': {
        const release = releases.get(args[0]);
        releases.delete(args[0]);
        await release?.();
        return null;
      }
      case 'isHeld':
        return lock!.isHeld(args[0]);
      case 'metrics':
        return allMetrics();
    }
  }

  // Every worker's metrics, summed.
  let nextMetricsId = 1;
  const metricsWaiting = new Map<number, (answer: MetricsMessage) => void>();
  async function allMetrics(): Promise<string> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
    const answers = await Promise.all(
      workers.map(
        (worker) =>
          new Promise<NonNullable<MetricsMessage['metrics']>>((resolve, reject) => {
            const id = nextMetricsId++;
            const timer = setTimeout(() => {
              metricsWaiting.delete(id);
              reject(new Error(`worker ${worker.process.pid} did not send its metrics within ${METRICS_TIMEOUT_MS} ms`));
            }, METRICS_TIMEOUT_MS);
            metricsWaiting.set(id, (answer) => {
              clearTimeout(timer);
              if (answer.metrics) resolve(answer.metrics);
              else reject(new Error(`worker ${worker.process.pid} could not read its metrics: ${answer.error}`));
            });
            worker.send({ exrates: 'metrics-request', id } satisfies MetricsRequest);
          }),
      ),
    );
    return AggregatorRegistry.aggregate(answers).metrics();
  }

  function onMessage(worker: Worker, message: unknown): void {
    if (isMetrics(message)) {
      const resolve = metricsWaiting.get(message.id);
      metricsWaiting.delete(message.id);
      resolve?.(message);
      return;
    }
    if (!isCalls(message)) return;
    void Promise.all(
      message.calls.map((call) =>
        answer(call).then(
          (value): Result => ({ id: call.id, value }),
          (error: unknown): Result => ({ id: call.id, error: error instanceof Error ? error.message : String(error) }),
        ),
      ),
    ).then((results) => {
      if (worker.isConnected()) worker.send({ exrates: 'results', results } satisfies ResultsMessage);
    });
  }

  let stopping = false;
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (message: unknown) => onMessage(worker, message));
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error({ worker: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, RESTART_DELAY_MS).unref();
  });
  for (let i = 0; i < config.workers; i++) fork();
  log.info({ workers: config.workers, port: config.port, quotas: counting ? 'main process' : 'redis, from each worker' }, 'started workers');

  return {
    storeFault,
    async stop(signal) {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) return resolve();
              const timer = setTimeout(() => worker.process.kill('SIGKILL'), SHUTDOWN_GRACE_MS);
              worker.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              worker.process.kill(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
            }),
        ),
      );
      // Every worker is gone: nothing can count any more, so the counters are final.
      await quotas?.close();
      await database.close();
    },
  };
}

/** A worker's end of the calls to the main process. */
function createCaller(): (method: Method, args: unknown[]) => Promise<unknown> {
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let queue: Call[] = [];
  let nextId = 1;
  process.on('message', (message: unknown) => {
    if (!isResults(message)) return;
    for (const result of message.results) {
      const waiter = pending.get(result.id);
      pending.delete(result.id);
      if (result.error !== undefined) waiter?.reject(new Error(result.error));
      else waiter?.resolve(result.value);
    }
  });
  function send(): void {
    const calls = queue;
    queue = [];
    try {
      process.send!({ exrates: 'calls', calls } satisfies CallsMessage);
    } catch (error) {
      for (const call of calls) {
        pending.get(call.id)?.reject(error instanceof Error ? error : new Error(String(error)));
        pending.delete(call.id);
      }
    }
  }
  return (method, args) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      if (queue.length === 0) setImmediate(send);
      queue.push({ id, method, args });
    });
}

export interface WorkerPorts {
  /** The main process's quota counts, when it keeps them (no Redis). */
  quotas?: QuotaStore;
  /** The main process's lock, when it holds it (no Redis). */
  lock?: Lock;
  /** Metrics of every worker, summed by the main process. */
  clusterMetrics(): Promise<string>;
  /** Makes this worker's metrics part of the sums. */
  reportMetrics(registry: import('prom-client').Registry): void;
}

/** What a worker uses of the main process. Exits when the main process is gone. */
export function workerPorts(config: Config): WorkerPorts {
  const call = createCaller();
  // Without the main process there are no quotas to count against and no one to restart us.
  process.on('disconnect', () => process.exit(1));
  return {
    ...(quotaMode(config) !== 'main-process'
      ? {}
      : {
          quotas: {
            consume: (keyId, day, limit) => call('consume', [keyId, day, limit]) as Promise<{ allowed: boolean; used: number }>,
            used: (keyId, day) => call('used', [keyId, day]) as Promise<number>,
            close: () => Promise.resolve(),
          } satisfies QuotaStore,
          lock: {
            async tryAcquire(name, ttlMs) {
              const token = (await call('acquire', [name, ttlMs])) as number | null;
              return token === null ? null : async () => void (await call('release', [token]));
            },
            isHeld: (name) => call('isHeld', [name]) as Promise<boolean>,
          } satisfies Lock,
        }),
    clusterMetrics: () => call('metrics', []) as Promise<string>,
    reportMetrics(registry) {
      process.on('message', (message: unknown) => {
        if (!isMetricsRequest(message)) return;
        void registry.getMetricsAsJSON().then(
          (metrics) => process.send!({ exrates: 'metrics', id: message.id, metrics } satisfies MetricsMessage),
          (error: unknown) => process.send!({ exrates: 'metrics', id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies MetricsMessage),
        );
      });
    },
  };
}
