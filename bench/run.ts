/**
 * `npm run bench`: measures the service against a bare Fastify baseline in one run.
 *
 * 1. Prepares a fresh SQLite store in a temporary folder: 1,000 free keys (issued with the
 *    project's own functions, not 1,000 CLI runs), then the full shared ECB history, loaded by
 *    the real server (`serve` until /readyz is 200, then stopped).
 * 2. Baseline: bench/baseline.ts in its own process, answering a real rate response's body.
 * 3. Cold start: spawn of `node dist/cli/main.js serve` → first 200 of /api/v1/rate, 3 times, median.
 * 4. Load: the service in its own process; per scenario a warm-up, then a measured run with
 *    autocannon (same connections and duration for all), keys and pairs rotating per request.
 * 5. Prints a table (requests/s, latency percentiles, errors, ratio to the baseline, targets),
 *    the server's peak RSS and the cold start, and writes the same as JSON to bench/results/.
 *
 * Flags: --duration S (BENCH_DURATION, 10), --warmup S (BENCH_WARMUP, 3), --connections N
 * (BENCH_CONNECTIONS, 50), --only a,b (scenario names; the baseline always runs when a ratio is
 * needed), --cpu-prof (profile the load server with node --cpu-prof and summarise the profile),
 * --database-url URL (BENCH_DATABASE_URL: e.g. a PostgreSQL database to use instead of a temporary
 * SQLite file; it must be one you can write to), --redis-url URL (passed as EXRATES_REDIS_URL, with
 * a key prefix of the run's own, its keys deleted at the end),
 * --env NAME=VALUE (extra service environment, repeatable, for experiments), --node-flag=FLAG
 * (extra node flag for the service, repeatable), --service-log FILE (the service's output appended
 * to FILE), --no-cold-start,
 * --workers N (BENCH_WORKERS, 2: rate, convert and mixed again with EXRATES_WORKERS=N; 1 skips
 * that), --keep (leave the temporary folder), --list.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, freemem, totalmem, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type AutocannonClient, type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { loadConfig } from '../src/config.js';
import { issueApiKey } from '../src/core/api-keys.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log.js';
import { serviceNodeFlags } from '../scripts/node-flags.js';
import { formatProfile, summariseProfile, type ProfileSummary } from './profile.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH_DIR = join(ROOT, 'bench');
const RESULTS_DIR = join(BENCH_DIR, 'results');
const DEFAULT_CSV = fileURLToPath(new URL('../../shared/data/ecb/eurofxref-hist.csv', import.meta.url));
const FIXED_NOW = '2026-03-06T12:00:00Z';
const KEY_COUNT = 1000;
/** Requests each connection cycles through; 50 connections × 200 cover every key and pair several times. */
const REQUESTS_PER_CLIENT = 200;
const COLD_STARTS = 3;
const POLL_MS = 10;
/**
 * CPU used by neither server nor load generator, in % of one core, above which a scenario is
 * marked as measured on a busy machine. A quiet run of this machine shows 0–40 % here (the
 * kernel's loopback work); more means other processes competed for the 2 cores.
 */
const NOISY_OTHER_CPU = 50;
/** CPU time the hypervisor gave to other machines, in % of one core, above which a row is marked noisy. */
const NOISY_STEAL = 10;

// ---------------------------------------------------------------- options

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    'redis-url': { type: 'string' },
    'no-cold-start': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    workers: { type: 'string' },
    generator: { type: 'string' },
    list: { type: 'boolean', default: false },
    csv: { type: 'string' },
    env: { type: 'string', multiple: true },
    'node-flag': { type: 'string', multiple: true },
    'service-log': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  allowPositionals: false,
});

function chooseGenerator(wanted: string | undefined): 'wrk' | 'autocannon' {
  let wrk = false;
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    wrk = true;
  } catch (error) {
    // wrk --version exits 1 after printing its version: installed all the same.
    wrk = (error as { status?: number }).status === 1;
  }
  if (wanted === undefined || wanted === '') return wrk ? 'wrk' : 'autocannon';
  if (wanted !== 'wrk' && wanted !== 'autocannon') throw new Error(`--generator must be wrk or autocannon, got '${wanted}'`);
  if (wanted === 'wrk' && !wrk) throw new Error('--generator wrk: wrk is not installed (apt-get install wrk)');
  return wanted;
}

function positiveNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${text}'`);
  return value;
}

const options = {
  duration: positiveNumber('--duration', flags.duration ?? process.env.BENCH_DURATION, 10),
  warmup: positiveNumber('--warmup', flags.warmup ?? process.env.BENCH_WARMUP, 3),
  connections: Math.round(positiveNumber('--connections', flags.connections ?? process.env.BENCH_CONNECTIONS, 50)),
  cpuProf: flags['cpu-prof'] ?? false,
  databaseUrl: flags['database-url'] ?? process.env.BENCH_DATABASE_URL,
  redisUrl: flags['redis-url'] ?? process.env.BENCH_REDIS_URL,
  coldStart: !(flags['no-cold-start'] ?? false),
  keep: flags.keep ?? false,
  workers: Math.round(positiveNumber('--workers', flags.workers ?? process.env.BENCH_WORKERS, 2)),
  /** wrk (C, much cheaper per request) when installed, else autocannon in this process. */
  generator: chooseGenerator(flags.generator ?? process.env.BENCH_GENERATOR),
  csv: flags.csv ?? process.env.BENCH_ECB_CSV ?? DEFAULT_CSV,
  /** Extra service environment, for experiments: --env EXRATES_KEY_CACHE_MS=60000 (repeatable). */
  serviceEnv: Object.fromEntries(
    (flags.env ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`--env takes NAME=VALUE, got '${pair}'`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  ) as Record<string, string>,
  /** Extra node flags for the service, after those of `npm start`: --node-flag=--trace-gc (repeatable). */
  nodeFlags: flags['node-flag'] ?? [],
  /** A file the service's output is appended to (with --node-flag=--trace-gc, say). */
  serviceLog: flags['service-log'],
};

// ---------------------------------------------------------------- scenarios

type Kind = 'rate' | 'convert' | 'history';

interface Target {
  /** Minimum requests/s as a share of the baseline's. */
  minRatio?: number;
  /** Maximum p99 latency in ms. */
  maxP99Ms?: number;
}

interface Scenario {
  name: string;
  description: string;
  /** Builds the n-th request of the rotation. */
  request(n: number): AutocannonRequest;
  target?: Target;
  baseline?: boolean;
  /** Run by default (others only with --only). */
  standard: boolean;
}

const AMOUNTS = ['100', '99.95', '1250000', '0.5', '7340.12'];

// ---------------------------------------------------------------- helpers: processes

const children = new Set<ChildProcess>();

function killAll(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(child.pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

/** Clean-ups to run when the bench is interrupted (the temporary folder, a PostgreSQL schema, Redis keys). */
const onInterrupt: Array<() => void | Promise<void>> = [];

process.on('exit', () => killAll('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`\nbench: ${signal}: stopping every server it started`);
    killAll('SIGKILL');
    const cleanups = Promise.allSettled(onInterrupt.map(async (cleanup) => cleanup()));
    const timeout = new Promise((resolve) => setTimeout(resolve, 3_000).unref());
    void Promise.race([cleanups, timeout]).finally(() => process.exit(130));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM (graceful: the service drains and, under --cpu-prof, writes its profile), SIGKILL after a grace period. */
async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited(child);
    clearTimeout(timer);
  }
  children.delete(child);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Keeps the last lines of a child's output, to show when it fails. */
function tail(child: ChildProcess, label: string): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(line);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => (lines.length ? `${label} output:\n  ${lines.join('\n  ')}` : `${label}: no output`);
}

// ---------------------------------------------------------------- helpers: /proc

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep 100
}

function procStatus(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Machine-wide CPU time from /proc/stat, in jiffies over every CPU: busy (processes and kernel),
 * steal (time a virtual machine's CPUs waited while the host ran something else) and total.
 */
function machineCpu(): { busy: number; steal: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const steal = v[7] ?? 0;
    return { busy: total - idle - steal, steal, total };
  } catch {
    return undefined;
  }
}

async function machineBusyFor(ms: number): Promise<number | undefined> {
  const before = machineCpu();
  await sleep(ms);
  const after = machineCpu();
  if (!before || !after || after.total <= before.total) return undefined;
  return Math.round(((after.busy - before.busy) / (after.total - before.total)) * 100);
}

/** CPU seconds (user + system) a process has used. */
function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / clockTicks;
  } catch {
    return undefined;
  }
}

/** A process and its children (the workers of EXRATES_WORKERS > 1), from /proc. */
function processTree(pid: number): number[] {
  const tree = [pid];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) tree.push(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return tree;
}

/** CPU seconds used by a process and its children, counted per process (children that exit are not). */
function treeCpuSeconds(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const seconds = procCpuSeconds(pid);
    if (seconds === undefined) return undefined;
    sum += seconds;
  }
  return sum;
}

// ---------------------------------------------------------------- preparation

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function ensureBuilt(): void {
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  let built = 0;
  try {
    built = statSync(main).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime(join(ROOT, 'src'))) return;
  console.log('bench: dist/ is older than src/: npm run build');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}

/** The currencies the ECB publishes on the newest day of the file (EUR included): the pairs rotate over these. */
function currentCurrencies(csvPath: string): string[] {
  const text = readFileSync(csvPath, 'utf8');
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  const header = lines[0]!.split(',').map((s) => s.trim());
  const newest = lines[1]!.split(',').map((s) => s.trim());
  const codes = header.slice(1).filter((code, i) => code && newest[i + 1] && newest[i + 1] !== 'N/A');
  return ['EUR', ...codes];
}

function gitState(): { commit: string; dirtySrc: number } {
  // A copy of the tree without .git (git archive) names its commit here.
  if (process.env.BENCH_GIT_LABEL) return { commit: process.env.BENCH_GIT_LABEL, dirtySrc: 0 };
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
    return { commit, dirtySrc: dirty.split('\n').filter((l) => l.trim()).length };
  } catch {
    return { commit: 'unknown', dirtySrc: -1 };
  }
}

/**
 * A PostgreSQL database is shared: the bench works in a schema of its own, created now and
 * dropped at the end, through the connection's search_path.
 */
async function postgresSchema(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const schema = `exrates_bench_${Date.now()}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create schema "${schema}"`);
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return { url: scoped.toString(), drop: () => run(`drop schema if exists "${schema}" cascade`) };
}

/**
 * A Redis is shared too, and the service's start and refresh locks outlive a run (one per
 * refresh tick of the bench's fixed clock, held for a day): the bench gives the service a key
 * prefix of its own and deletes its keys at the end. A second run on the same prefix would find
 * the start's lock taken and wait for ever for a load that never comes.
 */
async function redisNamespace(url: string): Promise<{ prefix: string; drop(): Promise<void> }> {
  const prefix = `exrates-bench-${Date.now()}:`;
  return {
    prefix,
    async drop() {
      const { Redis } = await import('ioredis');
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
      try {
        await redis.connect();
        for (let cursor = '0'; ; ) {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.unlink(...keys);
          if (next === '0') break;
          cursor = next;
        }
      } finally {
        redis.disconnect();
      }
    },
  };
}

interface ServiceEnv {
  dir: string;
  databaseUrl: string;
  env: Record<string, string>;
}

function serviceEnvironment(dir: string, postgresUrl: string | undefined, redisPrefix: string | undefined): ServiceEnv {
  const databaseUrl = postgresUrl ?? options.databaseUrl ?? `sqlite:${join(dir, 'bench.db')}`;
  const env: Record<string, string> = {
    EXRATES_DATABASE_URL: databaseUrl,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: options.csv,
    EXRATES_NOW: FIXED_NOW,
    EXRATES_LOG_LEVEL: 'warn',
    EXRATES_QUOTA_FREE: '100000000',
    EXRATES_QUOTA_PRO: '100000000',
    // One refresh at start only: a scheduled refresh (on wall-clock multiples of 10 minutes)
    // re-reads the 1.8 MB file and would land in the middle of some measurement.
    EXRATES_REFRESH_SECONDS: '86400',
    EXRATES_CONTACT_EMAIL: 'bench@example.org',
    HOST: '127.0.0.1',
  };
  if (options.redisUrl) env.EXRATES_REDIS_URL = options.redisUrl;
  if (redisPrefix) env.EXRATES_REDIS_PREFIX = redisPrefix;
  Object.assign(env, options.serviceEnv);
  return { dir, databaseUrl, env };
}

/** Issues the keys with the project's own functions, on the store the server will use. */
async function issueKeys(service: ServiceEnv, count: number): Promise<string[]> {
  const config = loadConfig({ ...service.env, EXRATES_LOG_LEVEL: 'silent', PORT: '0' });
  const deps = await createDeps(config, { log: createLogger('silent') });
  try {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await issueApiKey(deps.keys, { tier: 'free', owner: `bench${i}@example.org` }, deps.clock)).key);
    return keys;
  } finally {
    await deps.close();
  }
}

interface RunningService {
  child: ChildProcess;
  port: number;
  output: () => string;
}

async function spawnService(service: ServiceEnv, port: number, nodeArgs: string[] = [], extraEnv: Record<string, string> = {}): Promise<RunningService> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('EXRATES_')) env[name] = value;
  Object.assign(env, service.env, extraEnv, { PORT: String(port) });
  // Run from the temporary folder, so that no .env of the working tree changes the configuration.
  // Started as `npm start` starts it: with the same node flags.
  const child = spawn(process.execPath, [...serviceNodeFlags(ROOT), ...options.nodeFlags, ...nodeArgs, join(ROOT, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: service.dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  if (options.serviceLog) {
    // Both streams into one file, closed once the child's output has all been read.
    const log = createWriteStream(options.serviceLog, { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('close', () => log.end());
  }
  const output = tail(child, 'service');
  child.once('exit', () => children.delete(child));
  return { child, port, output };
}

/** Polls a URL every POLL_MS until it answers 200; returns the time it took and the body. */
async function waitFor200(url: string, headers: Record<string, string>, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before answering ${url}\n${output()}`);
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      const body = await response.text();
      if (response.status === 200) return { ms: performance.now() - started, body };
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`no 200 from ${url} within ${timeoutMs} ms\n${output()}`);
    await sleep(POLL_MS);
  }
}

/**
 * Spawn → first 200 of /api/v1/rate, measured from just before the spawn; also when /healthz
 * first answered (the process is up and listening), to tell start-up from loading the rates.
 */
async function coldStart(service: ServiceEnv, key: string): Promise<{ totalMs: number; listeningMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const running = await spawnService(service, port);
  try {
    await waitFor200(`http://127.0.0.1:${port}/healthz`, {}, running.child, running.output);
    const listeningMs = performance.now() - started;
    await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': key }, running.child, running.output);
    return { totalMs: performance.now() - started, listeningMs };
  } finally {
    await stopChild(running.child);
  }
}

// ---------------------------------------------------------------- load

interface Measured {
  name: string;
  description: string;
  server: 'baseline' | 'service';
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  responses: number;
  errors: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  bytesPerResponse: number;
  serverCpuPct: number | undefined;
  loadGeneratorCpuPct: number;
  serverRssMaxMb: number | undefined;
  /** EXRATES_WORKERS of the service, when more than one. */
  workers?: number;
  /** Share of all CPUs busy (any process, kernel included) during the measured run. */
  machineBusyPct: number | undefined;
  /** CPU used by neither the server nor the load generator (other processes, kernel), in % of one core. */
  otherCpuPct: number | undefined;
  /** CPU time the host gave to other virtual machines, in % of one core (see NOISY_STEAL). */
  stealPct: number | undefined;
  /** Index into the baseline runs made between scenarios: the one just before this scenario. */
  adjacentBaseline?: number;
  /** The baseline requests/s this scenario is compared with (see referenceFor). */
  baselineRequestsPerSecond?: number;
  ratioToBaseline?: number;
  p99RatioToBaseline?: number;
  target?: Target;
  pass?: boolean;
  failedBecause?: string[];
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Gives each connection its own slice of the rotation, so that keys and pairs spread over all connections. */
function requestLists(scenario: Scenario, connections: number): () => (client: AutocannonClient) => void {
  return () => {
    let next = 0;
    return (client: AutocannonClient) => {
      const index = next++ % connections;
      const list: AutocannonRequest[] = [];
      for (let j = 0; j < REQUESTS_PER_CLIENT; j++) list.push(scenario.request(index * REQUESTS_PER_CLIENT + j));
      client.setRequests(list);
    };
  };
}

/** Distinct requests a wrk run cycles through (keys and pairs rotate as with autocannon). */
const WRK_REQUESTS = 4000;

/** One wrk run: a Lua script cycles through the scenario's prebuilt requests and prints its summary as JSON. */
async function runWrk(scenario: Scenario, port: number, seconds: number): Promise<{
  requests: number;
  durationUs: number;
  bytes: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  cpuSeconds: number;
}> {
  const lua = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  const entries: string[] = [];
  for (let n = 0; n < WRK_REQUESTS; n++) {
    const r = scenario.request(n);
    const headers = Object.entries(r.headers ?? {}).map(([k, v]) => `[${lua(k)}]=${lua(String(v))}`).join(',');
    entries.push(`{${lua(r.path ?? '/')},{${headers}}}`);
  }
  const script = [
    `local list = {${entries.join(',\n')}}`,
    'local prepared = {}',
    'local counter = 0',
    'init = function(args) for i, r in ipairs(list) do prepared[i] = wrk.format("GET", r[1], r[2]) end end',
    'request = function() counter = counter + 1; return prepared[(counter % #prepared) + 1] end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"durationUs\\":%d,\\"bytes\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"status\\":%d,\\"timeout\\":%d,\\"p50\\":%d,\\"p90\\":%d,\\"p99\\":%d,\\"p999\\":%d,\\"max\\":%d,\\"mean\\":%f,\\"cpuSeconds\\":%f}\\n",',
    '    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean, os.clock()))',
    'end',
  ].join('\n');
  const file = join(tmpdir(), `exrates-bench-${process.pid}-${scenario.name.replace(/[^a-z0-9-]/gi, '_')}.lua`);
  writeFileSync(file, script);
  try {
    const child = spawn('wrk', ['-t1', `-c${options.connections}`, `-d${Math.max(1, Math.round(seconds))}s`, '--timeout', '10s', '-s', file, `http://127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    children.delete(child);
    const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out.slice(-2000)}`);
    return JSON.parse(line.slice('WRKJSON '.length));
  } finally {
    rmSync(file, { force: true });
  }
}

/** Server-side figures of a measured run: CPU and memory of the server and its workers, and the machine's load. */
type ServerFigures = Pick<Measured, 'serverCpuPct' | 'loadGeneratorCpuPct' | 'serverRssMaxMb' | 'machineBusyPct' | 'otherCpuPct' | 'stealPct'>;

/**
 * Watches the server (and its workers, if any: CPU and memory are summed over them) from now on;
 * stop() ends the window, figures() gives what it saw, given the load generator's own CPU.
 */
function watchServer(pid: number | undefined, sampleRss: boolean): { stop(): void; wallSeconds(): number; figures(loadGeneratorCpuPct: number): ServerFigures } {
  let maxRssKb = 0;
  const pids = pid !== undefined ? processTree(pid) : [];
  const cpuBefore = pid !== undefined ? treeCpuSeconds(pids) : undefined;
  const machineBefore = machineCpu();
  const rssTimer = sampleRss && pid !== undefined
    ? setInterval(() => {
        let rssKb = 0;
        for (const p of pids) rssKb += procStatus(p)?.rssKb ?? 0;
        if (rssKb > maxRssKb) maxRssKb = rssKb;
      }, 250)
    : undefined;
  const wallStart = performance.now();
  let wallEnd: number | undefined;
  const wallSeconds = () => ((wallEnd ?? performance.now()) - wallStart) / 1000;
  return {
    stop() {
      wallEnd ??= performance.now();
      if (rssTimer) clearInterval(rssTimer);
    },
    wallSeconds,
    figures(loadGeneratorCpuPct) {
      const cpuAfter = pid !== undefined ? treeCpuSeconds(pids) : undefined;
      const machineAfter = machineCpu();
      const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
      const serverCpuPct = cpuBefore !== undefined && cpuAfter !== undefined ? round(((cpuAfter - cpuBefore) / wallSeconds()) * 100, 0) : undefined;
      const machineBusyPct =
        machineBefore && machineAfter && machineAfter.total > machineBefore.total
          ? round(((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100, 0)
          : undefined;
      return {
        serverCpuPct,
        loadGeneratorCpuPct,
        serverRssMaxMb: maxRssKb ? round(maxRssKb / 1024, 1) : undefined,
        machineBusyPct,
        stealPct:
          machineBefore && machineAfter && machineAfter.total > machineBefore.total
            ? round(((machineAfter.steal - machineBefore.steal) / (machineAfter.total - machineBefore.total)) * 100 * cpus().length, 0)
            : undefined,
        otherCpuPct:
          machineBusyPct !== undefined && serverCpuPct !== undefined ? Math.max(0, round(machineBusyPct * cpus().length - serverCpuPct - loadGeneratorCpuPct, 0)) : undefined,
      };
    },
  };
}

async function load(scenario: Scenario, port: number, pid: number | undefined, seconds: number, record: boolean): Promise<Measured | undefined> {
  if (options.generator === 'wrk') return loadWrk(scenario, port, pid, seconds, record);
  const latencies: number[] = [];
  let bytes = 0;
  let responses = 0;
  const ownBefore = process.cpuUsage();
  const setup = requestLists(scenario, options.connections)();
  const watch = watchServer(pid, record);
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: options.connections,
        duration: seconds,
        pipelining: 1,
        timeout: 10,
        requests: [scenario.request(0)],
        setupClient: setup,
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    if (record) {
      instance.on('response', (_client, statusCode, resBytes, responseTime) => {
        responses++;
        bytes += resBytes;
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      });
    }
  });
  watch.stop();
  if (!record) return undefined;
  const own = process.cpuUsage(ownBefore);
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;
  const mean = latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : NaN;
  const loadGeneratorCpuPct = round(((own.user + own.system) / 1e6 / watch.wallSeconds()) * 100, 0);
  return {
    name: scenario.name,
    description: scenario.description,
    server: scenario.baseline ? 'baseline' : 'service',
    requestsPerSecond: round(responses / result.duration, 0),
    latencyMs: {
      p50: round(percentile(sorted, 50)),
      p90: round(percentile(sorted, 90)),
      p99: round(percentile(sorted, 99)),
      p999: round(percentile(sorted, 99.9)),
      max: round(sorted.length ? sorted[sorted.length - 1]! : NaN),
      mean: round(mean),
    },
    responses,
    errors: result.non2xx + result.errors,
    non2xx: result.non2xx,
    socketErrors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    bytesPerResponse: responses ? Math.round(bytes / responses) : 0,
    ...watch.figures(loadGeneratorCpuPct),
  };
}

/** The same measurement as load(), with wrk as the load generator (in its own process, one thread). */
async function loadWrk(scenario: Scenario, port: number, pid: number | undefined, seconds: number, record: boolean): Promise<Measured | undefined> {
  const watch = watchServer(pid, record);
  let result: Awaited<ReturnType<typeof runWrk>>;
  try {
    result = await runWrk(scenario, port, seconds);
  } finally {
    watch.stop();
  }
  if (!record) return undefined;
  const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;
  const ms = (us: number) => round(us / 1000);
  const runSeconds = result.durationUs / 1e6;
  const loadGeneratorCpuPct = round((result.cpuSeconds / runSeconds) * 100, 0);
  const socketErrors = result.connect + result.read + result.write;
  return {
    name: scenario.name,
    description: scenario.description,
    server: scenario.baseline ? 'baseline' : 'service',
    requestsPerSecond: round(result.requests / runSeconds, 0),
    // wrk's latencies cover every response (there are no errors in a passing run).
    latencyMs: { p50: ms(result.p50), p90: ms(result.p90), p99: ms(result.p99), p999: ms(result.p999), max: ms(result.max), mean: ms(result.mean) },
    responses: result.requests,
    errors: result.status + socketErrors + result.timeout,
    non2xx: result.status,
    socketErrors,
    timeouts: result.timeout,
    // wrk counts only responses with a status of 400 or more.
    statusCodes: { '<400': result.requests - result.status, '>=400': result.status },
    bytesPerResponse: result.requests ? Math.round(result.bytes / result.requests) : 0,
    ...watch.figures(loadGeneratorCpuPct),
  };
}

// ---------------------------------------------------------------- report

/**
 * What a scenario is compared with: the mean of the baseline measured just before it and just
 * after it (the host's speed drifts over minutes), else the baseline measured first.
 */
function referenceFor(m: Measured, first: Measured | undefined, adjacent: Measured[]): { requestsPerSecond: number; p99: number } | undefined {
  if (m.server === 'baseline') return undefined;
  const before = m.adjacentBaseline !== undefined ? adjacent[m.adjacentBaseline] : undefined;
  const after = m.adjacentBaseline !== undefined ? adjacent[m.adjacentBaseline + 1] : undefined;
  const around = [before, after].filter((b) => b !== undefined);
  if (around.length === 0) return first && { requestsPerSecond: first.requestsPerSecond, p99: first.latencyMs.p99 };
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return { requestsPerSecond: Math.round(mean(around.map((b) => b.requestsPerSecond))), p99: mean(around.map((b) => b.latencyMs.p99)) };
}

function judge(m: Measured, reference: { requestsPerSecond: number; p99: number } | undefined): void {
  if (reference) {
    m.baselineRequestsPerSecond = reference.requestsPerSecond;
    m.ratioToBaseline = Math.round((m.requestsPerSecond / reference.requestsPerSecond) * 1000) / 1000;
    m.p99RatioToBaseline = Math.round((m.latencyMs.p99 / reference.p99) * 100) / 100;
  }
  if (!m.target) return;
  const reasons: string[] = [];
  if (m.errors > 0) reasons.push(`${m.errors} errors`);
  if (m.target.minRatio !== undefined) {
    if (m.ratioToBaseline === undefined) reasons.push('no baseline in this run');
    else if (m.ratioToBaseline < m.target.minRatio) reasons.push(`ratio ${m.ratioToBaseline} < ${m.target.minRatio}`);
  }
  if (m.target.maxP99Ms !== undefined && !(m.latencyMs.p99 <= m.target.maxP99Ms)) reasons.push(`p99 ${m.latencyMs.p99} ms > ${m.target.maxP99Ms} ms`);
  m.pass = reasons.length === 0;
  m.failedBecause = reasons;
}

function targetText(t: Target | undefined): string {
  if (!t) return '–';
  const parts: string[] = [];
  if (t.minRatio !== undefined) parts.push(`≥${t.minRatio.toFixed(2)}×`);
  if (t.maxP99Ms !== undefined) parts.push(`p99≤${t.maxP99Ms}ms`);
  return parts.join(', ');
}

function table(rows: string[][], align: Array<'l' | 'r'>): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length)));
  const pad = (text: string, c: number) => (align[c] === 'r' ? text.padStart(widths[c]!) : text.padEnd(widths[c]!));
  const lines = rows.map((r) => `| ${r.map((cell, c) => pad(cell, c)).join(' | ')} |`);
  const rule = `| ${widths.map((w, c) => (align[c] === 'r' ? `${'-'.repeat(Math.max(1, w - 1))}:` : '-'.repeat(w))).join(' | ')} |`;
  return [lines[0], rule, ...lines.slice(1)].join('\n');
}

function resultsTable(measured: Measured[]): string {
  const fmt = (v: number | undefined, digits = 2) => (v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits));
  const rows = [['scenario', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'errors', 'baseline req/s', '× baseline', 'srv CPU', 'gen CPU', 'other CPU', 'steal', 'B/resp', 'target', 'result']];
  for (const m of measured) {
    rows.push([
      m.name,
      String(m.requestsPerSecond),
      fmt(m.latencyMs.p50),
      fmt(m.latencyMs.p99),
      fmt(m.latencyMs.p999),
      String(m.errors),
      m.server === 'baseline' ? '–' : m.baselineRequestsPerSecond === undefined ? '–' : String(m.baselineRequestsPerSecond),
      m.server === 'baseline' ? '1.000' : fmt(m.ratioToBaseline, 3),
      m.serverCpuPct === undefined ? '–' : `${m.serverCpuPct}%`,
      `${m.loadGeneratorCpuPct}%`,
      m.otherCpuPct === undefined ? '–' : `${m.otherCpuPct}%${m.otherCpuPct > NOISY_OTHER_CPU ? '*' : ''}`,
      m.stealPct === undefined ? '–' : `${m.stealPct}%${m.stealPct > NOISY_STEAL ? '*' : ''}`,
      String(m.bytesPerResponse),
      targetText(m.target),
      m.pass === undefined ? '' : m.pass ? 'PASS' : 'FAIL',
    ]);
  }
  return table(rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l']);
}

// ---------------------------------------------------------------- main

/** Scenarios measured again with EXRATES_WORKERS > 1. */
const WORKER_SCENARIOS = ['rate', 'convert', 'mixed'];

async function main(): Promise<void> {
  const startedAt = new Date();
  const currencies = currentCurrencies(options.csv);
  const pairs: Array<[string, string]> = [];
  for (const a of currencies) for (const b of currencies) if (a !== b) pairs.push([a, b]);
  // Spread pairs over the rotation with a stride co-prime to their count, so neighbours differ in both currencies.
  const pairAt = (n: number) => pairs[(n * 37) % pairs.length]!;
  let keys: string[] = [];
  const keyAt = (n: number) => keys[n % keys.length]!;

  const keyed = (n: number, path: string, extra: Record<string, string> = {}): AutocannonRequest => ({
    method: 'GET',
    path,
    headers: { 'x-api-key': keyAt(n), ...extra },
  });
  const rateRequest = (n: number) => {
    const [from, to] = pairAt(n);
    return keyed(n, `/api/v1/rate?from=${from}&to=${to}`);
  };
  const convertRequest = (n: number) => {
    const [from, to] = pairAt(n);
    return keyed(n, `/api/v1/convert?from=${from}&to=${to}&amount=${AMOUNTS[n % AMOUNTS.length]!}`);
  };
  const historyRequest = (range: '1y' | '5y', format: 'json' | 'csv', gzip: boolean) => (n: number) => {
    const [from, to] = pairAt(n);
    return keyed(n, `/api/v1/history?from=${from}&to=${to}&range=${range}${format === 'csv' ? '&format=csv' : ''}`, gzip ? { 'accept-encoding': 'gzip' } : {});
  };
  // 70 % rate, 20 % convert, 10 % history (1y JSON), interleaved in a fixed shuffled order of 10.
  const MIX: Kind[] = ['rate', 'rate', 'convert', 'rate', 'history', 'rate', 'rate', 'convert', 'rate', 'rate'];
  const mixedRequest = (n: number) => {
    const kind = MIX[n % MIX.length]!;
    return kind === 'rate' ? rateRequest(n) : kind === 'convert' ? convertRequest(n) : historyRequest('1y', 'json', false)(n);
  };

  const scenarios: Scenario[] = [
    { name: 'baseline', description: 'bare Fastify route, constant JSON the size of a rate response', request: rateRequest, baseline: true, standard: true },
    { name: 'rate', description: 'GET /api/v1/rate, 1,000 keys and 870 pairs rotating', request: rateRequest, target: { minRatio: 0.8, maxP99Ms: 5 }, standard: true },
    { name: 'convert', description: 'GET /api/v1/convert, 1,000 keys and 870 pairs rotating', request: convertRequest, target: { minRatio: 0.8, maxP99Ms: 5 }, standard: true },
    { name: 'history-1y-json', description: 'GET /api/v1/history range=1y', request: historyRequest('1y', 'json', false), target: { minRatio: 0.6 }, standard: true },
    { name: 'history-1y-csv', description: 'GET /api/v1/history range=1y format=csv', request: historyRequest('1y', 'csv', false), standard: true },
    { name: 'history-5y-json', description: 'GET /api/v1/history range=5y', request: historyRequest('5y', 'json', false), target: { minRatio: 0.35 }, standard: true },
    { name: 'history-5y-csv', description: 'GET /api/v1/history range=5y format=csv', request: historyRequest('5y', 'csv', false), standard: true },
    { name: 'history-5y-json-gzip', description: 'GET /api/v1/history range=5y, Accept-Encoding: gzip', request: historyRequest('5y', 'json', true), target: { minRatio: 0.35 }, standard: true },
    { name: 'history-5y-csv-gzip', description: 'GET /api/v1/history range=5y format=csv, Accept-Encoding: gzip', request: historyRequest('5y', 'csv', true), standard: false },
    { name: 'history-1y-json-gzip', description: 'GET /api/v1/history range=1y, Accept-Encoding: gzip', request: historyRequest('1y', 'json', true), standard: false },
    { name: 'mixed', description: '70 % rate, 20 % convert, 10 % history 1y JSON', request: mixedRequest, standard: true },
  ];

  if (flags.help) {
    console.log(
      [
        'usage: npm run bench -- [options]',
        '  --duration S          measured seconds per scenario (BENCH_DURATION, 10)',
        '  --warmup S            warm-up seconds per scenario (BENCH_WARMUP, 3)',
        '  --connections N       concurrent connections (BENCH_CONNECTIONS, 50)',
        '  --only a,b            only these scenarios (see --list); the baseline runs when a ratio target needs it',
        '  --cpu-prof            profile the load server (node --cpu-prof) and print the top functions',
        '  --database-url URL    a PostgreSQL database instead of a temporary SQLite file (own schema, dropped after)',
        '  --redis-url URL       EXRATES_REDIS_URL for the service (own key prefix, deleted after)',
        '  --env NAME=VALUE      extra service environment, repeatable',
        '  --node-flag=FLAG      extra node flag for the service (after those of npm start), repeatable',
        '  --service-log FILE    append the service\'s output to FILE',
        '  --csv PATH            the ECB history (BENCH_ECB_CSV, ../shared/data/ecb/eurofxref-hist.csv)',
        '  --no-cold-start       skip the cold-start measurement',
        '  --generator G         wrk or autocannon (BENCH_GENERATOR; default wrk when installed)',
        '  --workers N           measure rate, convert and mixed again with EXRATES_WORKERS=N (BENCH_WORKERS, 2; 1 skips)',
        '  --keep                keep the temporary folder',
        '  --list                list the scenarios',
      ].join('\n'),
    );
    return;
  }
  if (flags.list) {
    for (const s of scenarios) console.log(`${s.name.padEnd(22)} ${s.standard ? '' : '(only with --only) '}${s.description}`);
    return;
  }
  let selected = scenarios.filter((s) => s.standard);
  if (flags.only) {
    const names = flags.only.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
    if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')} (see --list)`);
    selected = scenarios.filter((s) => names.includes(s.name) || (s.baseline && scenarios.some((t) => names.includes(t.name) && t.target?.minRatio !== undefined)));
  }
  const serviceScenarios = selected.filter((s) => !s.baseline);
  const baselineScenario = selected.find((s) => s.baseline);

  const perScenario = options.warmup + options.duration;
  console.log(
    `bench: ${selected.length} scenarios × (${options.warmup} s warm-up + ${options.duration} s), ${options.connections} connections, pipelining 1; ` +
      `about ${Math.ceil((selected.length * perScenario) / 60 + 0.5)} min`,
  );
  console.log(`bench: ${currencies.length} currencies (${pairs.length} pairs), ${KEY_COUNT} keys, ECB history ${relative(ROOT, options.csv)}`);

  ensureBuilt();
  const busy = await machineBusyFor(1000);
  if (busy !== undefined && busy > 25) {
    console.log(`bench: WARNING: the machine is already ${busy}% busy before the bench starts (other processes): results will be low and noisy`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'exrates-bench-'));
  onInterrupt.push(() => {
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  });
  const postgres = options.databaseUrl?.startsWith('postgres') ? await postgresSchema(options.databaseUrl) : undefined;
  if (postgres) onInterrupt.push(() => postgres.drop());
  const redis = options.redisUrl ? await redisNamespace(options.redisUrl) : undefined;
  if (redis) onInterrupt.push(() => redis.drop());
  const service = serviceEnvironment(dir, postgres?.url, redis?.prefix);
  const measured: Measured[] = [];
  const coldStartMs: number[] = [];
  const listeningMs: number[] = [];
  let peak: { hwmMb: number; rssAfterMb: number; maxSampledMb: number | undefined } | undefined;
  let profile: ProfileSummary | undefined;
  let profileFile: string | undefined;
  let baselineServer: { port: number; child: ChildProcess } | undefined;
  /** The baseline measured between service scenarios, in order: a scenario is compared with the one before and the one after it. */
  const adjacent: Measured[] = [];
  const adjacentSeconds = Math.max(2, Math.round(options.duration / 2));
  async function adjacentBaseline(): Promise<number | undefined> {
    if (!baselineServer || !baselineScenario) return undefined;
    const { port, child } = baselineServer;
    await load(baselineScenario, port, child.pid, 1, false);
    const m = (await load(baselineScenario, port, child.pid, adjacentSeconds, true))!;
    adjacent.push(m);
    console.log(`bench:   baseline again: ${m.requestsPerSecond} req/s, p99 ${m.latencyMs.p99} ms`);
    return adjacent.length - 1;
  }
  try {
    // 1. keys, then the history through a real start of the server.
    let t = performance.now();
    keys = await issueKeys(service, KEY_COUNT);
    console.log(`bench: issued ${keys.length} keys in ${Math.round(performance.now() - t)} ms`);
    t = performance.now();
    let sampleBody: string;
    {
      const port = await freePort();
      const running = await spawnService(service, port);
      try {
        await waitFor200(`http://127.0.0.1:${port}/readyz`, {}, running.child, running.output, 120_000);
        sampleBody = (await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': keys[0]! }, running.child, running.output)).body;
      } finally {
        await stopChild(running.child);
      }
    }
    console.log(`bench: loaded the ECB history into the store in ${Math.round(performance.now() - t)} ms (sample rate body: ${sampleBody.length} bytes)`);

    // 2. baseline, in its own process, kept running: it is measured again next to every service
    // scenario (see adjacentBaseline), so that each ratio compares runs a few seconds apart.
    if (baselineScenario) {
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, 'baseline.ts')], {
        cwd: ROOT,
        env: { ...process.env, BASELINE_PORT: String(port), BASELINE_HOST: '127.0.0.1', BASELINE_BODY: sampleBody },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      children.add(child);
      const output = tail(child, 'baseline');
      baselineServer = { port, child };
      await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, {}, child, output);
      console.log(`bench: ${baselineScenario.name}: warm-up ${options.warmup} s, measure ${options.duration} s`);
      await load(baselineScenario, port, child.pid, options.warmup, false);
      const m = (await load(baselineScenario, port, child.pid, options.duration, true))!;
      measured.push(m);
      console.log(`bench:   ${m.requestsPerSecond} req/s, p99 ${m.latencyMs.p99} ms, server CPU ${m.serverCpuPct ?? '?'}%, load generator CPU ${m.loadGeneratorCpuPct}%`);
    }

    // 3. cold start on a store that already holds the full history.
    if (options.coldStart) {
      for (let i = 0; i < COLD_STARTS; i++) {
        const run = await coldStart(service, keys[i]!);
        coldStartMs.push(Math.round(run.totalMs));
        listeningMs.push(Math.round(run.listeningMs));
      }
      console.log(`bench: cold start (spawn → first 200 of /api/v1/rate): ${coldStartMs.join(', ')} ms; first /healthz 200 at ${listeningMs.join(', ')} ms`);
    }

    // 4. the service under load.
    if (serviceScenarios.length > 0) {
      const port = await freePort();
      const profileDir = join(RESULTS_DIR, 'profiles');
      const nodeArgs: string[] = [];
      if (options.cpuProf) {
        mkdirSync(profileDir, { recursive: true });
        profileFile = `service-${startedAt.toISOString().replace(/[:.]/g, '-')}.cpuprofile`;
        nodeArgs.push('--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', profileFile);
      }
      const running = await spawnService(service, port, nodeArgs);
      try {
        await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': keys[0]! }, running.child, running.output);
        for (const scenario of serviceScenarios) {
          const before = await adjacentBaseline();
          console.log(`bench: ${scenario.name}: warm-up ${options.warmup} s, measure ${options.duration} s`);
          await load(scenario, port, running.child.pid, options.warmup, false);
          const m = (await load(scenario, port, running.child.pid, options.duration, true))!;
          m.adjacentBaseline = before;
          measured.push(m);
          const codes = Object.entries(m.statusCodes).map(([c, n]) => `${c}×${n}`).join(' ');
          console.log(`bench:   ${m.requestsPerSecond} req/s, p99 ${m.latencyMs.p99} ms, server CPU ${m.serverCpuPct ?? '?'}%, load generator CPU ${m.loadGeneratorCpuPct}%, statuses ${codes}`);
          if (running.child.exitCode !== null || running.child.signalCode !== null) throw new Error(`the service died during ${scenario.name}\n${running.output()}`);
        }
        const status = running.child.pid !== undefined ? procStatus(running.child.pid) : undefined;
        const maxSampled = Math.max(...measured.filter((m) => m.server === 'service').map((m) => m.serverRssMaxMb ?? 0));
        if (status) peak = { hwmMb: Math.round(status.hwmKb / 102.4) / 10, rssAfterMb: Math.round(status.rssKb / 102.4) / 10, maxSampledMb: maxSampled || undefined };
      } finally {
        await stopChild(running.child, 30_000);
      }
      if (profileFile) {
        try {
          profile = summariseProfile(join(profileDir, profileFile), 15);
        } catch (error) {
          console.error(`bench: could not read the CPU profile: ${String(error)}`);
        }
      }
    }

    // 5. rate, convert and mixed again with several worker processes on the same port.
    const workerScenarios = options.workers > 1 ? serviceScenarios.filter((s) => WORKER_SCENARIOS.includes(s.name)) : [];
    if (workerScenarios.length > 0) {
      const port = await freePort();
      const running = await spawnService(service, port, [], { EXRATES_WORKERS: String(options.workers) });
      try {
        await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': keys[0]! }, running.child, running.output);
        for (const scenario of workerScenarios) {
          const named = { ...scenario, name: `${scenario.name}@${options.workers}w`, description: `${scenario.description}, EXRATES_WORKERS=${options.workers}`, target: undefined };
          const before = await adjacentBaseline();
          console.log(`bench: ${named.name}: warm-up ${options.warmup} s, measure ${options.duration} s`);
          await load(named, port, running.child.pid, options.warmup, false);
          const m = (await load(named, port, running.child.pid, options.duration, true))!;
          m.adjacentBaseline = before;
          m.workers = options.workers;
          measured.push(m);
          console.log(`bench:   ${m.requestsPerSecond} req/s, p99 ${m.latencyMs.p99} ms, server CPU ${m.serverCpuPct ?? '?'}% (all workers), load generator CPU ${m.loadGeneratorCpuPct}%`);
          if (running.child.exitCode !== null || running.child.signalCode !== null) throw new Error(`the service died during ${named.name}\n${running.output()}`);
        }
      } finally {
        await stopChild(running.child, 30_000);
      }
    }
    // The baseline after the last scenario.
    if (adjacent.length > 0) await adjacentBaseline();
    if (baselineServer) {
      baselineServer.child.stdin?.end();
      await stopChild(baselineServer.child);
    }
  } finally {
    killAll('SIGKILL');
    await postgres?.drop().catch((error: unknown) => console.error(`bench: could not drop the PostgreSQL schema: ${String(error)}`));
    await redis?.drop().catch((error: unknown) => console.error(`bench: could not delete the Redis keys under ${redis.prefix}: ${String(error)}`));
    if (options.keep) console.log(`bench: kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }

  // 6. report.
  const baseline = measured.find((m) => m.server === 'baseline');
  for (const m of measured) {
    m.target = scenarios.find((s) => s.name === m.name)?.target;
    judge(m, referenceFor(m, baseline, adjacent));
  }
  const median = (values: number[]) => (values.length ? [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! : undefined);
  const coldMedian = median(coldStartMs);
  const listeningMedian = median(listeningMs);
  const rssPass = peak ? peak.hwmMb <= 200 : undefined;
  const coldPass = coldMedian !== undefined ? coldMedian <= 1500 : undefined;
  const git = gitState();
  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    freeMemoryGb: Math.round(freemem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };

  console.log('');
  console.log(
    `exrates bench ${startedAt.toISOString()} — ${machine.nproc} CPUs (${machine.cpu}), node ${machine.node}, ` +
      `${options.connections} connections, load generator ${options.generator === 'wrk' ? 'wrk (1 thread)' : 'autocannon'}, ${options.duration} s per scenario after ${options.warmup} s warm-up, ` +
      `store ${options.databaseUrl ? `PostgreSQL (${options.databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}, own schema)` : 'SQLite (temporary file)'}` +
      `${options.redisUrl ? ' + Redis' : ''}${Object.keys(options.serviceEnv).length ? `, env ${Object.entries(options.serviceEnv).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}` +
      `${options.nodeFlags.length ? `, node flags + ${options.nodeFlags.join(' ')}` : ''}, git ${git.commit}` +
      (git.dirtySrc > 0 ? ` + ${git.dirtySrc} uncommitted change(s) in src/` : ''),
  );
  console.log('');
  console.log(resultsTable(measured));
  console.log('');
  if (peak) {
    console.log(
      `server peak RSS (VmHWM, whole life incl. start): ${peak.hwmMb} MB; highest sampled under load: ${peak.maxSampledMb ?? '–'} MB; after the runs: ${peak.rssAfterMb} MB — target ≤ 200 MB: ${rssPass ? 'PASS' : 'FAIL'}`,
    );
  }
  if (coldMedian !== undefined) {
    console.log(
      `cold start (spawn → first 200 of /api/v1/rate, full history stored): median ${coldMedian} ms of ${coldStartMs.join(', ')} ms ` +
        `(listening, first /healthz 200: median ${listeningMedian} ms) — target ≤ 1500 ms: ${coldPass ? 'PASS' : 'FAIL'}`,
    );
  }
  if (adjacent.length > 0) {
    const rates = adjacent.map((b) => b.requestsPerSecond);
    console.log(
      `baseline measured ${adjacent.length} more times, between the scenarios (${adjacentSeconds} s each): median ${median(rates)} req/s, ` +
        `${Math.min(...rates)}–${Math.max(...rates)}; each row is compared with the mean of the runs just before and after it (column baseline req/s)`,
    );
  }
  const multi = measured.filter((m) => m.workers !== undefined);
  for (const m of multi) {
    const single = measured.find((one) => one.name === m.name.replace(/@\d+w$/, ''));
    if (single) {
      console.log(
        `EXRATES_WORKERS=${m.workers} vs 1: ${single.name} ${m.requestsPerSecond} vs ${single.requestsPerSecond} req/s (×${(m.requestsPerSecond / single.requestsPerSecond).toFixed(2)}), ` +
          `p99 ${m.latencyMs.p99} vs ${single.latencyMs.p99} ms, server CPU ${m.serverCpuPct ?? '?'}% vs ${single.serverCpuPct ?? '?'}% (the load generator shares the machine's 2 cores)`,
      );
    }
  }
  if (multi.length === 0) console.log('EXRATES_WORKERS: 1 vs more not measured in this run (--workers 1, or no rate/convert/mixed scenario).');
  const failing = measured.filter((m) => m.pass === false);
  for (const m of failing) console.log(`  ${m.name}: ${m.failedBecause!.join('; ')}`);
  const noisy = measured.filter((m) => (m.otherCpuPct ?? 0) > NOISY_OTHER_CPU);
  if (noisy.length) {
    console.log(
      `note: * other processes used more than ${NOISY_OTHER_CPU}% of a core during ${noisy.map((m) => m.name).join(', ')}: ` +
        'those figures are low and noisy; run again on a quiet machine.',
    );
  }
  const stolen = measured.filter((m) => (m.stealPct ?? 0) > NOISY_STEAL);
  if (stolen.length) {
    console.log(
      `note: * the host took more than ${NOISY_STEAL}% of a core from this virtual machine (steal) during ${stolen.map((m) => m.name).join(', ')}: ` +
        'those figures are low and noisy; run again when the host is quieter.',
    );
  }
  const maxGen = Math.max(...measured.map((m) => m.loadGeneratorCpuPct));
  if (maxGen >= 90) console.log(`note: the load generator reached ${maxGen}% of one core: scenarios near that are limited by it, not only by the server.`);
  if (profile) {
    console.log('');
    console.log(formatProfile(profile));
  }

  const out = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine,
    git,
    options: { ...options, csv: relative(ROOT, options.csv), databaseUrl: options.databaseUrl ? 'postgres (given)' : 'sqlite temporary file', redisUrl: options.redisUrl ? '(given)' : undefined, keys: KEY_COUNT, currencies: currencies.length, pairs: pairs.length },
    scenarios: measured,
    baselineBetweenScenarios: adjacent,
    peakRss: peak ? { ...peak, targetMb: 200, pass: rssPass } : undefined,
    coldStart: coldMedian !== undefined ? { runsMs: coldStartMs, medianMs: coldMedian, listeningRunsMs: listeningMs, listeningMedianMs: listeningMedian, targetMs: 1500, pass: coldPass } : undefined,
    workers: options.workers > 1 ? { workers: options.workers, scenarios: multi.map((m) => m.name) } : 'not measured (--workers 1)',
    profile,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log('');
  console.log(`bench: results written to ${relative(ROOT, file)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s in all)`);
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAll('SIGKILL');
  process.exitCode = 1;
});
