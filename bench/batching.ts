/**
 * `npm run bench:batching`: what quota counting costs Redis at a given request rate. The service
 * sends the quota decisions that arrive while one script call is on its way in the next call, so
 * a call carries more requests the more requests an instance receives per round trip: as fast as
 * wrk can ask (the load bench) a call carries about 25, at a fleet's per-instance rate far
 * fewer. This runs `rate` at set rates (wrk paced, 50 connections), then unpaced, and prints per
 * request what Redis did: script calls, its own CPU time, and the service's.
 *
 *   npm run bench:batching -- --redis-url redis://127.0.0.1:6379
 *   npm run bench:batching -- --redis-url redis://… --database-url postgres://… --rates 500,2000,8000
 *   npm run bench:batching -- --redis-url redis+cluster://127.0.0.1:17101,127.0.0.1:17102,127.0.0.1:17103
 *
 * Redis's side comes from its INFO (`cpu`, `commandstats`; on a cluster summed over the masters)
 * before and after each measured run, so it counts every client of that Redis: give the bench a
 * Redis nothing else is using. Options: --rates (requests/s, comma-separated; default
 * 1000,2000,4000,8000), --seconds (10), --warmup (3), --settle (20), --connections (50),
 * --redis-url (needed), --database-url (default a temporary SQLite file), --csv, --env NAME=VALUE
 * (repeatable: a variable for the service).
 */
import { parseArgs } from 'node:util';
import { chooseGenerator, measure, warmUp, type LoadRun } from './load.js';
import { DEFAULT_CSV, nameValue } from './options.js';
import { choosePinning, printUsage, runMain, stopChild } from './processes.js';
import { RESULTS_DIR, gitLabel, gitState, writeResult } from './report.js';
import { SCENARIOS, createRotation, currentCurrencies } from './scenarios.js';
import {
  runWorkspace,
  ensureBuilt,
  issueKeys,
  latencyQuantile,
  loadHistory,
  redisWatcher,
  serviceCounters,
  serviceEnvironment,
  serviceReady,
  startService,
  type ServiceSetup,
} from './servers.js';
import { parseRedisUrl } from '../src/storage/redis-url.js';

const KEY_COUNT = 1000;

interface Row {
  /** The rate asked for (requests/s), or undefined: as fast as the service answers. */
  rate?: number;
  requestsPerSecond: number;
  responses: number;
  errors: number;
  serviceCpuPerRequestUs?: number;
  /** The service's own count of the commands it sent. */
  serviceCommandsPerRequest: number;
  /** By Redis's INFO. */
  requestsPerScriptCall: number;
  redisCpuPerRequestUs: number;
  scriptUsecPerCall: number;
  p50Ms: number;
  p99Ms: number;
  inServiceP99Ms?: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rates: { type: 'string', default: '1000,2000,4000,8000' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      settle: { type: 'string', default: '20' },
      connections: { type: 'string', default: '50' },
      csv: { type: 'string', default: DEFAULT_CSV },
      'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL },
      'redis-url': { type: 'string', default: process.env.BENCH_REDIS_URL },
      env: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) printUsage(import.meta.url);
  const rates = values.rates.split(',').map((s) => Number(s.trim()));
  if (!rates.every((r) => Number.isFinite(r) && r > 0)) throw new Error(`--rates takes requests/s, comma-separated: ${values.rates}`);
  const [seconds, warmup, settleSeconds, connections] = [values.seconds, values.warmup, values.settle, values.connections].map(Number) as [number, number, number, number];
  if (![seconds, warmup, connections].every((n) => Number.isFinite(n) && n > 0) || !(settleSeconds >= 0)) {
    throw new Error('--seconds, --warmup and --connections take positive numbers, --settle 0 or more');
  }
  const redisUrl = values['redis-url'];
  if (!redisUrl) throw new Error('--redis-url is needed (or BENCH_REDIS_URL): the bench measures what quota counting costs Redis');
  const databaseUrl = values['database-url'];
  if (databaseUrl !== undefined && !databaseUrl.startsWith('postgres')) throw new Error('--database-url takes a postgres:// URL (a temporary SQLite file is the default)');
  let extra: Record<string, string> = {};
  for (const pair of values.env) {
    try {
      extra = nameValue(pair, extra);
    } catch (error) {
      throw new Error(`--env ${pair}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const generator = chooseGenerator(undefined);
  const pinning = choosePinning(true);

  ensureBuilt();
  const startedAt = new Date().toISOString();
  const git = gitState(undefined);
  const { dir, postgres, redis, databaseUrl: serviceDatabase, cleanUp } = await runWorkspace('batching', databaseUrl, redisUrl);
  const store = `${postgres ? 'PostgreSQL' : 'SQLite'} + ${parseRedisUrl(redisUrl).cluster ? 'Redis Cluster' : 'Redis'}`;
  const setup: ServiceSetup = {
    dir,
    env: serviceEnvironment({ dir, databaseUrl: serviceDatabase, csv: values.csv, redisUrl, redisPrefix: redis!.prefix, extra }),
    nodeFlags: [],
    cpus: pinning?.server,
  };
  const scenario = SCENARIOS.find((s) => s.name === 'rate')!;
  const watcher = await redisWatcher(redisUrl);
  const rows: Row[] = [];
  try {
    const keys = await issueKeys(setup, KEY_COUNT);
    const rotation = createRotation(currentCurrencies(values.csv), keys);
    await loadHistory(setup, keys[0]!);
    console.log(`batching: node ${process.version}, git ${gitLabel(git)}, store ${store}${Object.keys(extra).length ? `, ${Object.entries(extra).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}, load generator ${generator}, ${connections} connections, rates ${rates.join(', ')} requests/s then unpaced`);
    const server = await startService(setup);
    try {
      await serviceReady(server, keys[0]!);
      const run = (runSeconds: number, rate?: number): LoadRun => ({
        generator,
        cpus: pinning?.generator,
        connections,
        seconds: runSeconds,
        port: server.port,
        pid: server.child.pid,
        request: (n) => scenario.request(n, rotation),
        ...(rate ? { rate } : {}),
      });
      if (settleSeconds > 0) {
        console.log(`batching: ${settleSeconds} s of unpaced load to settle the process after its start`);
        await warmUp(run(settleSeconds));
      }
      for (const rate of [...rates, undefined]) {
        const label = rate ? `${rate} requests/s` : 'unpaced';
        console.log(`batching: ${label}: warm-up ${warmup} s, measure ${seconds} s`);
        await warmUp(run(warmup, rate));
        const counters = await serviceCounters(server);
        const work = await watcher.read();
        const measured = await measure(run(seconds, rate));
        const countersAfter = await serviceCounters(server);
        const workAfter = await watcher.read();
        const responses = measured.responses;
        const scriptCalls = workAfter.scriptCalls - work.scriptCalls;
        const inService = latencyQuantile(0.99, counters.apiLatency, countersAfter.apiLatency);
        const row: Row = {
          ...(rate ? { rate } : {}),
          requestsPerSecond: measured.requestsPerSecond,
          responses,
          errors: measured.errors,
          ...(measured.cpuPerRequestUs === undefined ? {} : { serviceCpuPerRequestUs: measured.cpuPerRequestUs }),
          serviceCommandsPerRequest: Math.round(((countersAfter.redisCommands - counters.redisCommands) / responses) * 1000) / 1000,
          requestsPerScriptCall: Math.round((responses / scriptCalls) * 10) / 10,
          redisCpuPerRequestUs: Math.round(((workAfter.cpuSeconds - work.cpuSeconds) / responses) * 1e7) / 10,
          scriptUsecPerCall: Math.round(((workAfter.scriptUsec - work.scriptUsec) / scriptCalls) * 10) / 10,
          p50Ms: measured.latencyMs.p50,
          p99Ms: measured.latencyMs.p99,
          ...(inService === undefined ? {} : { inServiceP99Ms: Math.round(inService * 100_000) / 100 }),
        };
        if (row.errors > 0) throw new Error(`${label}: ${row.errors} errors under load\n${server.output()}`);
        console.log(
          `batching:   ${row.requestsPerSecond} req/s, ${row.requestsPerScriptCall} requests per script call, Redis CPU ${row.redisCpuPerRequestUs} µs/req, service CPU ${row.serviceCpuPerRequestUs ?? '?'} µs/req, p99 ${row.p99Ms} ms`,
        );
        rows.push(row);
      }
    } finally {
      await stopChild(server.child, 30_000);
    }
  } finally {
    watcher.close();
    await cleanUp();
  }

  console.log(`\nquota counting in Redis by request rate, node ${process.version}, git ${gitLabel(git)}, store ${store}, ${connections} connections, ${seconds} s per row`);
  const header = ['rate asked', 'req/s', 'req per script call', 'Redis cmd/req', 'Redis CPU µs/req', 'script µs/call', 'service CPU µs/req', 'p50 ms', 'p99 ms', 'srv p99 ms'];
  console.log(`| ${header.join(' | ')} |\n|${header.map(() => ' ---: ').join('|')}|`);
  for (const r of rows) {
    const cells = [r.rate ?? 'unpaced', r.requestsPerSecond, r.requestsPerScriptCall, r.serviceCommandsPerRequest, r.redisCpuPerRequestUs, r.scriptUsecPerCall, r.serviceCpuPerRequestUs ?? '–', r.p50Ms, r.p99Ms, r.inServiceP99Ms ?? '–'];
    console.log(`| ${cells.join(' | ')} |`);
  }
  const file = writeResult(RESULTS_DIR, 'batching-', startedAt, git.commit, { node: process.version, ...git, store, serviceEnv: extra, connections, seconds, warmupSeconds: warmup, keys: KEY_COUNT, rows });
  console.log(`batching: written to ${file}`);
}

runMain('batching', main);
