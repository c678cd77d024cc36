/**
 * The two servers the bench measures, both on the runtime running the bench (process.execPath):
 * the service, started as `npm start` starts it, on a store of the run's own, and the baseline,
 * a bare Fastify route (baseline.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceStart } from '../scripts/node-flags.js';
import { loadConfig } from '../src/config.js';
import { issueApiKey } from '../src/core/api-keys.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log.js';
import { parseRedisUrl } from '../src/storage/redis-url.js';
import { cleanUpOnInterrupt, freePort, onCpu, stopChild, tail, track, waitFor200 } from './processes.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The clock of every run: the history's newest day is then current, whenever the bench runs. */
const FIXED_NOW = '2026-03-06T12:00:00Z';

export interface Server {
  child: ChildProcess;
  port: number;
  /** The last lines of its output, for errors. */
  output: () => string;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is older than src/. */
export function ensureBuilt(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist', 'cli', 'main.js')).mtimeMs;
  } catch {
    // not built
  }
  if (built >= newestMtime(join(ROOT, 'src'))) return;
  console.log('bench: dist/ is older than src/: npm run build');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * A PostgreSQL database is shared: the bench works in a schema of its own, created now and
 * dropped at the end, through the connection's search_path.
 */
export async function postgresSchema(url: string): Promise<{ url: string; drop(): Promise<void>; quotaWrites(): Promise<number> }> {
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
  return {
    url: scoped.toString(),
    drop: () => run(`drop schema if exists "${schema}" cascade`),
    // Rows written to the quota table so far, by PostgreSQL's own statistics (updated about once a second).
    async quotaWrites() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ writes: string }>(
          `select coalesce(sum(n_tup_ins + n_tup_upd), 0) as writes from pg_stat_user_tables where schemaname = $1 and relname = 'quota_usage'`,
          [schema],
        );
        return Number(rows[0]!.writes);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A Redis is shared too, and the service's start and refresh locks outlive a run (held for a
 * day of the bench's fixed clock): the service gets a key prefix of the run's own, its keys
 * deleted at the end. A second run on the same prefix would find the start's lock taken and
 * wait for ever for a load that never comes.
 */
export function redisNamespace(url: string): { prefix: string; drop(): Promise<void> } {
  const prefix = `exrates-bench-${Date.now()}:`;
  return {
    prefix,
    async drop() {
      const { Cluster, Redis } = await import('ioredis');
      const target = parseRedisUrl(url);
      const options = { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
      const client = target.cluster ? new Cluster(target.nodes, { lazyConnect: true, redisOptions: options }) : new Redis(url, options);
      try {
        await client.connect();
        // SCAN walks one server: on a cluster, every master.
        for (const redis of client instanceof Cluster ? client.nodes('master') : [client]) {
          for (let cursor = '0'; ; ) {
            const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
            for (const key of keys) await redis.unlink(key);
            if (next === '0') break;
            cursor = next;
          }
        }
      } finally {
        client.disconnect();
      }
    },
  };
}

/** What a Redis (every master of a cluster) has done so far, by its INFO. */
export interface RedisWork {
  /** CPU seconds of the server process (user + system). */
  cpuSeconds: number;
  /** Commands run, INFO's own left out. */
  commands: number;
  /** Script calls (EVALSHA and EVAL) and the microseconds Redis spent running them. */
  scriptCalls: number;
  scriptUsec: number;
}

/** The figures of one INFO text (sections `cpu` and `commandstats`). */
export function readRedisInfo(text: string): RedisWork {
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
  const work: RedisWork = { cpuSeconds: field('used_cpu_user') + field('used_cpu_sys'), commands: 0, scriptCalls: 0, scriptUsec: 0 };
  for (const [, command, calls, usec] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (command === 'info') continue;
    work.commands += Number(calls);
    if (command === 'evalsha' || command === 'eval') {
      work.scriptCalls += Number(calls);
      work.scriptUsec += Number(usec);
    }
  }
  if (!Number.isFinite(work.cpuSeconds)) throw new Error('INFO gave no used_cpu_user/used_cpu_sys');
  return work;
}

const addWork = (a: RedisWork, b: RedisWork): RedisWork => ({
  cpuSeconds: a.cpuSeconds + b.cpuSeconds,
  commands: a.commands + b.commands,
  scriptCalls: a.scriptCalls + b.scriptCalls,
  scriptUsec: a.scriptUsec + b.scriptUsec,
});

/** Reads a Redis's INFO on demand: one server, or every master of a cluster. */
export async function redisWatcher(url: string): Promise<{ read(): Promise<RedisWork>; close(): void }> {
  const { Cluster, Redis } = await import('ioredis');
  const target = parseRedisUrl(url);
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
  const client = target.cluster ? new Cluster(target.nodes, { lazyConnect: true, redisOptions: options }) : new Redis(url, options);
  await client.connect();
  return {
    async read() {
      let total: RedisWork = { cpuSeconds: 0, commands: 0, scriptCalls: 0, scriptUsec: 0 };
      for (const server of client instanceof Cluster ? client.nodes('master') : [client]) {
        total = addWork(total, readRedisInfo(`${await server.info('cpu')}\n${await server.info('commandstats')}`));
      }
      return total;
    },
    close: () => client.disconnect(),
  };
}

/**
 * What a run of `tool` works in: a temporary folder, a PostgreSQL schema of its own (with a
 * postgres:// URL; another database URL is used as it is; none: a SQLite file in the folder) and
 * a Redis key prefix of its own (with a Redis URL). cleanUp() removes all three, as does an
 * interrupt; with `keep`, the folder stays and its path is printed.
 */
export async function runWorkspace(tool: string, databaseUrl: string | undefined, redisUrl: string | undefined, options: { keep?: boolean } = {}) {
  const postgres = databaseUrl?.startsWith('postgres') ? await postgresSchema(databaseUrl) : undefined;
  const redis = redisUrl ? redisNamespace(redisUrl) : undefined;
  const dir = mkdtempSync(join(tmpdir(), `exrates-${tool}-`));
  const cleanUp = async () => {
    if (options.keep) console.log(`${tool}: kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    // Says what could not be dropped; never throws.
    await postgres?.drop().catch((error: unknown) => console.error(`${tool}: could not drop the PostgreSQL schema: ${String(error)}`));
    await redis?.drop().catch((error: unknown) => console.error(`${tool}: could not delete the Redis keys under ${redis.prefix}: ${String(error)}`));
  };
  cleanUpOnInterrupt(cleanUp);
  return { dir, postgres, redis, databaseUrl: postgres?.url ?? databaseUrl ?? `sqlite:${join(dir, 'bench.db')}`, cleanUp };
}

export interface ServiceSetup {
  /** The run's temporary folder: the service's working directory, so that no .env of the tree applies. */
  dir: string;
  env: Record<string, string>;
  /** Extra node flags, after the service's own. */
  nodeFlags: readonly string[];
  /** A file the service's output is appended to. */
  log?: string;
  /** The CPUs it runs on (taskset's list), when the run is pinned. */
  cpus?: string;
}

/** The service's environment in a run: the ECB history from a file, one refresh, quotas that never refuse. */
export function serviceEnvironment(options: { dir: string; databaseUrl: string; csv: string; redisUrl?: string; redisPrefix?: string; extra: Record<string, string> }): Record<string, string> {
  return {
    EXRATES_DATABASE_URL: options.databaseUrl,
    EXRATES_PROVIDERS: 'file',
    EXRATES_FILE_URL: options.csv,
    EXRATES_NOW: FIXED_NOW,
    EXRATES_LOG_LEVEL: 'warn',
    EXRATES_QUOTA_FREE: '100000000',
    EXRATES_QUOTA_PRO: '100000000',
    // One refresh at start only: a scheduled refresh re-reads the whole file and would land in
    // the middle of some measurement.
    EXRATES_REFRESH_SECONDS: '86400',
    EXRATES_CONTACT_EMAIL: 'bench@example.org',
    HOST: '127.0.0.1',
    ...(options.redisUrl ? { EXRATES_REDIS_URL: options.redisUrl } : {}),
    ...(options.redisPrefix ? { EXRATES_REDIS_PREFIX: options.redisPrefix } : {}),
    ...options.extra,
  };
}

/** Issues the keys with the project's own functions (not one CLI run per key), on the store the service will use. */
export async function issueKeys(setup: ServiceSetup, count: number): Promise<string[]> {
  const config = loadConfig({ ...setup.env, EXRATES_LOG_LEVEL: 'silent', PORT: '0' });
  const deps = await createDeps(config, { log: createLogger('silent') });
  try {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await issueApiKey(deps.keys, { tier: 'free', owner: `bench${i}@example.org` }, deps.clock)).key);
    return keys;
  } finally {
    await deps.close();
  }
}

/**
 * Starts the service with the node flags of every start of it, then the bench's own; `wrap` is a
 * command that runs node (valgrind and its options), inside the CPU pinning.
 */
export async function startService(setup: ServiceSetup, nodeArgs: readonly string[] = [], extraEnv: Record<string, string> = {}, wrap: readonly string[] = []): Promise<Server> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('EXRATES_')) env[name] = value;
  const start = serviceStart(ROOT);
  Object.assign(env, start.env, setup.env, extraEnv, { PORT: String(port) });
  const args = [...start.flags, ...setup.nodeFlags, ...nodeArgs, join(ROOT, 'dist', 'cli', 'main.js'), 'serve'];
  const [command, commandArgs] = wrapped(setup.cpus, wrap, args);
  const child = track(spawn(command, commandArgs, { cwd: setup.dir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  if (setup.log) {
    // Both streams into one file, closed once the child's output has all been read.
    const log = createWriteStream(setup.log, { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('close', () => log.end());
  }
  return { child, port, output: tail(child, 'service') };
}

/** The headers Node.js or Fastify write themselves on every answer, which a baseline told to send a service's headers leaves to them. */
const WRITTEN_BY_THE_SERVER = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-type']);

/**
 * Starts the service once, so that it loads the history into its store, and stops it; returns its
 * answer to a rate, and that answer's headers but those the server writes itself.
 */
export async function loadHistory(setup: ServiceSetup, key: string): Promise<{ body: string; headers: Record<string, string> }> {
  const server = await startService(setup);
  try {
    const answer = await serviceReady(server, key, 120_000);
    return { body: answer.body, headers: Object.fromEntries([...answer.headers].filter(([name]) => !WRITTEN_BY_THE_SERVER.has(name))) };
  } finally {
    await stopChild(server.child);
  }
}

/** What the service's own /metrics have counted so far, every worker's summed. */
export interface ServiceCounters {
  /** Commands sent to Redis. */
  redisCommands: number;
  /** V8's full (mark-compact) collections, and the seconds of every collection's pauses. */
  fullCollections: number;
  collectionSeconds: number;
  /** The API's requests so far by the upper bound (seconds) of exrates_http_request_duration_seconds' buckets, cumulative; +Inf last. */
  apiLatency: Map<number, number>;
}

/**
 * A quantile of the requests counted between two readings, from the histogram's buckets, as
 * Prometheus's histogram_quantile works it out: linearly within the bucket it falls in (the highest
 * finite bound when it falls above them all). In seconds; undefined without requests.
 */
export function latencyQuantile(q: number, before: Map<number, number>, after: Map<number, number>): number | undefined {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counted = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = counted(Infinity);
  if (!(total > 0)) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const upTo = counted(le);
    if (upTo >= rank) return le === Infinity ? lower : lower + ((le - lower) * (rank - below)) / (upTo - below || 1);
    lower = le;
    below = upTo;
  }
  return lower;
}

/** Commands sent to Redis per response between two readings, to three decimals. */
export function redisCommandsPerRequest(before: ServiceCounters, after: ServiceCounters, responses: number): number {
  return Math.round(((after.redisCommands - before.redisCommands) / responses) * 1000) / 1000;
}

/** exrates_http_request_duration_seconds' cumulative buckets, summed over the API's routes (not /metrics and the other routes'). */
function buckets(text: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const match of text.matchAll(/^exrates_http_request_duration_seconds_bucket\{([^}]*)\} (\S+)$/gm)) {
    const labels = match[1]!;
    if (!/route="\/api\//.test(labels)) continue;
    const le = /le="([^"]+)"/.exec(labels)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    counts.set(bound, (counts.get(bound) ?? 0) + Number(match[2]));
  }
  return counts;
}

export async function serviceCounters(server: Server): Promise<ServiceCounters> {
  const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  return readServiceCounters(await response.text());
}

/** The counters in a /metrics text. */
export function readServiceCounters(text: string): ServiceCounters {
  const sum = (line: RegExp) => {
    let total = 0;
    for (const match of text.matchAll(line)) total += Number(match[1]);
    return total;
  };
  return {
    redisCommands: sum(/^exrates_redis_commands_total\{[^}]*\} (\S+)$/gm),
    fullCollections: sum(/^exrates_nodejs_gc_duration_seconds_count\{[^}]*kind="major"[^}]*\} (\S+)$/gm),
    collectionSeconds: sum(/^exrates_nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
    apiLatency: buckets(text),
  };
}

/** Waits until the service answers a rate: its rates are loaded. Returns that answer. */
export async function serviceReady(server: Server, key: string, timeoutMs?: number): Promise<{ body: string; headers: Headers }> {
  return waitFor200(`http://127.0.0.1:${server.port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': key }, server.child, server.output, timeoutMs);
}

/** node with these arguments, run by `wrap` when given, on these CPUs when given. */
function wrapped(cpus: string | undefined, wrap: readonly string[], args: readonly string[]): [string, string[]] {
  return wrap.length > 0 ? onCpu(cpus, wrap[0]!, [...wrap.slice(1), process.execPath, ...args]) : onCpu(cpus, process.execPath, args);
}

/**
 * The baseline in its own process, answering `body`, with `headers` as well when given; it also
 * exits when the bench's end of its standard input closes. `wrap` and `env` as for the service
 * (startService).
 */
export async function startBaseline(
  body: string,
  cpus?: string,
  options: { wrap?: readonly string[]; nodeArgs?: readonly string[]; env?: Record<string, string>; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Server> {
  const port = await freePort();
  const [command, args] = wrapped(cpus, options.wrap ?? [], [...(options.nodeArgs ?? []), '--import', 'tsx', join(ROOT, 'bench', 'baseline.ts')]);
  const child = track(
    spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...options.env, BASELINE_PORT: String(port), BASELINE_HOST: '127.0.0.1', BASELINE_BODY: body, ...(options.headers ? { BASELINE_HEADERS: JSON.stringify(options.headers) } : {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const server = { child, port, output: tail(child, 'baseline') };
  await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, {}, child, server.output, options.timeoutMs);
  return server;
}

/**
 * Spawn → first 200 of /api/v1/rate, timed from just before the spawn; also when /healthz first
 * answered (the process is up and listening), to tell start-up from loading the rates.
 */
export async function coldStart(setup: ServiceSetup, key: string): Promise<{ totalMs: number; listeningMs: number }> {
  const started = performance.now();
  const server = await startService(setup);
  try {
    await waitFor200(`http://127.0.0.1:${server.port}/healthz`, {}, server.child, server.output);
    const listeningMs = performance.now() - started;
    await serviceReady(server, key);
    return { totalMs: performance.now() - started, listeningMs };
  } finally {
    await stopChild(server.child);
  }
}
