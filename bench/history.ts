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
import { parseArgs } from 'node:util';
import { createHistoryBodies } from '../src/http/responses.js';
import { openEcbStore } from './ecb-store.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string' } } });
const ROUNDS = Number(flags.rounds ?? 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, got '${flags.rounds}'`);

const { deps, pairs, close } = await openEcbStore('history');
try {
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
        for (const [from, to] of pairs) bytes += (await bodies.render(from, to, range, csv)).kept.body.length;
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
  await close();
}
