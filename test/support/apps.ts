/**
 * Built (not listening) apps for tests that speak to the service through `app.inject`: on a fresh
 * SQLite file, serving either the shared ECB history or the fake upstreams, with one issued key.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { issueApiKey } from '../../src/core/api-keys.js';
import type { Tier } from '../../src/core/ports.js';
import { syncProvider } from '../../src/core/refresh.js';
import { frozenClock } from '../../src/core/time.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger, type Logger } from '../../src/log.js';
import { fakeUpstreamVars, sharedHistoryVars } from './env.js';
import { listenApp } from './ports.js';
import { tempDir } from './stores.js';
import { startFakeUpstreams, type FakeUpstreams } from './upstreams.js';

/** A well-formed API key that no server issued: made at test time, so no key-shaped literal sits in the tests. */
export function unissuedKey(): string {
  return `exr_${randomBytes(16).toString('hex')}`;
}

export async function issueKey(deps: Deps, tier: Tier = 'free'): Promise<string> {
  return (await issueApiKey(deps.keys, { tier, owner: 'tester@example.org' }, deps.clock)).key;
}

/** The configuration of an in-process service on a SQLite file; silent unless `vars` say otherwise. */
function inProcessConfig(databaseFile: string, vars: Record<string, string>): Config {
  return loadConfig({
    EXRATES_DATABASE_URL: `sqlite:${databaseFile}`,
    EXRATES_LOG_LEVEL: 'silent',
    EXRATES_CONTACT_EMAIL: 'keys@example.org',
    ...vars,
  });
}

/** A configuration on a fresh SQLite file, serving the shared ECB history through the file provider. */
export function testConfig(dir: string, overrides: Record<string, string> = {}): Config {
  return inProcessConfig(join(dir, 'exrates.db'), { ...sharedHistoryVars(), ...overrides });
}

/** A configuration on a SQLite file, serving ECB and Frankfurter from the fakes. */
export function feedsConfig(fake: FakeUpstreams, databaseFile: string, overrides: Record<string, string> = {}): Config {
  return inProcessConfig(databaseFile, { ...fakeUpstreamVars(fake), ...overrides });
}

export async function loadAll(deps: Deps): Promise<void> {
  for (const provider of deps.providers) {
    const outcome = await syncProvider(provider, deps.rates, deps.clock, deps.log, { years: deps.config.historyYears });
    if (!outcome.ok) throw new Error(`loading ${provider.id} failed: ${outcome.error}`);
  }
  deps.book.invalidate();
}

interface BuiltService {
  app: FastifyInstance;
  deps: Deps;
  key: string;
  /** Closes the app and deps, keeping the database file. */
  close(): Promise<void>;
}

async function buildService(config: Config, log: Logger, options: { load: boolean; tier: Tier }): Promise<BuiltService> {
  // Time stands still in these tests: answers that name an instant or a wait can be compared whole.
  const deps = await createDeps(config, { log, ...(config.now ? { clock: frozenClock(config.now) } : {}) });
  if (options.load) await loadAll(deps);
  const app = await buildApp(deps);
  await app.ready();
  const key = await issueKey(deps, options.tier);
  return {
    app,
    deps,
    key,
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  dir: string;
  key: string;
  close(): Promise<void>;
}

/** A built (not listening) app on a fresh store loaded with the shared ECB history, and one free key. */
export async function createTestApp(overrides: Record<string, string> = {}, options: { load?: boolean } = {}): Promise<TestApp> {
  const dir = tempDir();
  const service = await buildService(testConfig(dir.path, overrides), createLogger('silent'), { load: options.load ?? true, tier: 'free' });
  return {
    app: service.app,
    deps: service.deps,
    dir: dir.path,
    key: service.key,
    async close() {
      await service.close();
      dir.remove();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The service on the fake upstreams

/** Log lines written by the service, parsed. */
export interface CapturedLog {
  lines: Array<Record<string, unknown>>;
  stream: Writable;
}

export function captureLog(): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, stream };
}

export interface FeedsService extends BuiltService {
  log: CapturedLog;
  databaseFile: string;
  /** GET with the key; the parsed JSON body when there is one. */
  get(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }>;
}

export interface FeedsServiceOptions {
  /** Start from a copy of this database file instead of an empty store. */
  copyFrom?: string;
  /** Use this database file as it is (a restart). */
  databaseFile?: string;
  env?: Record<string, string>;
  /** Key tier: 'pro' for request volumes above the free quota. */
  tier?: 'free' | 'pro';
}

const temporaryDirs: Array<{ remove(): void }> = [];

/** The service built on the fakes, on a SQLite file in a temp folder that `cleanup()` removes. */
export async function createFeedsService(fake: FakeUpstreams, options: FeedsServiceOptions = {}): Promise<FeedsService> {
  let databaseFile = options.databaseFile;
  if (!databaseFile) {
    const dir = tempDir('exrates-feeds-');
    temporaryDirs.push(dir);
    databaseFile = join(dir.path, 'exrates.db');
    if (options.copyFrom) {
      copyFileSync(options.copyFrom, databaseFile);
      for (const suffix of ['-wal', '-shm']) if (existsSync(options.copyFrom + suffix)) copyFileSync(options.copyFrom + suffix, databaseFile + suffix);
    }
  }
  const log = captureLog();
  const service = await buildService(feedsConfig(fake, databaseFile, options.env), createLogger('info', log.stream), { load: false, tier: options.tier ?? 'free' });
  const { app, key } = service;
  return {
    ...service,
    log,
    databaseFile,
    async get(url) {
      const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
      const type = String(response.headers['content-type'] ?? '');
      const body = type.includes('json') ? (response.json() as Record<string, unknown>) : { text: response.body };
      return { status: response.statusCode, headers: response.headers as Record<string, unknown>, body };
    },
  };
}

/** Removes every temp folder made by createFeedsService and createEcbTemplate. */
export function cleanup(): void {
  for (const dir of temporaryDirs.splice(0)) dir.remove();
}

/**
 * A store holding ECB's retained history through `ECB_HISTORY_THROUGH`, loaded once through the
 * service's own refresh from the fake ECB; tests copy the file instead of loading it again.
 */
export async function createEcbTemplate(fake: FakeUpstreams): Promise<string> {
  const service = await createFeedsService(fake);
  const [ecb] = await service.deps.refresher.refreshAll();
  if (!ecb?.ok) throw new Error(`loading the ECB template failed: ${ecb?.error}`);
  await service.close();
  return service.databaseFile;
}

/** The fakes and an ECB template store, for a test file's `before`; `closeFakeFeeds` in its `after` undoes both. */
export async function startFakeFeeds(): Promise<{ fake: FakeUpstreams; template: string }> {
  const fake = await startFakeUpstreams();
  return { fake, template: await createEcbTemplate(fake) };
}

export async function closeFakeFeeds(fake: FakeUpstreams | undefined): Promise<void> {
  await fake?.close();
  cleanup();
}

/** A test app listening on loopback, and a pro key: clients over real sockets make more requests than the free quota. */
export async function listeningTestApp(): Promise<{ test: TestApp; base: string; key: string }> {
  const test = await createTestApp();
  const key = await issueKey(test.deps, 'pro');
  return { test, base: await listenApp(test.app), key };
}
