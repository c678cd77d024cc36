/**
 * What `npm run bench:instructions` (bench/instructions.ts) writes to bench/results/instructions/
 * and how a run renders: in its output and in docs/performance.md (scripts/perf-doc.ts).
 */
import { join } from 'node:path';
import { RESULTS_DIR } from './report.js';

export const INSTRUCTIONS_DIR = join(RESULTS_DIR, 'instructions');

/**
 * Instructions of the main thread, of the main thread without libuv's timers and immediates (the
 * request path's: the work of every few milliseconds or every second runs there, see
 * bench/instructions.ts) and of every thread; with `--cache-sim`, the main thread's misses in the
 * simulated last-level cache, with and without timers and immediates. Runs recorded before the
 * `untimed` figures have only the others.
 */
export type InstructionFigures = { main: number; untimed?: number; all: number; lastLevelMisses?: number; untimedMisses?: number };

export interface InstructionRow {
  name: string;
  server: 'reference' | 'service';
  /** Per request: the medians of the row's counts. */
  perRequest: InstructionFigures;
  /** Every count of the row, per request. */
  counts: InstructionFigures[];
  /** baseline+headers' instructions per request over this row's (main thread, without timers and immediates; in runs recorded before those figures, the whole main thread), as requests/s would be if instructions were time. */
  ratioToHeaders?: number;
}

export interface InstructionRun {
  startedAt: string;
  command: string;
  runtime: string;
  commit: string;
  uncommittedSrcChanges: number;
  machine: { cpus: number; cpu: string; memoryGb: number; platform: string };
  /** `lastLevelCacheMb`: the last-level cache simulated (`--cache-sim`), 16-way with 64-byte lines. */
  setup: { requests: number; counts: number; warmup: number; connections: number; keys: number; valgrind: string; lastLevelCacheMb?: number };
  rows: InstructionRow[];
}

const count = (value: number | undefined) => value?.toLocaleString('en-US') ?? '–';

export function renderInstructionRun(run: InstructionRun): string {
  const cache = run.setup.lastLevelCacheMb;
  const lines = [
    `${run.runtime}, \`${run.commit}\`${run.uncommittedSrcChanges ? ` (+${run.uncommittedSrcChanges} uncommitted files in src/)` : ''}, the medians of ${run.setup.counts} counts of ${run.setup.requests} requests per row, after ${run.setup.warmup} not counted, ${run.setup.connections} connections.`,
    '',
    `| row | instructions/request, main thread | without timers and immediates | all threads | × baseline+headers |${cache ? ` last-level misses/request, main thread (${cache} MB) | without timers and immediates |` : ''}`,
    `| --- | ---: | ---: | ---: | ---: |${cache ? ' ---: | ---: |' : ''}`,
    ...run.rows.map(
      ({ name, perRequest, ratioToHeaders }) =>
        `| ${name} | ${count(perRequest.main)} | ${count(perRequest.untimed)} | ${count(perRequest.all)} | ${ratioToHeaders === undefined ? '' : ratioToHeaders.toFixed(3)} |` +
        (cache ? ` ${count(perRequest.lastLevelMisses)} | ${count(perRequest.untimedMisses)} |` : ''),
    ),
  ];
  return lines.join('\n');
}

