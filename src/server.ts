import type { FastifyInstance } from 'fastify';
import { announceListening, announceLoaded, checkFileSource } from './announce.js';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createDeps, type Deps, type DepsOptions } from './deps.js';
import { allocatorTrim, keepMemory } from './memory.js';
import { holdTickShape } from './tick-shape.js';

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
  await checkFileSource(config);
  // Before the first full collection: loading the rates makes one (see tick-shape.ts).
  await holdTickShape();
  // Watching from the start: what loading the rates leaves behind is the first collection's.
  const memory = keepMemory();
  let deps: Deps | undefined;
  let app: FastifyInstance;
  try {
    deps = await createDeps(config, options);
    if (!memory) deps.log.warn('V8 full collections cannot be asked for in this Node.js: memory is left to V8 (see docs/operations.md, Memory)');
    else if (process.platform === 'linux' && !allocatorTrim()) {
      deps.log.info('the C allocator keeps the pages freed Buffers leave (the native module is not built, or the C library is not glibc): see docs/operations.md, Memory');
    }
    app = await buildApp(deps, { logRequests: config.logRequests });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    memory?.stop();
    await deps?.close();
    throw error;
  }
  const ready = deps;
  announceListening(ready, app.server.address());
  const initialLoad = ready.refresher
    .refreshAllOnce()
    .then(() => announceLoaded(ready))
    .finally(() => ready.refresher.start());

  async function close(): Promise<void> {
    await app.close();
    await initialLoad.catch(() => undefined);
    await ready.close();
    memory?.stop();
  }
  return { app, deps: ready, initialLoad, close };
}
