/**
 * For the benches that run the service's code in their own process (history.ts): its
 * dependencies on a temporary SQLite store holding the shared ECB history (file provider,
 * clock fixed at 2026-03-06T12:00:00Z, as in servers.ts), and the pairs of the currencies quoted now.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../src/config.js';
import { quotesNow } from '../src/core/rate-index.js';
import { createDeps, type Deps } from '../src/deps.js';
import { createLogger } from '../src/log.js';

const CSV = process.env.BENCH_ECB_CSV ?? fileURLToPath(new URL('../../shared/data/ecb/eurofxref-hist.csv', import.meta.url));

export interface EcbStore {
  config: Config;
  deps: Deps;
  /** Every ordered pair of the currencies a provider quotes now (ECB's history also holds currencies it no longer publishes). */
  pairs: Array<readonly [string, string]>;
  close(): Promise<void>;
}

export async function openEcbStore(name: string, env: Record<string, string> = {}): Promise<EcbStore> {
  const dir = mkdtempSync(join(tmpdir(), `exrates-${name}-`));
  const config = loadConfig({
    EXRATES_DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: CSV,
    EXRATES_NOW: '2026-03-06T12:00:00Z',
    EXRATES_LOG_LEVEL: 'silent',
    EXRATES_CONTACT_EMAIL: 'bench@example.org',
    ...env,
  });
  const deps = await createDeps(config, { log: createLogger('silent') });
  const close = async () => {
    await deps.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const outcome of await deps.refresher.refreshAll()) {
      if (!outcome.ok) throw new Error(`loading ${outcome.provider} failed: ${outcome.error}`);
    }
    const snapshot = await deps.book.snapshot();
    const codes = [...new Set([...snapshot.data.values()].flatMap((d) => [d.base, ...[...d.series.keys()].filter((code) => quotesNow(d, code))]))].sort();
    const pairs = codes.flatMap((a) => codes.filter((b) => b !== a).map((b) => [a, b] as const));
    return { config, deps, pairs, close };
  } catch (error) {
    await close();
    throw error;
  }
}
