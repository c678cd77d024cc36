/**
 * The cost of computing and rendering a history, without the network: every ordered pair of the
 * currencies ECB publishes now, each range and format, rendered by src/http/responses.ts on the
 * full ECB history (SQLite in a temporary folder, file provider, fixed clock), with nothing kept
 * between rounds. This is what a request pays when its answer is not held yet (the first request
 * of a pair after a refresh, or after the cache dropped it).
 *
 *   npm run bench:history                  # 1y and 5y, JSON and CSV, 3 rounds each
 *   npm run bench:history -- --rounds 5
 *
 * Prints microseconds per pair for each round; the median is the figure to compare.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { createHistoryBodies } from '../src/http/responses.js';
import { createLogger } from '../src/log.js';
import { quotesNow } from '../src/core/rate-index.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string' } } });
const ROUNDS = Number(flags.rounds ?? 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, got '${flags.rounds}'`);
const CSV = process.env.BENCH_ECB_CSV ?? fileURLToPath(new URL('../../shared/data/ecb/eurofxref-hist.csv', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'exrates-history-'));
const config = loadConfig({
  EXRATES_DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
  EXRATES_PROVIDERS: 'file',
  EXRATES_FILE_URL: CSV,
  EXRATES_NOW: '2026-03-06T12:00:00Z',
  EXRATES_LOG_LEVEL: 'silent',
  EXRATES_CONTACT_EMAIL: 'bench@example.org',
});
const deps = await createDeps(config, { log: createLogger('silent') });
try {
  for (const outcome of await deps.refresher.refreshAll()) {
    if (!outcome.ok) throw new Error(`loading ${outcome.provider} failed: ${outcome.error}`);
  }
  const snapshot = await deps.book.snapshot();
  const data = [...snapshot.data.values()][0]!;
  const codes = [data.base, ...[...data.series.keys()].filter((code) => quotesNow(data, code))].sort();
  const pairs = codes.flatMap((a) => codes.filter((b) => b !== a).map((b) => [a, b] as const));
  console.log(`history: ${pairs.length} pairs, ${ROUNDS} rounds, µs per pair (computed and rendered, nothing kept)`);
  for (const range of ['1y', '5y'] as const) {
    for (const csv of [false, true]) {
      const perPair: number[] = [];
      let bytes = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // A cache of its own per round, large enough to keep everything: every call computes.
        const bodies = createHistoryBodies(deps.book, 1024 * 1024 * 1024);
        bytes = 0;
        const started = performance.now();
        for (const [from, to] of pairs) bytes += (await bodies.render(from, to, range, csv)).body.length;
        perPair.push(((performance.now() - started) * 1000) / pairs.length);
      }
      const sorted = [...perPair].sort((a, b) => a - b);
      const name = `${range} ${csv ? 'CSV' : 'JSON'}`;
      console.log(
        `${name.padEnd(8)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0).padStart(5)}  (${perPair.map((v) => v.toFixed(0)).join(', ')}), ${(bytes / 1048576).toFixed(1)} MB for all pairs`,
      );
    }
  }
} finally {
  await deps.close();
  rmSync(dir, { recursive: true, force: true });
}
