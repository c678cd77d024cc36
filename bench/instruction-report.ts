/**
 * What `npm run bench:instructions` (bench/instructions.ts) writes to bench/results/instructions/
 * and how a run renders: in its output and in docs/performance.md (scripts/perf-doc.ts).
 */
import { join } from 'node:path';
import { RESULTS_DIR } from './report.js';

export const INSTRUCTIONS_DIR = join(RESULTS_DIR, 'instructions');

/** Instructions of the main thread and of every thread, and with `--cache-sim` the main thread's misses in the simulated last-level cache. */
export type InstructionFigures = { main: number; all: number; lastLevelMisses?: number };

export interface InstructionRow {
  name: string;
  server: 'reference' | 'service';
  /** Per request: the medians of the row's counts. */
  perRequest: InstructionFigures;
  /** Every count of the row, per request. */
  counts: InstructionFigures[];
  /** baseline+headers' instructions per request over this row's (main thread), as requests/s would be if instructions were time. */
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

export function renderInstructionRun(run: InstructionRun): string {
  const cache = run.setup.lastLevelCacheMb;
  const lines = [
    `${run.runtime}, \`${run.commit}\`${run.uncommittedSrcChanges ? ` (+${run.uncommittedSrcChanges} uncommitted files in src/)` : ''}, the medians of ${run.setup.counts} counts of ${run.setup.requests} requests per row, after ${run.setup.warmup} not counted, ${run.setup.connections} connections.`,
    '',
    `| row | instructions/request, main thread | all threads | × baseline+headers |${cache ? ` last-level misses/request, main thread (${cache} MB) |` : ''}`,
    `| --- | ---: | ---: | ---: |${cache ? ' ---: |' : ''}`,
    ...run.rows.map(
      (row) =>
        `| ${row.name} | ${row.perRequest.main.toLocaleString('en-US')} | ${row.perRequest.all.toLocaleString('en-US')} | ${row.ratioToHeaders === undefined ? '' : row.ratioToHeaders.toFixed(3)} |` +
        (cache ? ` ${row.perRequest.lastLevelMisses?.toLocaleString('en-US') ?? ''} |` : ''),
    ),
  ];
  return lines.join('\n');
}

