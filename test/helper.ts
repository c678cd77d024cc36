import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { issueApiKey } from '../src/core/api-keys.js';
import type { Tier } from '../src/core/ports.js';
import { syncProvider } from '../src/core/refresh.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/log.js';

/** The shared data folder beside the repository, read in place. */
export const SHARED_DATA = fileURLToPath(new URL('../../shared/data/', import.meta.url));
export const ECB_CSV = join(SHARED_DATA, 'ecb', 'eurofxref-hist.csv');
export const ECB_XML_DIR = join(SHARED_DATA, 'ecb', 'xml');
/** Just after the last day of the shared ECB history (2026-03-05). */
export const FIXED_NOW = '2026-03-06T12:00:00Z';

/** A well-formed API key that no server issued: made at test time, so no key-shaped literal sits in the tests. */
export function unissuedKey(): string {
  return `exr_${randomBytes(16).toString('hex')}`;
}

export function tempDir(prefix = 'exrates-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A configuration on a fresh SQLite file, serving the shared ECB history through the file provider. */
export function testConfig(dir: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    EXRATES_DATABASE_URL: `sqlite:${join(dir, 'exrates.db')}`,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: ECB_CSV,
    EXRATES_NOW: FIXED_NOW,
    EXRATES_LOG_LEVEL: 'silent',
    EXRATES_CONTACT_EMAIL: 'keys@example.org',
    ...overrides,
  });
}

export async function loadAll(deps: Deps): Promise<void> {
  for (const provider of deps.providers) {
    const outcome = await syncProvider(provider, deps.rates, deps.clock, deps.log);
    if (!outcome.ok) throw new Error(`loading ${provider.id} failed: ${outcome.error}`);
  }
  deps.book.invalidate();
}

export async function issueKey(deps: Deps, tier: Tier = 'free'): Promise<string> {
  return (await issueApiKey(deps.keys, { tier, owner: 'tester@example.org' }, deps.clock)).key;
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
  const config = testConfig(dir.path, overrides);
  const deps = await createDeps(config, { log: createLogger('silent') });
  if (options.load ?? true) await loadAll(deps);
  const app = await buildApp(deps);
  await app.ready();
  const key = await issueKey(deps);
  return {
    app,
    deps,
    dir: dir.path,
    key,
    async close() {
      await app.close();
      await deps.close();
      dir.remove();
    },
  };
}
