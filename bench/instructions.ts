/**
 * `npm run bench:instructions`: instructions per request on the server's main thread (the
 * JavaScript thread), counted by valgrind's callgrind, for the baseline and the service under the
 * same load. Unlike requests/s and CPU time, the count does not move with the host's speed: runs
 * of one build agree within about 2 %, so it can tell a change of a few percent (run each side
 * twice) that the load bench, on a noisy machine, cannot.
 *
 *   npm run bench:instructions                                  # rate and convert
 *   npm run bench:instructions -- --only rate,history-1y-json --seconds 30
 *   npm run bench:instructions -- --database-url postgres://… --redis-url redis://…
 *
 * Each server runs under callgrind with counting off. After a warm-up under load (V8 optimises
 * the hot path), counting is switched on for a measured run of wrk and off again, and the main
 * thread's count is divided by the responses wrk counted. What it leaves out: the kernel (the
 * socket's reads and writes, a large part of every request's time) and the other threads (V8's
 * compiler and collector helpers, which under valgrind's slowness keep recompiling what the
 * main thread runs at full speed without).
 *
 * Under valgrind a server answers 50–100 times fewer requests per second, so what the service
 * does per second rather than per request (the quota journal and its fold, renewing cached keys,
 * the revocation poll) would weigh 50–100 times more per request than at full speed: the service
 * runs with those as far apart as its settings allow (PERIODIC below), on 10 keys (KEY_COUNT).
 *
 * `--database-url` and `--redis-url` run the service on PostgreSQL and Redis, in a schema and under a
 * key prefix of the run's own (as the load bench does); the row then also gives the Redis
 * commands per request, which under valgrind's slowness batch differently than at full speed.
 *
 * `--functions N` also prints, per row, the N functions that ran the most instructions themselves
 * (callgrind's self cost; the JIT's code named from the map node writes with --perf-basic-prof).
 *
 * `--baseline-headers` adds a row `baseline+headers`: the baseline sending, besides its body, the
 * headers of the service's rate answer (CORS, rate limits, caching, nosniff: 12 header lines
 * against the bare route's 2), which the API's wire format fixes. It tells what those header lines
 * cost in Node's response writer from what the service's own code costs.
 *
 * Needs valgrind (apt-get install valgrind) and wrk. A scenario takes about the warm-up plus
 * twice the measured seconds; the start under valgrind about half a minute more.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readPerfMap, selfCosts } from './callgrind.js';
import { chooseGenerator, measure, warmUp, type LoadRun } from './load.js';
import { DEFAULT_CSV } from './options.js';
import { choosePinning, printUsage, runMain, stopChild } from './processes.js';
import { SCENARIOS, createRotation, currentCurrencies, type Scenario } from './scenarios.js';
import { REFERENCE_ROW, RESULTS_DIR, gitLabel, gitState, writeResult } from './report.js';
import {
  runWorkspace,
  ensureBuilt,
  issueKeys,
  loadHistory,
  redisCommandsPerRequest,
  serviceCounters,
  serviceEnvironment,
  serviceReady,
  startBaseline,
  startService,
  type Server,
  type ServiceSetup,
} from './servers.js';

/** The service's periodic work, as far apart as its settings allow (see above). */
const PERIODIC = { EXRATES_QUOTA_FLUSH_MS: '1000', EXRATES_KEY_CACHE_MS: '3600000', EXRATES_REVOCATION_POLL_MS: '60000' };
/**
 * Few keys, unlike the load bench's 1,000: the journal and the fold write one count per key that
 * was used, once a second, so with 1,000 keys and the few hundred requests a second valgrind
 * allows they would write one count per request, and the count per request would move with the
 * requests a run manages. With 10, that work is a small, steady share.
 */
const KEY_COUNT = 10;
/** Starting node under valgrind takes a while (tsx compiles the baseline's TypeScript). */
const START_TIMEOUT_MS = 600_000;

interface Row {
  name: string;
  responses: number;
  instructions: number;
  perRequest: number;
  ratio?: number;
  /** Commands the service sent to Redis per request during the measured run (with --redis-url). */
  redisPerRequest?: number;
  /** Instructions per request by function, the most first (with --functions). */
  functions?: Array<[string, number]>;
}

function needCommand(command: string, args: string[], install: string): void {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') throw new Error(`${command} is not installed (${install})`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', default: 'rate,convert' },
      warmup: { type: 'string', default: '60' },
      seconds: { type: 'string', default: '20' },
      connections: { type: 'string', default: '50' },
      csv: { type: 'string', default: DEFAULT_CSV },
      functions: { type: 'string', default: '0' },
      'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL },
      'redis-url': { type: 'string', default: process.env.BENCH_REDIS_URL },
      'baseline-headers': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) printUsage(import.meta.url);
  const names = values.only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((name) => !SCENARIOS.some((s) => s.name === name && !s.baseline));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')} (npm run bench -- --list)`);
  const scenarios = names.map((name) => SCENARIOS.find((s) => s.name === name)!);
  const baselineScenario = SCENARIOS.find((s) => s.baseline)!;
  const [warmup, seconds, connections, functions] = [values.warmup, values.seconds, values.connections, values.functions].map(Number) as [number, number, number, number];
  if (![warmup, seconds, connections].every((n) => Number.isFinite(n) && n > 0)) throw new Error('--warmup, --seconds and --connections take positive numbers');
  if (!Number.isInteger(functions) || functions < 0) throw new Error('--functions takes a whole number');
  const databaseUrl = values['database-url'];
  if (databaseUrl !== undefined && !databaseUrl.startsWith('postgres')) throw new Error('--database-url takes a postgres:// URL (SQLite is the default)');
  needCommand('valgrind', ['--version'], 'apt-get install valgrind');
  if (chooseGenerator(undefined) !== 'wrk') throw new Error('wrk is not installed (apt-get install wrk)');
  const pinning = choosePinning(true);

  ensureBuilt();
  const startedAt = new Date().toISOString();
  const git = gitState(undefined);
  const redisUrl = values['redis-url'];
  const { dir, postgres, redis, databaseUrl: serviceDatabase, cleanUp } = await runWorkspace('instructions', databaseUrl, redisUrl);
  const store = `${postgres ? 'PostgreSQL' : 'SQLite'}${redis ? ' + Redis' : ''}`;
  // callgrind_control finds a process by a file named after the user and host in its environment: both sides get the same.
  const identity = { USER: process.env.USER || 'bench', HOST: '127.0.0.1' };
  const setup: ServiceSetup = {
    dir,
    env: {
      ...serviceEnvironment({
        dir,
        databaseUrl: serviceDatabase,
        csv: values.csv,
        ...(redis ? { redisUrl, redisPrefix: redis.prefix } : {}),
        extra: PERIODIC,
      }),
      ...identity,
    },
    nodeFlags: [],
    cpus: pinning?.server,
  };
  const keys = await issueKeys(setup, KEY_COUNT);
  const rotation = createRotation(currentCurrencies(values.csv), keys);
  const control = (server: Server, ...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(server.child.pid)], { env: { ...process.env, ...identity }, stdio: 'ignore' });
  const run = (server: Server, scenario: Scenario, runSeconds: number): LoadRun => ({
    generator: 'wrk',
    cpus: pinning?.generator,
    connections,
    seconds: runSeconds,
    port: server.port,
    pid: server.child.pid,
    request: (n) => scenario.request(n, rotation),
  });
  // --perf-basic-prof also turns on V8's log, written to the working directory (the baseline's is
  // the project's): into the run's folder instead, removed at the end.
  const perfMap = functions > 0 ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] : [];
  const callgrind = (out: string) => ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(dir, out)}`];

  /** Warm-up, then a measured run counted; `dump` is the number of the dump this makes. */
  async function counted(server: Server, scenario: Scenario, out: string, dump: number): Promise<Row> {
    console.log(`instructions: ${scenario.name}: warm-up ${warmup} s, measure ${seconds} s`);
    await warmUp(run(server, scenario, warmup));
    // The service's own count of its Redis commands, read outside the counted run.
    const before = redis && !scenario.baseline ? await serviceCounters(server) : undefined;
    control(server, '--zero');
    control(server, '--instr=on');
    const measured = await measure(run(server, scenario, seconds));
    control(server, '--instr=off');
    control(server, '--dump');
    const after = before ? await serviceCounters(server) : undefined;
    // With --separate-threads, dump n of the main thread (thread 1) is <out>.<n>-01.
    const text = readFileSync(join(dir, `${out}.${dump}-01`), 'utf8');
    const instructions = Number(/^totals: (\d+)/m.exec(text)?.[1]);
    if (!measured.responses || !Number.isFinite(instructions)) throw new Error(`${scenario.name}: no count (responses ${measured.responses})`);
    // A slow moment under valgrind can outlast wrk's timeout; what was answered still counts.
    if (measured.non2xx > 0 || measured.socketErrors > 0) throw new Error(`${scenario.name}: ${measured.errors} errors under load\n${server.output()}`);
    if (measured.timeouts > 0) console.log(`instructions:   ${measured.timeouts} requests timed out (not counted)`);
    const row: Row = { name: scenario.name, responses: measured.responses, instructions, perRequest: Math.round(instructions / measured.responses) };
    if (before && after) row.redisPerRequest = redisCommandsPerRequest(before, after, measured.responses);
    const redisNote = row.redisPerRequest === undefined ? '' : `, ${row.redisPerRequest} Redis commands per request`;
    console.log(`instructions:   ${row.perRequest} per request (${measured.responses} responses${redisNote})`);
    if (functions > 0) {
      const costs = selfCosts(text, readPerfMap(`/tmp/perf-${server.child.pid}.map`));
      row.functions = [...costs]
        .sort((a, b) => b[1] - a[1])
        .slice(0, functions)
        .map(([name, cost]) => [name, Math.round(cost / measured.responses)]);
    }
    return row;
  }

  const rows: Row[] = [];
  try {
    const sample = await loadHistory(setup, keys[0]!);
    console.log(`instructions: node ${process.version}, git ${gitLabel(git)}, store ${store}; starting the baseline under callgrind`);
    const baselines: Array<[string, Record<string, string> | undefined]> = [['baseline', undefined]];
    if (values['baseline-headers']) baselines.push([REFERENCE_ROW, sample.headers]);
    for (const [name, headers] of baselines) {
      const out = `${name.replace(/\W/g, '-')}.out`;
      const baseline = await startBaseline(sample.body, pinning?.server, { wrap: callgrind(out), nodeArgs: perfMap, env: identity, timeoutMs: START_TIMEOUT_MS, ...(headers ? { headers } : {}) });
      try {
        rows.push({ ...(await counted(baseline, baselineScenario, out, 1)), name });
      } finally {
        await stopChild(baseline.child, 60_000);
        rmSync(`/tmp/perf-${baseline.child.pid}.map`, { force: true });
      }
    }
    console.log('instructions: starting the service under callgrind');
    const service = await startService(setup, perfMap, {}, callgrind('service.out'));
    try {
      await serviceReady(service, keys[0]!, START_TIMEOUT_MS);
      for (const [i, scenario] of scenarios.entries()) rows.push(await counted(service, scenario, 'service.out', i + 1));
    } finally {
      await stopChild(service.child, 60_000);
      rmSync(`/tmp/perf-${service.child.pid}.map`, { force: true });
    }
  } finally {
    await cleanUp();
  }

  const base = rows[0]!.perRequest;
  for (const row of rows) row.ratio = Math.round((row.perRequest / base) * 1000) / 1000;
  console.log(
    `\ninstructions per request, main thread (callgrind), node ${process.version}, git ${gitLabel(git)}, store ${store}, ${connections} connections, ${seconds} s measured after ${warmup} s`,
  );
  const redisColumn = (text: string) => (redis ? text.padStart(14) : '');
  console.log(`${'scenario'.padEnd(22)}${'per request'.padStart(12)}${'× baseline'.padStart(12)}${'responses'.padStart(11)}${redisColumn('Redis cmd/req')}`);
  for (const row of rows) {
    const redisCell = redisColumn(row.redisPerRequest === undefined ? '–' : String(row.redisPerRequest));
    console.log(`${row.name.padEnd(22)}${String(row.perRequest).padStart(12)}${row.ratio!.toFixed(3).padStart(12)}${String(row.responses).padStart(11)}${redisCell}`);
  }
  for (const row of rows) {
    if (!row.functions) continue;
    console.log(`\n${row.name}: instructions per request by function (self)`);
    for (const [name, cost] of row.functions) console.log(`${String(cost).padStart(8)}  ${name.length > 110 ? `${name.slice(0, 107)}...` : name}`);
  }
  const file = writeResult(RESULTS_DIR, 'instructions-', startedAt, git.commit, {
    node: process.version,
    ...git,
    store,
    connections,
    warmupSeconds: warmup,
    seconds,
    keys: KEY_COUNT,
    periodic: PERIODIC,
    rows,
  });
  console.log(`instructions: written to ${file}`);
}

runMain('instructions', main);
