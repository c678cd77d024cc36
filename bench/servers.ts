/**
 * The servers the bench measures, all on the runtime running the bench (process.execPath): the
 * service, the built CLI started as `npm start` starts it, on a store of the run's own, and the
 * baselines, bare Fastify routes (baseline.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { serviceStart } from '../scripts/node-flags.js';
import { loadConfig } from '../src/config.js';
import { issueApiKey } from '../src/core/api-keys.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log.js';
import { freePort } from '../test/support/ports.js';
import { ROOT } from '../test/support/processes.js';
import { createPostgresSchema, deleteRedisKeys } from '../test/support/stores.js';
import { cleanUpOnInterrupt, onCpu, stopChild, tail, track, waitFor200 } from './processes.js';

/** The clock of every run: the history's newest day is then current, whenever the bench runs. */
const FIXED_NOW = '2026-03-06T12:00:00Z';

export interface Server {
  child: ChildProcess;
  port: number;
  /** The last lines of its output, for errors. */
  output: () => string;
}

/**
 * What a run works in: a temporary folder (its SQLite store) and, for the row on PostgreSQL +
 * Redis, a PostgreSQL schema and a Redis key prefix of its own (the databases are shared, and the
 * service's locks outlive a run); cleanUp() removes all three, as does an interrupt.
 */
export async function runWorkspace(databaseUrl: string | undefined, redisUrl: string | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'exrates-bench-'));
  const prefix = `exrates-bench-${Date.now()}:`;
  let schema: Awaited<ReturnType<typeof createPostgresSchema>> | undefined;
  // Says what could not be removed; never throws.
  const cleanUp = async () => {
    rmSync(dir, { recursive: true, force: true });
    await schema?.drop().catch((error: unknown) => console.error(`bench: could not drop the PostgreSQL schema: ${String(error)}`));
    if (redisUrl) await deleteRedisKeys(`${prefix}*`, redisUrl).catch((error: unknown) => console.error(`bench: could not delete the Redis keys under ${prefix}: ${String(error)}`));
  };
  cleanUpOnInterrupt(cleanUp);
  if (!databaseUrl || !redisUrl) return { dir, cleanUp };
  schema = await createPostgresSchema(databaseUrl, 'exrates_bench_');
  return { dir, cleanUp, redis: { databaseUrl: schema.url, redisUrl, prefix } };
}

export interface ServiceSetup {
  /** The run's temporary folder: the service's working directory, so that no .env of the tree applies. */
  dir: string;
  env: Record<string, string>;
  /** The CPUs it runs on (taskset's list), when the run is pinned. */
  cpus?: string;
  /** A command that runs node, node's path and arguments appended (valgrind, for bench/instructions.ts). */
  wrap?: readonly string[];
}

/** `node args` on these CPUs, run by `wrap` when given. */
function nodeCommand(cpus: string | undefined, wrap: readonly string[] | undefined, args: readonly string[]): [string, string[]] {
  const [command, ...rest] = [...(wrap ?? []), process.execPath, ...args];
  return onCpu(cpus, command!, rest);
}

/** The bench scrapes /metrics on the service's own port, as EXRATES_METRICS_TOKEN allows. */
const METRICS_TOKEN = 'bench-metrics-scrape-token';

/**
 * The service's environment in a run: the ECB history from a file, quotas that never refuse, and
 * one refresh, at start (a scheduled one re-reads the whole file and would land in some measurement).
 */
export function serviceEnvironment(options: { databaseUrl: string; csv: string; redisUrl?: string; redisPrefix?: string; extra: Record<string, string> }): Record<string, string> {
  return {
    ...{ EXRATES_DATABASE_URL: options.databaseUrl, EXRATES_PROVIDERS: 'file', EXRATES_FILE_URL: options.csv, EXRATES_NOW: FIXED_NOW, EXRATES_LOG_LEVEL: 'warn' },
    ...{ EXRATES_QUOTA_FREE: '100000000', EXRATES_QUOTA_PRO: '100000000', EXRATES_REFRESH_SECONDS: '86400', EXRATES_CONTACT_EMAIL: 'bench@example.org', HOST: '127.0.0.1', EXRATES_METRICS_TOKEN: METRICS_TOKEN },
    ...(options.redisUrl ? { EXRATES_REDIS_URL: options.redisUrl, EXRATES_REDIS_PREFIX: options.redisPrefix! } : {}),
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
 * How the service's node starts: its environment (the bench's own but its EXRATES_ variables, then
 * the CLI's first line's, then the run's) and the first line's flags.
 */
function serviceProcess(setup: ServiceSetup): { env: Record<string, string>; flags: string[] } {
  const start = serviceStart(ROOT);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('EXRATES_')) env[name] = value;
  return { env: Object.assign(env, start.env, setup.env), flags: start.flags };
}

/** The node flags the service starts with: the CLI's first line's and those of its NODE_OPTIONS (whether the bench's own or given with --env). */
export function serviceNodeFlags(setup: ServiceSetup): string[] {
  const { env, flags } = serviceProcess(setup);
  return [...flags, ...(env['NODE_OPTIONS'] ?? '').split(/\s+/).filter((word) => word !== '')];
}

/** Starts the built CLI's `serve` as its first line starts it (environment and node flags), on this runtime. */
export async function startService(setup: ServiceSetup): Promise<Server> {
  const port = await freePort();
  const start = serviceProcess(setup);
  const env = { ...start.env, PORT: String(port) };
  const [command, args] = nodeCommand(setup.cpus, setup.wrap, [...start.flags, join(ROOT, 'dist', 'cli', 'main.js'), 'serve']);
  const child = track(spawn(command, args, { cwd: setup.dir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  return { child, port, output: tail(child, 'service') };
}

/** The headers Node.js or Fastify write themselves on every answer, which a baseline told to send a service's headers leaves to them. */
const WRITTEN_BY_THE_SERVER = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-type']);

/** Starts the service, waits for its first 200 of a rate and stops it: that answer, and the ms from just before the spawn. */
async function startAndAnswer(setup: ServiceSetup, key: string, timeoutMs?: number): Promise<{ answer: { body: string; headers: Headers }; ms: number }> {
  const started = performance.now();
  const server = await startService(setup);
  try {
    const answer = await serviceReady(server, key, timeoutMs);
    return { answer, ms: performance.now() - started };
  } finally {
    await stopChild(server.child);
  }
}

/**
 * Starts the service once, so that it loads the history into its store: its answer to a rate, with
 * that answer's headers but those the server writes itself, and the ms from spawn to that answer
 * (the first load of the whole history, from a local file: no network in it).
 */
export async function loadHistory(setup: ServiceSetup, key: string): Promise<{ body: string; headers: Record<string, string>; ms: number }> {
  const { answer, ms } = await startAndAnswer(setup, key, 600_000);
  return { body: answer.body, headers: Object.fromEntries([...answer.headers].filter(([name]) => !WRITTEN_BY_THE_SERVER.has(name))), ms };
}

/** A store after the first load: the rate rows it holds and the bytes its tables take, by the database's own count. */
export interface StoreFigures {
  database: 'SQLite' | 'PostgreSQL';
  firstLoadMs: number;
  rows: number;
  bytes: number;
}

/** The rows and bytes of the store a setup names, read with the project's own store and the database's size functions. */
export async function storeFigures(setup: ServiceSetup, firstLoadMs: number): Promise<StoreFigures> {
  const config = loadConfig({ ...setup.env, EXRATES_LOG_LEVEL: 'silent', PORT: '0' });
  const deps = await createDeps(config, { log: createLogger('silent') });
  try {
    const rows = await deps.rates.countQuotes();
    const { db, engine } = deps.database;
    const size =
      engine === 'sqlite'
        ? await sql<{ bytes: number }>`select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()`.execute(db)
        : await sql<{ bytes: string }>`select sum(pg_total_relation_size(format('%I.%I', schemaname, tablename)::regclass)) as bytes from pg_tables where schemaname = current_schema()`.execute(db);
    return { database: engine === 'sqlite' ? 'SQLite' : 'PostgreSQL', firstLoadMs: Math.round(firstLoadMs), rows, bytes: Number(size.rows[0]!.bytes) };
  } finally {
    await deps.close();
  }
}

/** What the service's own /metrics have counted so far, every worker's summed: commands sent to Redis, full collections, seconds of collections' pauses. */
export async function serviceCounters(server: Server): Promise<{ redisCommands: number; fullCollections: number; collectionSeconds: number }> {
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const sum = (line: RegExp) => [...text.matchAll(line)].reduce((total, match) => total + Number(match[1]), 0);
  return {
    redisCommands: sum(/^exrates_redis_commands_total\{[^}]*\} (\S+)$/gm),
    fullCollections: sum(/^exrates_nodejs_gc_duration_seconds_count\{[^}]*kind="major"[^}]*\} (\S+)$/gm),
    collectionSeconds: sum(/^exrates_nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
  };
}

/** Waits until the service answers a rate: its rates are loaded. Returns that answer. */
export async function serviceReady(server: Server, key: string, timeoutMs?: number): Promise<{ body: string; headers: Headers }> {
  return waitFor200(`http://127.0.0.1:${server.port}/api/v1/rate?from=EUR&to=USD`, { 'x-api-key': key }, server.child, server.output, timeoutMs);
}

/** A baseline in its own process, answering `body`, with `headers` as well when given; it also exits when the bench's end of its standard input closes. */
export async function startBaseline(body: string, cpus?: string, headers?: Record<string, string>, wrap?: readonly string[]): Promise<Server> {
  const port = await freePort();
  const [command, args] = nodeCommand(cpus, wrap, ['--import', 'tsx', join(ROOT, 'bench', 'baseline.ts')]);
  const env = { ...process.env, BASELINE_PORT: String(port), BASELINE_BODY: body, ...(headers ? { BASELINE_HEADERS: JSON.stringify(headers) } : {}) };
  const child = track(spawn(command, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] }));
  const server = { child, port, output: tail(child, 'baseline') };
  await waitFor200(`http://127.0.0.1:${port}/api/v1/rate?from=EUR&to=USD`, {}, child, server.output, wrap ? 600_000 : undefined);
  return server;
}

/** Stops a baseline: it exits when its standard input closes, and is killed if it does not. */
export async function stopBaseline(server: Server): Promise<void> {
  server.child.stdin?.end();
  await stopChild(server.child);
}

/** Spawn → first 200 of /api/v1/rate, in ms. */
export const coldStart = async (setup: ServiceSetup, key: string): Promise<number> => (await startAndAnswer(setup, key)).ms;
