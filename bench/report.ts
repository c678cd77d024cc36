/**
 * The report of a run: each row compared with the bare baseline measured beside it and held to
 * its target, as a Markdown table with the lines that judge memory and start-up (printed, and
 * rendered into docs/performance.md by scripts/perf-doc.ts), and the run as JSON in
 * bench/results/<UTC time>-<commit>.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round, type Measurement } from './load.js';
import { COLD_START_MS, OPERATOR_FLAGS, PEAK_RSS_MB, SCENARIO_TARGETS, TARGET_CONNECTIONS, missedBecause, targetText, type ScenarioTarget } from './targets.js';

export const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));
/** Runs of a service that kept more years of history than the default (resultsDirOf). */
export const DEEP_HISTORY_DIR = join(RESULTS_DIR, 'deep-history');
export const REFERENCE_ROW = 'baseline+headers';
/** The suffix of a row measuring the service with its engine workarounds off (EXRATES_ENGINE_WORKAROUNDS=false). */
export const PLAIN_VARIANT = '@plain';
/** Other CPU or steal, in % of one core, above which a row is marked noisy (the kernel's loopback work alone stays under it). */
const NOISY_OTHER_CPU = 50;
const NOISY_STEAL = 10;

/** A row: the bare baseline, a reference (the baseline sending the rate answer's header lines), or the service, several workers, on PostgreSQL + Redis or without the engine workarounds when a variant (never judged). */
export interface Row extends Measurement {
  name: string;
  description: string;
  server: 'baseline' | 'reference' | 'service';
  variant?: string;
  /** From the service's /metrics before and after the measured run: Redis commands per response, full collections, collections' pauses in % of the run. */
  redisCommandsPerRequest?: number;
  fullCollections?: number;
  collectionPct?: number;
  /** The rounds of this row's server and the references measured in turn; the median of its ratios to each, the baseline's median figures. */
  rounds?: Round[];
  ratioToBaseline?: number;
  baselineRequestsPerSecond?: number;
  baselineCpuPerRequestUs?: number;
  ratioToHeaders?: number;
  /** A row of rate on other stores: its ratio to baseline+headers over the SQLite row's. */
  ratioToRate?: number;
  target?: ScenarioTarget;
  pass?: boolean;
  failedBecause?: string[];
}

/** One round: the row's server and the bare baseline, and for a service row baseline+headers too, each measured for a few seconds. */
export type Round = { requestsPerSecond: number; baselineRequestsPerSecond: number; headersRequestsPerSecond?: number; cpuPerRequestUs?: number; baselineCpuPerRequestUs?: number };

/** A run: `runtime` is the Node.js of the bench, the service and the baselines; `uncommittedSrcChanges`, files of src/ changed (-1: unknown); `nodeFlags`, the service's (the built CLI's first line and its NODE_OPTIONS). */
export interface Run {
  startedAt: string;
  command: string;
  runtime: string;
  commit: string;
  uncommittedSrcChanges: number;
  machine: { cpus: number; cpu: string; memoryGb: number; platform: string; busyBeforePct?: number };
  setup: Record<'connections' | 'duration' | 'warmup' | 'settle' | 'rounds' | 'roundSeconds' | 'keys' | 'currencies', number> & {
    pinned: string;
    serviceEnv: Record<string, string>;
    nodeFlags: readonly string[];
  };
  rows: Row[];
  /** Each store after the run's first load of the history (SQLite, and PostgreSQL with --database-url): ms from spawn to the first answer, rows, bytes. */
  stores?: Array<{ database: string; firstLoadMs: number; rows: number; bytes: number }>;
  peakRss?: { hwmMb: number; afterRunsMb: number; targetMb: number; pass: boolean; failedBecause: string[] };
  coldStart?: { runsMs: number[]; medianMs: number; targetMs: number; pass: boolean };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Compares each row with the references measured beside it in its rounds (the median of the
 * rounds' ratios: the host's speed drifts over minutes, a round measures the servers within
 * seconds), and holds the service rows that have targets (bench/targets.ts) to them when the run
 * used the targets' connections.
 */
export function judge(rows: Row[], connections: number): void {
  const ratio = (rounds: Round[], of: (r: Round) => number | undefined) => {
    const ratios = rounds.flatMap((r) => (of(r) === undefined ? [] : [r.requestsPerSecond / of(r)!]));
    return ratios.length === rounds.length ? round(median(ratios), 3) : undefined;
  };
  for (const row of rows) {
    if (!row.rounds?.length) continue;
    row.ratioToBaseline = ratio(row.rounds, (r) => r.baselineRequestsPerSecond);
    row.baselineRequestsPerSecond = Math.round(median(row.rounds.map((r) => r.baselineRequestsPerSecond)));
    const cpu = row.rounds.flatMap((r) => (r.baselineCpuPerRequestUs === undefined ? [] : [r.baselineCpuPerRequestUs]));
    if (cpu.length > 0) row.baselineCpuPerRequestUs = round(median(cpu), 1);
    if (row.server !== 'service') continue;
    row.ratioToHeaders = ratio(row.rounds, (r) => r.headersRequestsPerSecond);
  }
  // Another store's rate row is compared with the SQLite one by their ratios to baseline+headers:
  // the two are measured minutes apart, each beside the reference in its own rounds.
  const rate = rows.find((row) => row.name === 'rate')?.ratioToHeaders;
  for (const row of rows) {
    if (row.server !== 'service' || !row.rounds?.length) continue;
    row.target = SCENARIO_TARGETS[row.name];
    if (row.target?.versus === 'rate' && rate !== undefined && row.ratioToHeaders !== undefined) row.ratioToRate = round(row.ratioToHeaders / rate, 3);
    if (row.target && connections === TARGET_CONNECTIONS) {
      row.failedBecause = missedBecause(row.target, row);
      row.pass = row.failedBecause.length === 0;
    }
  }
}

/** Peak RSS and cold start, held to their targets; the memory target admits no node flag but an operator's heap sizes. */
export function judgeRun(peak: { hwmMb: number; afterRunsMb: number } | undefined, nodeFlags: readonly string[], coldStartsMs: number[]): Pick<Run, 'peakRss' | 'coldStart'> {
  const internal = nodeFlags.filter((flag) => !OPERATOR_FLAGS.includes(flag.split('=')[0]!));
  const failedBecause = [...(peak && peak.hwmMb > PEAK_RSS_MB ? [`${peak.hwmMb} MB > ${PEAK_RSS_MB} MB`] : []), ...(internal.length ? [`V8-internal flags: ${internal.join(' ')}`] : [])];
  const runsMs = coldStartsMs.map(Math.round);
  return {
    peakRss: peak && { ...peak, targetMb: PEAK_RSS_MB, pass: failedBecause.length === 0, failedBecause },
    coldStart: runsMs.length > 0 ? { runsMs, medianMs: median(runsMs), targetMs: COLD_START_MS, pass: median(runsMs) <= COLD_START_MS } : undefined,
  };
}

function table(rows: string[][], align: string): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => [...r[c]!].length)));
  const pad = (text: string, c: number) => (align[c] === 'r' ? text.padStart(widths[c]!) : text.padEnd(widths[c]!));
  const rule = widths.map((w, c) => (align[c] === 'r' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)));
  return [rows[0]!, rule, ...rows.slice(1)].map((r, i) => `| ${(i === 1 ? r : r.map(pad)).join(' | ')} |`).join('\n');
}

export function resultsTable(rows: readonly Row[]): string {
  const fixed = (value: number | undefined, digits: number) => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits));
  const pct = (value: number | undefined, noisyAbove?: number) => (value === undefined ? '–' : `${value}%${noisyAbove !== undefined && value > noisyAbove ? '*' : ''}`);
  const lines = [
    ['scenario', 'req/s', '× baseline', '× baseline+headers', 'CPU µs/req', 'baseline µs/req', 'p50 ms', 'p99 ms', 'p99.9 ms', 'errors', 'Redis cmd/req', 'full GCs', 'GC %', 'srv CPU', 'wrk CPU', 'other CPU', 'steal', 'B/resp', 'target', 'result'],
  ];
  for (const row of rows) {
    const baseline = row.server === 'baseline';
    const { latencyMs: ms } = row;
    lines.push([
      ...[row.name, String(row.requestsPerSecond), baseline ? '1.000' : fixed(row.ratioToBaseline, 3), fixed(row.ratioToHeaders, 3)],
      ...[fixed(row.cpuPerRequestUs, 1), baseline ? '–' : fixed(row.baselineCpuPerRequestUs, 1), fixed(ms.p50, 2), fixed(ms.p99, 2), fixed(ms.p999, 2), String(row.errors)],
      ...[fixed(row.redisCommandsPerRequest, 3), fixed(row.fullCollections, 0), fixed(row.collectionPct, 1), pct(row.serverCpuPct), pct(row.loadGeneratorCpuPct)],
      ...[pct(row.otherCpuPct, NOISY_OTHER_CPU), pct(row.stealPct, NOISY_STEAL), String(row.bytesPerResponse), targetText(row.target), row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL'],
    ]);
  }
  return table(lines, `l${'r'.repeat(lines[0]!.length - 3)}ll`);
}

/** The stores after the first load: its time (spawn → first 200 of /api/v1/rate, from a local file), the rate rows, the bytes of the tables. */
export function storesTable(stores: NonNullable<Run['stores']>): string {
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  return table([['store', 'first load ms', 'rate rows', 'MB'], ...stores.map((s) => [s.database, String(s.firstLoadMs), String(s.rows), mb(s.bytes)])], 'lrrr');
}

/** The run in Markdown: what ran where, the table, the verdicts and the notes on noise. */
export function renderRun(run: Run): string {
  const { setup, machine } = run;
  const env = Object.entries(setup.serviceEnv).map(([name, value]) => `${name}=${value}`);
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const lines = [
    `Node.js ${run.runtime}, commit \`${run.commit}\`${run.uncommittedSrcChanges > 0 ? ` + ${run.uncommittedSrcChanges} uncommitted change(s) in src/` : ''}, ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC; ` +
      `${machine.cpus} CPUs (${machine.cpu})${machine.busyBeforePct !== undefined ? `, ${machine.busyBeforePct} % busy before the run` : ''}; ` +
      `${setup.connections} connections, wrk, pinned: ${setup.pinned}; ${setup.duration} s per row after ${setup.warmup} s of warm-up, ${setup.settle} s of load after each start; ` +
      `ratios: the median of ${setup.rounds} rounds of ${setup.roundSeconds} s; node flags: ${setup.nodeFlags.join(' ') || 'none'}${env.length ? `; env ${env.join(' ')}` : ''}.`,
    '',
    `\`${run.command}\``,
    '',
    resultsTable(run.rows),
    '',
  ];
  if (run.stores?.length) lines.push(storesTable(run.stores), '');
  if (run.peakRss) {
    const { hwmMb, afterRunsMb, targetMb, pass, failedBecause } = run.peakRss;
    lines.push(`- Peak RSS (VmHWM, start included): ${hwmMb} MB, ${afterRunsMb} MB after the runs; target ≤ ${targetMb} MB without V8-internal flags: **${verdict(pass)}**${failedBecause.length ? ` (${failedBecause.join('; ')})` : ''}.`);
  }
  if (run.coldStart) {
    const { runsMs, medianMs, targetMs, pass } = run.coldStart;
    lines.push(`- Cold start (spawn → first 200 of /api/v1/rate, full history stored): median ${medianMs} ms of ${runsMs.join(', ')}; target ≤ ${targetMs} ms: **${verdict(pass)}**.`);
  }
  for (const row of run.rows.filter((r) => r.ratioToRate !== undefined)) {
    const judged = row.pass === undefined ? '' : `; target ${targetText(row.target)}: **${verdict(row.pass)}**${row.failedBecause?.length ? ` (${row.failedBecause.join('; ')})` : ''}`;
    lines.push(`- ${row.name}: ${row.ratioToRate} × rate on SQLite (their ratios to baseline+headers), ${row.redisCommandsPerRequest ?? '?'} Redis commands per request${judged}.`);
  }
  for (const row of run.rows.filter((r) => r.pass === false && r.ratioToRate === undefined)) lines.push(`- ${row.name} misses its target: ${row.failedBecause!.join('; ')}.`);
  if (setup.connections !== TARGET_CONNECTIONS) lines.push(`- The ratio and p99 targets hold at ${TARGET_CONNECTIONS} connections: not judged in this run.`);
  const noisy = run.rows.filter((r) => (r.otherCpuPct ?? 0) > NOISY_OTHER_CPU || (r.stealPct ?? 0) > NOISY_STEAL).map((r) => r.name);
  if (noisy.length) lines.push(`- \\*: other processes (over ${NOISY_OTHER_CPU} % of a core) or the host (steal over ${NOISY_STEAL} %) took CPU during ${noisy.join(', ')}: those rows are low and noisy.`);
  return `${lines.join('\n')}\n`;
}

/**
 * Where a run's file goes: bench/results/, or bench/results/deep-history/ for a service that kept
 * more years than the default (EXRATES_HISTORY_YEARS), which the standard tables do not compare.
 */
export function resultsDirOf(run: Pick<Run, 'setup'>): string {
  return run.setup.serviceEnv['EXRATES_HISTORY_YEARS'] === undefined ? RESULTS_DIR : DEEP_HISTORY_DIR;
}

/** Writes the run to bench/results/<UTC time>-<commit>.json (resultsDirOf); returns the file's path. */
export function writeRun(run: Run): string {
  return writeResults(resultsDirOf(run), run);
}

/** Writes a run to `dir`/<UTC time>-<commit>.json, a name that sorts by time (the docs take the newest); returns the file's path. */
export function writeResults(dir: string, run: { startedAt: string; commit: string }): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${run.startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${run.commit}.json`);
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
  return file;
}

/** The machine a run ran on, as its file records it. */
export function machineOf(): { cpus: number; cpu: string; memoryGb: number; platform: string } {
  return { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30), platform: `${process.platform} ${process.arch}` };
}

/** The commit a run measures and how many files in src/ differ from it. */
export function gitState(root: string): { commit: string; uncommittedSrcChanges: number } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  return { commit: git('rev-parse', '--short', 'HEAD'), uncommittedSrcChanges: git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length };
}
