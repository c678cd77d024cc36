import type { FastifyInstance } from 'fastify';
import { announceListening, announceLoaded, checkFileSource } from './announce.js';
import { buildApp, buildMetricsApp } from './app.js';
import type { Config } from './config.js';
import { createDeps, type Deps, type DepsOptions } from './deps.js';
import { applyEngineWorkarounds } from './workarounds.js';

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  /** Resolves when the first refresh of every provider has finished (successfully or not). */
  initialLoad: Promise<void>;
  /**
   * Resolves, with the reason, once the store can no longer be written (deleted, replaced,
   * read-only, its disk full); logged as an error, and /readyz says not ready from then on. The
   * caller stops the process: serving on would only lose what it counts.
   */
  storeFault: Promise<string>;
  close(): Promise<void>;
}

/**
 * Listens, loads what the providers have (history on an empty store, what is new after that),
 * refreshes on wall-clock multiples of the interval, and shuts down gracefully.
 */
export async function startServer(config: Config, options: DepsOptions = {}): Promise<RunningServer> {
  // Before the first full collection, which loading the rates makes.
  if (config.engineWorkarounds) await applyEngineWorkarounds();
  await checkFileSource(config);
  let deps: Deps | undefined;
  let app: FastifyInstance;
  let metricsApp: FastifyInstance | undefined;
  try {
    deps = await createDeps(config, options);
    app = await buildApp(deps, { logRequests: config.logRequests });
    if (config.metrics.port !== undefined) {
      metricsApp = await buildMetricsApp(deps);
      const where = { port: config.metrics.port, host: config.metrics.host };
      await metricsApp.listen(where).catch((error: unknown) => {
        throw listenFailure(error, where, { port: 'EXRATES_METRICS_PORT', host: 'EXRATES_METRICS_HOST' });
      });
    }
    // Fastify logs a line per interface address it listens on (addresses a person may not know):
    // silenced, since the one start line below says where to go.
    const level = app.log.level;
    app.log.level = 'silent';
    try {
      await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
        throw listenFailure(error, config, { port: 'PORT', host: 'HOST' });
      });
    } finally {
      app.log.level = level;
    }
  } catch (error) {
    await metricsApp?.close();
    await deps?.close();
    throw error;
  }
  const ready = deps;
  const storeFault = new Promise<string>((resolve) => {
    ready.database.onFault((reason) => {
      ready.log.error({ store: ready.database.file, reason }, 'the store can no longer be written: stopping');
      resolve(reason);
    });
  });
  announceListening(ready, app.server.address());
  // The stored rates are read before the first refresh, so that the first requests are answered
  // from them at once instead of waiting behind the providers (a refresh parses its document on
  // this thread). A store that cannot be read now is read again by the first request.
  const initialLoad = ready.book
    .snapshot()
    .catch(() => undefined)
    .then(() => ready.refresher.start())
    .then(() => announceLoaded(ready));

  async function close(): Promise<void> {
    await Promise.all([app.close(), metricsApp?.close()]);
    await initialLoad.catch(() => undefined);
    await ready.close();
  }
  return { app, deps: ready, initialLoad, storeFault, close };
}

/** Node's listen errors name neither the setting nor the way out: these do. */
function listenFailure(error: unknown, { port, host }: { port: number; host: string }, setting: { port: string; host: string }): unknown {
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const elsewhere = `set ${setting.port} (and ${setting.host}) to listen elsewhere`;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new Error(`cannot listen on ${where}: another process listens there; stop it, or ${elsewhere}`, { cause: error });
    case 'EACCES':
      return new Error(
        port > 0 && port < 1024
          ? `cannot listen on ${where}: ports below 1024 need privileges; set ${setting.port} to a free port of 1024 or more`
          : `cannot listen on ${where}: not permitted on this machine; ${elsewhere}`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
      return new Error(`cannot listen on ${where}: ${setting.host} is not an address of this machine; set ${setting.host} to one of its addresses, or 0.0.0.0 for all`, { cause: error });
    default:
      return error;
  }
}
