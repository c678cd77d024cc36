import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { syncProvider } from './core/refresh.js';
import { createDeps, type Deps } from './deps.js';

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  /** Resolves when the first load from every provider has finished (successfully or not). */
  initialLoad: Promise<void>;
  close(): Promise<void>;
}

/** One refresh of every provider, in order; never two at once in this process. */
export function createRefresher(deps: Deps) {
  let running: Promise<void> | undefined;
  return function refreshAll(): Promise<void> {
    running ??= (async () => {
      try {
        for (const provider of deps.providers) {
          const started = Date.now();
          const outcome = await syncProvider(provider, deps.rates, deps.clock, deps.log);
          deps.log.info({ ...outcome, ms: Date.now() - started }, outcome.ok ? 'refresh done' : 'refresh failed');
        }
      } finally {
        deps.book.invalidate();
        running = undefined;
      }
    })();
    return running;
  };
}

/**
 * Listens, loads what the providers have (history on an empty store, what is new after that),
 * refreshes on wall-clock multiples of the interval, and shuts down gracefully.
 */
export async function startServer(config: Config): Promise<RunningServer> {
  const deps = await createDeps(config);
  const app = await buildApp(deps, { logRequests: true });
  const refreshAll = createRefresher(deps);
  let timer: NodeJS.Timeout | undefined;
  let closing = false;

  function scheduleNext(): void {
    if (closing) return;
    const interval = config.refreshSeconds * 1000;
    timer = setTimeout(() => {
      void refreshAll().finally(scheduleNext);
    }, interval - (Date.now() % interval));
    timer.unref();
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await deps.close();
    throw error;
  }
  const initialLoad = refreshAll().finally(scheduleNext);

  async function close(): Promise<void> {
    closing = true;
    if (timer) clearTimeout(timer);
    await app.close();
    await initialLoad.catch(() => undefined);
    await deps.close();
  }
  return { app, deps, initialLoad, close };
}
