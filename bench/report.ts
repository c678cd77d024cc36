/**
 * The report of a run: each row compared with the baseline measured beside it and held to its
 * target, printed as a Markdown table with the lines that judge memory and start-up, and written
 * as JSON to bench/results/<UTC time>-<commit>.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Measurement } from './load.js';
import { formatProfile, type ProfileSummary } from './profile.js';
import { ROOT } from './servers.js';
import { COLD_START_MS, PEAK_RSS_MB, SCENARIO_TARGETS, STORE_RATIO, TARGET_CONNECTIONS, missedBecause, storeRatio, targetText, type ScenarioTarget } from './targets.js';

/** CPU used by neither server nor load generator, in % of one core, above which a row is marked noisy (the kernel's loopback work alone stays under it). */
const NOISY_OTHER_CPU = 50;
/** CPU time the hypervisor gave to other machines, in % of one core, above which a row is marked noisy. */
const NOISY_STEAL = 10;
/**
 * How far the baseline's CPU time per request may move between a row's rounds (highest over
 * lowest) before the row is marked noisy. The baseline does the same work for every request, so
 * what moves it is the host's speed, which neither steal nor other CPU shows (another machine on
 * the same physical core, the clock).
 */
const NOISY_BASELINE_CPU = 1.25;

/** The highest over the lowest of the baseline's CPU time per request in a row's rounds, when they recorded it. */
export function baselineCpuSpread(row: Pick<Row, 'rounds'>): { low: number; high: number; ratio: number } | undefined {
  const cpu = (row.rounds ?? []).map((r) => r.baselineCpuPerRequestUs).filter((us): us is number => us !== undefined && us > 0);
  if (cpu.length < 2) return undefined;
  const low = Math.min(...cpu);
  const high = Math.max(...cpu);
  return { low, high, ratio: high / low };
}

/** The reference row: the baseline sending a rate answer's header lines as well (run.ts, instructions.ts). */
export const REFERENCE_ROW = 'baseline+headers';

export interface Row extends Measurement {
  name: string;
  description: string;
  /**
   * The service, the baseline, or a reference: another bare route (the baseline sending the
   * service's header lines too), compared with the baseline like a service row and never judged.
   */
  server: 'baseline' | 'reference' | 'service';
  /** EXRATES_WORKERS of the service, when more than one. */
  workers?: number;
  /** Rows of --compare-sqlite: the service on a temporary SQLite file without Redis. */
  sqlite?: true;
  /** Commands the service sent to Redis during the measured run, per response (its /metrics before and after). */
  redisCommandsPerRequest?: number;
  /** Rows written to PostgreSQL's quota table per second during the measured run (its statistics before and after). */
  postgresQuotaWritesPerSecond?: number;
  /** The service's full (mark-compact) collections during the measured run, and its collections' pauses in % of the run (its /metrics before and after). */
  fullCollections?: number;
  collectionPct?: number;
  /** p99 of the service's own time per API request during the measured run, from its latency histogram (its /metrics before and after). */
  inServiceP99Ms?: number;
  /**
   * With --compare-sqlite, on the row of the run's own store: its requests/s as a share of the
   * same scenario's on SQLite alone (storeRatio in targets.ts), held to STORE_RATIO.
   */
  vsSqlite?: { ratio: number; byRounds: boolean };
  /** The rounds of this row's server and the baseline measured in turn (run.ts). */
  rounds?: Round[];
  /** The baseline this row is compared with: the median of its rounds' (else the first baseline run). */
  baselineRequestsPerSecond?: number;
  baselineCpuPerRequestUs?: number;
  ratioToBaseline?: number;
  p99RatioToBaseline?: number;
  target?: ScenarioTarget;
  pass?: boolean;
  failedBecause?: string[];
}

/** One round: the service and the baseline, each measured for a few seconds, one after the other. */
export interface Round {
  requestsPerSecond: number;
  baselineRequestsPerSecond: number;
  cpuPerRequestUs?: number;
  baselineCpuPerRequestUs?: number;
}

export interface Run {
  startedAt: string;
  command: string;
  /** The Node.js version of the bench, the service and the baseline (all three run on process.execPath). */
  runtime: string;
  commit: string;
  /** Uncommitted changes in src/ when the run started (-1: unknown). */
  uncommittedSrcChanges: number;
  machine: { cpus: number; cpu: string; memoryGb: number; platform: string };
  setup: {
    connections: number;
    generator: string;
    /** Where the processes ran ('no': where the kernel put them). */
    pinned?: string;
    durationSeconds: number;
    warmupSeconds: number;
    /** Seconds of load after each server's start, before its first scenario (absent in runs made before it). */
    settleSeconds?: number;
    /** Rounds per row against the baseline, and each server's seconds in a round (absent in runs made before rounds). */
    rounds?: number;
    roundSeconds?: number;
    store: string;
    keys: number;
    currencies: number;
    serviceEnv: Record<string, string>;
    nodeFlags: readonly string[];
  };
  rows: Row[];
  peakRss?: { hwmMb: number; maxSampledMb?: number; afterRunsMb: number; targetMb: number; pass: boolean };
  coldStart?: { runsMs: number[]; medianMs: number; listeningRunsMs: number[]; listeningMedianMs: number; targetMs: number; pass: boolean };
  profile?: ProfileSummary;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Compares each service row with the baseline: its ratio is the median of its rounds' ratios (the
 * host's speed drifts over minutes: a round measures both servers within seconds), else that of
 * the first baseline run; and holds the rows with a target to it when the run used the targets'
 * connections.
 */
export function judge(rows: Row[], connections: number): void {
  const first = rows.find((row) => row.server === 'baseline');
  for (const row of rows) {
    if (row.server === 'baseline') continue;
    if (row.rounds && row.rounds.length > 0) {
      row.baselineRequestsPerSecond = Math.round(median(row.rounds.map((r) => r.baselineRequestsPerSecond)));
      row.ratioToBaseline = Math.round(median(row.rounds.map((r) => r.requestsPerSecond / r.baselineRequestsPerSecond)) * 1000) / 1000;
      const cpu = row.rounds.map((r) => r.baselineCpuPerRequestUs).filter((us) => us !== undefined);
      if (cpu.length > 0) row.baselineCpuPerRequestUs = Math.round(median(cpu) * 10) / 10;
    } else if (first) {
      row.baselineRequestsPerSecond = first.requestsPerSecond;
      row.ratioToBaseline = Math.round((row.requestsPerSecond / first.requestsPerSecond) * 1000) / 1000;
      if (first.cpuPerRequestUs !== undefined) row.baselineCpuPerRequestUs = first.cpuPerRequestUs;
    }
    if (first) row.p99RatioToBaseline = Math.round((row.latencyMs.p99 / first.latencyMs.p99) * 100) / 100;
  }
  // Once every row has its ratio: a target may compare one row with another.
  for (const sqlite of rows.filter((r) => r.sqlite)) {
    const store = rows.find((r) => r.name === sqlite.name.replace(/@sqlite$/, '') && !r.sqlite);
    if (store) store.vsSqlite = storeRatio(store, sqlite);
  }
  for (const row of rows) {
    if (row.server === 'baseline') continue;
    row.target = row.workers === undefined && !row.sqlite ? SCENARIO_TARGETS[row.name] : undefined;
    if (row.target && connections === TARGET_CONNECTIONS) {
      const versus = row.target.versus === undefined ? undefined : rows.find((r) => r.name === row.target!.versus && r.workers === undefined && !r.sqlite);
      row.failedBecause = missedBecause(row.target, row, versus);
      row.pass = row.failedBecause.length === 0;
    }
  }
}

function table(rows: string[][], align: string): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => [...r[c]!].length)));
  const pad = (text: string, c: number) => (align[c] === 'r' ? text.padStart(widths[c]!) : text.padEnd(widths[c]!));
  const rule = widths.map((w, c) => (align[c] === 'r' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)));
  return [rows[0]!, rule, ...rows.slice(1)].map((r, i) => `| ${(i === 1 ? r : r.map(pad)).join(' | ')} |`).join('\n');
}

export function resultsTable(rows: Row[]): string {
  const fixed = (value: number | undefined, digits: number) => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits));
  const pct = (value: number | undefined, noisyAbove?: number) => (value === undefined ? '–' : `${value}%${noisyAbove !== undefined && value > noisyAbove ? '*' : ''}`);
  const lines = [
    ['scenario', 'req/s', '× baseline', 'baseline req/s', 'CPU µs/req', 'baseline µs/req', 'p50 ms', 'p99 ms', 'p99.9 ms', 'srv p99 ms', 'errors', 'Redis cmd/req', 'PG writes/s', 'full GCs', 'GC %', 'srv CPU', 'gen CPU', 'other CPU', 'steal', 'B/resp', 'target', 'result'],
  ];
  for (const row of rows) {
    const baseline = row.server === 'baseline';
    lines.push([
      row.name,
      String(row.requestsPerSecond),
      baseline ? '1.000' : fixed(row.ratioToBaseline, 3),
      baseline ? '–' : String(row.baselineRequestsPerSecond ?? '–'),
      fixed(row.cpuPerRequestUs, 1),
      baseline ? '–' : fixed(row.baselineCpuPerRequestUs, 1),
      fixed(row.latencyMs.p50, 2),
      fixed(row.latencyMs.p99, 2),
      fixed(row.latencyMs.p999, 2),
      fixed(row.inServiceP99Ms, 2),
      String(row.errors),
      fixed(row.redisCommandsPerRequest, 3),
      fixed(row.postgresQuotaWritesPerSecond, 0),
      fixed(row.fullCollections, 0),
      fixed(row.collectionPct, 1),
      pct(row.serverCpuPct),
      pct(row.loadGeneratorCpuPct),
      pct(row.otherCpuPct, NOISY_OTHER_CPU),
      pct(row.stealPct, NOISY_STEAL),
      String(row.bytesPerResponse),
      targetText(row.target),
      row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL',
    ]);
  }
  return table(lines, `l${'r'.repeat(lines[0]!.length - 3)}ll`);
}

export function printRun(run: Run): void {
  const { setup } = run;
  const env = Object.entries(setup.serviceEnv).map(([name, value]) => `${name}=${value}`);
  console.log(
    `exrates bench ${run.startedAt} — node ${run.runtime}, git ${gitLabel(run)}, ` +
      `${run.machine.cpus} CPUs (${run.machine.cpu}), ${setup.connections} connections, load generator ${setup.generator}, pinned: ${setup.pinned ?? 'no'}, ` +
      `${setup.durationSeconds} s per scenario after ${setup.warmupSeconds} s warm-up${setup.settleSeconds ? ` (and ${setup.settleSeconds} s of load after each server's start)` : ''}, store ${setup.store}` +
      `${env.length ? `, env ${env.join(' ')}` : ''}${setup.nodeFlags.length ? `, node flags + ${setup.nodeFlags.join(' ')}` : ''}`,
  );
  console.log(`\n${resultsTable(run.rows)}\n`);
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  if (run.peakRss) {
    const { hwmMb, maxSampledMb, afterRunsMb, targetMb, pass } = run.peakRss;
    console.log(`service peak RSS (VmHWM, whole life incl. start): ${hwmMb} MB; highest sampled under load: ${maxSampledMb ?? '–'} MB; after the runs: ${afterRunsMb} MB — target ≤ ${targetMb} MB: ${verdict(pass)}`);
  }
  if (run.coldStart) {
    const { runsMs, medianMs, listeningMedianMs, targetMs, pass } = run.coldStart;
    console.log(
      `cold start (spawn → first 200 of /api/v1/rate, full history stored): median ${medianMs} ms of ${runsMs.join(', ')} ms ` +
        `(listening, first /healthz 200: median ${listeningMedianMs} ms) — target ≤ ${targetMs} ms: ${verdict(pass)}`,
    );
  }
  const compared = run.rows.filter((row) => row.rounds && row.rounds.length > 0);
  if (compared.length > 0) {
    const spread = (row: Row) => {
      const ratios = row.rounds!.map((r) => r.requestsPerSecond / r.baselineRequestsPerSecond);
      return `${row.name} ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`;
    };
    console.log(
      `× baseline: the median of ${setup.rounds ?? compared[0]!.rounds!.length} rounds per row, each the baseline and the service for ${setup.roundSeconds ?? '?'} s in turn; ` +
        `the rounds' ratios: ${compared.map(spread).join('; ')}`,
    );
  }
  for (const row of run.rows.filter((r) => r.workers !== undefined)) {
    const single = run.rows.find((one) => one.name === row.name.replace(/@\d+w$/, ''));
    if (!single) continue;
    console.log(
      `EXRATES_WORKERS=${row.workers} vs 1: ${single.name} ${row.requestsPerSecond} vs ${single.requestsPerSecond} req/s (×${(row.requestsPerSecond / single.requestsPerSecond).toFixed(2)}), ` +
        `p99 ${row.latencyMs.p99} vs ${single.latencyMs.p99} ms, CPU ${row.cpuPerRequestUs ?? '?'} vs ${single.cpuPerRequestUs ?? '?'} µs/req (the load generator shares the machine's cores)`,
    );
  }
  for (const row of run.rows.filter((r) => r.sqlite)) {
    const other = run.rows.find((one) => one.name === row.name.replace(/@sqlite$/, '') && !one.sqlite);
    if (other?.vsSqlite === undefined) continue;
    const { ratio, byRounds } = other.vsSqlite;
    const how = byRounds ? `× baseline ${other.ratioToBaseline} vs ${row.ratioToBaseline}` : `${other.requestsPerSecond} vs ${row.requestsPerSecond} req/s`;
    console.log(
      `${run.setup.store} vs SQLite alone: ${other.name} ×${ratio} (${how}; target ≥ ${STORE_RATIO} × at ${TARGET_CONNECTIONS} connections: ` +
        `${ratio >= STORE_RATIO ? 'PASS' : 'FAIL'}); measured runs ${other.requestsPerSecond} vs ${row.requestsPerSecond} req/s, p99 ${other.latencyMs.p99} vs ${row.latencyMs.p99} ms, ` +
        `CPU ${other.cpuPerRequestUs ?? '?'} vs ${row.cpuPerRequestUs ?? '?'} µs/req, Redis ${other.redisCommandsPerRequest ?? '–'} commands/req`,
    );
  }
  for (const row of run.rows.filter((r) => r.pass === false)) console.log(`  ${row.name}: ${row.failedBecause!.join('; ')}`);
  if (setup.connections !== TARGET_CONNECTIONS) console.log(`note: the ratio and p99 targets hold at ${TARGET_CONNECTIONS} connections; not judged in this run.`);
  const noisy = (pick: (row: Row) => number | undefined, above: number) => run.rows.filter((row) => (pick(row) ?? 0) > above).map((row) => row.name);
  const busy = noisy((row) => row.otherCpuPct, NOISY_OTHER_CPU);
  if (busy.length) console.log(`note: * other processes used more than ${NOISY_OTHER_CPU}% of a core during ${busy.join(', ')}: those rows are low and noisy.`);
  const stolen = noisy((row) => row.stealPct, NOISY_STEAL);
  if (stolen.length) console.log(`note: * the host took more than ${NOISY_STEAL}% of a core from this machine (steal) during ${stolen.join(', ')}: those rows are low and noisy.`);
  const drifted = run.rows.flatMap((row) => {
    const spread = baselineCpuSpread(row);
    return spread && spread.ratio > NOISY_BASELINE_CPU ? [`${row.name} ${spread.low}–${spread.high}`] : [];
  });
  if (drifted.length) {
    console.log(
      `note: the host's speed moved during these rows' rounds (the baseline's CPU µs per request, the same work each time, moved by more than ${Math.round((NOISY_BASELINE_CPU - 1) * 100)} %: ${drifted.join('; ')}): their ratios carry that noise.`,
    );
  }
  const generatorMax = Math.max(...run.rows.map((row) => row.loadGeneratorCpuPct));
  if (generatorMax >= 90) console.log(`note: the load generator reached ${generatorMax}% of one core: rows near that are limited by it, not only by the server.`);
  if (run.profile) console.log(`\n${formatProfile(run.profile)}`);
}

/** Peak RSS and cold start, held to their targets. */
export function judgeRun(peak: { hwmMb: number; maxSampledMb?: number; afterRunsMb: number } | undefined, coldStarts: Array<{ totalMs: number; listeningMs: number }>): Pick<Run, 'peakRss' | 'coldStart'> {
  const runsMs = coldStarts.map((c) => Math.round(c.totalMs));
  const listeningRunsMs = coldStarts.map((c) => Math.round(c.listeningMs));
  return {
    peakRss: peak && { ...peak, targetMb: PEAK_RSS_MB, pass: peak.hwmMb <= PEAK_RSS_MB },
    coldStart:
      coldStarts.length > 0
        ? { runsMs, medianMs: median(runsMs), listeningRunsMs, listeningMedianMs: median(listeningRunsMs), targetMs: COLD_START_MS, pass: median(runsMs) <= COLD_START_MS }
        : undefined,
  };
}

/** Writes the run to bench/results/<UTC time>-<commit>.json; returns the file's path. */
export function writeRun(dir: string, run: Run): string {
  return writeResult(dir, '', run.startedAt, run.commit, run);
}

/** Where runs are kept. */
export const RESULTS_DIR = join(ROOT, 'bench', 'results');

/** Writes a result as `<prefix><UTC time>-<commit>.json` in `dir`; returns its path. */
export function writeResult(dir: string, prefix: string, startedAt: string, commit: string, value: unknown): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${prefix}${startedAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${commit}.json`);
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

/** The commit, and whether src/ differed from it: a measurement of a changed tree is not the commit's. */
export function gitLabel(git: { commit: string; uncommittedSrcChanges: number }): string {
  return git.uncommittedSrcChanges > 0 ? `${git.commit} + ${git.uncommittedSrcChanges} uncommitted change(s) in src/` : git.commit;
}

/** The commit a run measures (`label` when given, for a tree without .git) and how many files in src/ differ from it. */
export function gitState(label: string | undefined): { commit: string; uncommittedSrcChanges: number } {
  if (label) return { commit: label, uncommittedSrcChanges: 0 };
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
    return { commit, uncommittedSrcChanges: dirty.split('\n').filter((line) => line.trim()).length };
  } catch {
    return { commit: 'unknown', uncommittedSrcChanges: -1 };
  }
}
