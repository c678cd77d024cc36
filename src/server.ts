import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createDeps, type Deps, type DepsOptions } from './deps.js';
import { keepMemory } from './memory.js';

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  /** Resolves when the first refresh of every provider has finished (successfully or not). */
  initialLoad: Promise<void>;
  close(): Promise<void>;
}

/**
 * Listens, loads what the providers have (history on an empty store, what is new after that),
 * refreshes on wall-clock multiples of the interval, and shuts down gracefully.
 */
export async function startServer(config: Config, options: DepsOptions = {}): Promise<RunningServer> {
  // Watching from the start: what loading the rates leaves behind is the first collection's.
  const memory = keepMemory();
  let deps: Deps;
  let app: FastifyInstance;
  try {
    deps = await createDeps(config, options);
  } catch (error) {
    memory?.stop();
    throw error;
  }
  if (!memory) deps.log.warn('V8 full collections cannot be asked for in this Node.js: memory is left to V8 (see docs/operations.md, Memory)');
  try {
    app = await buildApp(deps, { logRequests: config.logRequests });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    memory?.stop();
    await deps.close();
    throw error;
  }
  const initialLoad = deps.refresher.refreshAllOnce().finally(() => deps.refresher.start());

  async function close(): Promise<void> {
    await app.close();
    await initialLoad.catch(() => undefined);
    await deps.close();
    memory?.stop();
  }
  return { app, deps, initialLoad, close };
}
