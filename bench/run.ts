/**
 * `npm run bench`: the service against a bare Fastify baseline, in one run, on the runtime that
 * runs the bench. Options: `npm run bench -- --help` (options.ts). What a run does: README.md.
 */
import { mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { chooseGenerator, measure, warmUp, type LoadRun, type Measurement } from './load.js';
import { parseOptions } from './options.js';
import { choosePinning, killAll, pinProcess, stopChild } from './processes.js';
import { summariseProfile, type ProfileSummary } from './profile.js';
import { REFERENCE_ROW, RESULTS_DIR, gitState, judge, judgeRun, printRun, writeRun, type Round, type Row, type Run } from './report.js';
import { processMemory, machineBusyFor } from './sampling.js';
import { SCENARIOS, WORKER_SCENARIOS, createRotation, currentCurrencies, selectScenarios, type Scenario } from './scenarios.js';
import {
  ROOT,
  coldStart,
  ensureBuilt,
  issueKeys,
  latencyQuantile,
  loadHistory,
  redisCommandsPerRequest,
  runWorkspace,
  serviceCounters,
  serviceEnvironment,
  serviceReady,
  startBaseline,
  startService,
  type Server,
  type ServiceSetup,
} from './servers.js';

const KEY_COUNT = 1000;
const COLD_STARTS = 3;

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.list) {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(22)} ${s.standard ? '' : '(only with --only) '}${s.description}`);
    return;
  }
  const startedAt = new Date();
  const git = gitState(options.commit);
  const generator = chooseGenerator(options.generator);
  const pinning = choosePinning(options.pin);
  // autocannon generates the load in this process: it takes the load generator's CPU.
  if (pinning && generator === 'autocannon') pinProcess(process.pid, pinning.generator);
  const selected = selectScenarios(options.only);
  const serviceScenarios = selected.filter((s) => !s.baseline);
  const baselineScenario = selected.find((s) => s.baseline);
  const workerScenarios = options.workers > 1 ? serviceScenarios.filter((s) => WORKER_SCENARIOS.includes(s.name)) : [];
  const currencies = currentCurrencies(options.csv);
  const keys: string[] = [];
  const rotation = createRotation(currencies, keys);

  const scenarioCount = serviceScenarios.length + workerScenarios.length;
  // The baseline+headers row: a server of its own, compared in rounds like a service row.
  const references = options.baselineHeaders ? 1 : 0;
  const servers = 1 + references + (serviceScenarios.length > 0 ? 1 : 0) + (workerScenarios.length > 0 ? 1 : 0) + (options.compareSqlite && serviceScenarios.length > 0 ? 1 : 0);
  const minutes =
    (servers * options.settle + (1 + references + scenarioCount) * (options.warmup + options.duration) + (references + scenarioCount) * options.rounds * 2 * (options.roundSeconds + 0.3)) / 60;
  console.log(
    `bench: node ${process.version}, git ${git.commit}; ${scenarioCount} service runs, each compared with the baseline in ${options.rounds} rounds, ${options.connections} connections, about ${Math.ceil(minutes + 0.5)} min`,
  );
  console.log(`bench: ${currencies.length} currencies, ${KEY_COUNT} keys, ECB history ${relative(ROOT, options.csv)}, load generator ${generator}, ${pinning ? `server on CPU ${pinning.server}, load generator on CPU ${pinning.generator}` : 'not pinned to CPUs'}`);
  ensureBuilt();
  const busy = await machineBusyFor(1000);
  if (busy !== undefined && busy > 25) console.log(`bench: WARNING: the machine is already ${busy}% busy before the bench starts: results will be low and noisy`);

  const { dir, postgres, redis, databaseUrl, cleanUp } = await runWorkspace('bench', options.databaseUrl, options.redisUrl, { keep: options.keep });
  const setup: ServiceSetup = {
    dir,
    env: serviceEnvironment({
      dir,
      databaseUrl,
      csv: options.csv,
      redisUrl: options.redisUrl,
      redisPrefix: redis?.prefix,
      extra: options.env ?? {},
    }),
    nodeFlags: options.nodeFlag ?? [],
    log: options.serviceLog,
    cpus: pinning?.server,
  };

  const rows: Row[] = [];
  const coldStarts: Array<{ totalMs: number; listeningMs: number }> = [];
  let peak: { hwmMb: number; maxSampledMb?: number; afterRunsMb: number } | undefined;
  let profile: ProfileSummary | undefined;
  let baseline: Server | undefined;

  /** A load run; `workers`: the server runs on every CPU, and so may wrk. */
  const loadRun = (scenario: Scenario, server: Server, seconds: number, workers?: number): LoadRun => ({
    generator,
    cpus: workers ? pinning?.all : pinning?.generator,
    connections: options.connections,
    seconds,
    port: server.port,
    pid: server.child.pid,
    request: (n) => scenario.request(n, rotation),
  });
  /** Load after a server's start (--settle), before its first scenario's own warm-up. */
  async function settle(scenario: Scenario, server: Server, workers?: number): Promise<void> {
    if (options.settle <= 0) return;
    console.log(`bench: ${scenario.name}: ${options.settle} s of load to settle the process after its start`);
    await warmUp(loadRun(scenario, server, options.settle, workers));
  }
  /** Warm-up, then the measured run; on Redis and PostgreSQL, what the run cost them. */
  async function run(scenario: Scenario, server: Server, row: Pick<Row, 'name' | 'description' | 'server' | 'workers' | 'sqlite'>): Promise<Row> {
    console.log(`bench: ${row.name}: warm-up ${options.warmup} s, measure ${options.duration} s`);
    await warmUp(loadRun(scenario, server, options.warmup, row.workers));
    const onRedis = redis !== undefined && row.server === 'service' && !row.sqlite;
    const onPostgres = postgres !== undefined && row.server === 'service' && !row.sqlite;
    const countersBefore = row.server === 'service' ? await serviceCounters(server) : undefined;
    const writesBefore = onPostgres ? await postgres.quotaWrites() : 0;
    const measured: Row = { ...row, ...(await measure(loadRun(scenario, server, options.duration, row.workers))) };
    if (countersBefore) {
      const after = await serviceCounters(server);
      if (onRedis) measured.redisCommandsPerRequest = redisCommandsPerRequest(countersBefore, after, measured.responses);
      measured.fullCollections = after.fullCollections - countersBefore.fullCollections;
      measured.collectionPct = Math.round(((after.collectionSeconds - countersBefore.collectionSeconds) / options.duration) * 1000) / 10;
      const inService = latencyQuantile(0.99, countersBefore.apiLatency, after.apiLatency);
      if (inService !== undefined) measured.inServiceP99Ms = Math.round(inService * 100_000) / 100;
    }
    if (onPostgres) {
      // PostgreSQL publishes its table statistics about once a second, and the service flushes quota counts once a second.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      measured.postgresQuotaWritesPerSecond = Math.round(((await postgres.quotaWrites()) - writesBefore) / options.duration);
    }
    console.log(
      `bench:   ${measured.requestsPerSecond} req/s, ${measured.cpuPerRequestUs ?? '?'} µs CPU/req, p99 ${measured.latencyMs.p99} ms, errors ${measured.errors}` +
        `${measured.redisCommandsPerRequest !== undefined ? `, ${measured.redisCommandsPerRequest} Redis commands/req` : ''}` +
        `${measured.fullCollections !== undefined ? `, ${measured.fullCollections} full collections, ${measured.collectionPct}% of the time in collections` : ''}`,
    );
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server died during ${row.name}\n${server.output()}`);
    return measured;
  }
  /**
   * A row's comparison with the baseline: rounds of the baseline and the service measured for a
   * few seconds each, in turn (baseline first, then service first, and so on), so that the host's
   * speed, which drifts by tens of percent within a minute, weighs on both alike. Each round's
   * ratio counts; judge() takes their median.
   */
  async function rounds(scenario: Scenario, server: Server, workers?: number): Promise<Round[] | undefined> {
    if (!baseline || !baselineScenario) return undefined;
    const against = baseline;
    const measured: Round[] = [];
    for (let i = 0; i < options.rounds; i++) {
      const measureBaseline = () => measure(loadRun(baselineScenario, against, options.roundSeconds));
      const measureService = () => measure(loadRun(scenario, server, options.roundSeconds, workers));
      let base: Measurement;
      let service: Measurement;
      if (i % 2 === 0) {
        base = await measureBaseline();
        service = await measureService();
      } else {
        service = await measureService();
        base = await measureBaseline();
      }
      measured.push({
        requestsPerSecond: service.requestsPerSecond,
        baselineRequestsPerSecond: base.requestsPerSecond,
        ...(service.cpuPerRequestUs === undefined ? {} : { cpuPerRequestUs: service.cpuPerRequestUs }),
        ...(base.cpuPerRequestUs === undefined ? {} : { baselineCpuPerRequestUs: base.cpuPerRequestUs }),
      });
    }
    const ratios = measured.map((r) => (r.requestsPerSecond / r.baselineRequestsPerSecond).toFixed(3));
    console.log(`bench:   ${options.rounds} rounds against the baseline, ratios ${ratios.join(', ')}`);
    return measured;
  }
  async function serviceRows(server: Server, scenarios: Scenario[], workers?: number, sqlite?: true): Promise<void> {
    await serviceReady(server, keys[0]!);
    if (scenarios[0]) await settle(scenarios[0], server, workers);
    for (const scenario of scenarios) {
      const name = workers ? `${scenario.name}@${workers}w` : sqlite ? `${scenario.name}@sqlite` : scenario.name;
      const description = workers ? `${scenario.description}, EXRATES_WORKERS=${workers}` : sqlite ? `${scenario.description}, SQLite alone` : scenario.description;
      const row = await run(scenario, server, { name, description, server: 'service', workers, ...(sqlite ? { sqlite } : {}) });
      const compared = await rounds(scenario, server, workers);
      rows.push(compared ? { ...row, rounds: compared } : row);
    }
  }

  try {
    // The keys, then the whole history loaded by a real start of the service.
    keys.push(...(await issueKeys(setup, KEY_COUNT)));
    const t = performance.now();
    const sample = await loadHistory(setup, keys[0]!);
    console.log(`bench: ${keys.length} keys issued, ECB history loaded in ${Math.round(performance.now() - t)} ms`);

    // The baseline answers a real rate body, so that the sizes match; it keeps running, measured
    // again in turn with every service row (rounds).
    if (baselineScenario) {
      baseline = await startBaseline(sample.body, pinning?.server);
      await settle(baselineScenario, baseline);
      rows.push(await run(baselineScenario, baseline, { name: baselineScenario.name, description: baselineScenario.description, server: 'baseline' }));
      if (options.baselineHeaders) {
        // What the wire format's header lines cost a bare route: the same route sending them too.
        const reference = await startBaseline(sample.body, pinning?.server, { headers: sample.headers });
        try {
          await settle(baselineScenario, reference);
          const row = await run(baselineScenario, reference, { name: REFERENCE_ROW, description: "the baseline sending a rate answer's header lines too", server: 'reference' });
          const compared = await rounds(baselineScenario, reference);
          rows.push(compared ? { ...row, rounds: compared } : row);
        } finally {
          reference.child.stdin?.end();
          await stopChild(reference.child);
        }
      }
    }

    if (options.coldStart) {
      for (let i = 0; i < COLD_STARTS; i++) coldStarts.push(await coldStart(setup, keys[i]!));
      console.log(`bench: cold start: ${coldStarts.map((c) => Math.round(c.totalMs)).join(', ')} ms`);
    }

    if (serviceScenarios.length > 0) {
      const profileDir = join(RESULTS_DIR, 'profiles');
      const profileFile = `service-${startedAt.toISOString().replace(/[:.]/g, '-')}.cpuprofile`;
      if (options.cpuProf) mkdirSync(profileDir, { recursive: true });
      const server = await startService(setup, options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', profileFile] : []);
      try {
        await serviceRows(server, serviceScenarios);
        const memory = server.child.pid !== undefined ? processMemory(server.child.pid) : undefined;
        const sampled = Math.max(0, ...rows.filter((r) => r.server === 'service').map((r) => r.serverRssMaxMb ?? 0));
        if (memory) peak = { hwmMb: Math.round(memory.hwmKb / 102.4) / 10, maxSampledMb: sampled || undefined, afterRunsMb: Math.round(memory.rssKb / 102.4) / 10 };
      } finally {
        // Graceful: under --cpu-prof the profile is written at exit.
        await stopChild(server.child, 30_000);
      }
      if (options.cpuProf) {
        try {
          profile = summariseProfile(join(profileDir, profileFile), 15);
        } catch (error) {
          console.error(`bench: could not read the CPU profile: ${String(error)}`);
        }
      }
    }

    if (workerScenarios.length > 0) {
      const server = await startService({ ...setup, cpus: pinning?.all }, [], { EXRATES_WORKERS: String(options.workers) });
      try {
        await serviceRows(server, workerScenarios, options.workers);
      } finally {
        await stopChild(server.child, 30_000);
      }
    }
    if (options.compareSqlite && (postgres || redis) && serviceScenarios.length > 0) {
      // The same scenarios on SQLite alone, in this run: its own file, its own keys.
      const sqliteSetup: ServiceSetup = {
        ...setup,
        env: serviceEnvironment({ dir, databaseUrl: `sqlite:${join(dir, 'compare.db')}`, csv: options.csv, extra: options.env ?? {} }),
      };
      const storeKeys = keys.splice(0, keys.length, ...(await issueKeys(sqliteSetup, KEY_COUNT)));
      const server = await startService(sqliteSetup);
      try {
        await serviceReady(server, keys[0]!, 120_000);
        await serviceRows(server, serviceScenarios, undefined, true);
      } finally {
        await stopChild(server.child, 30_000);
        keys.splice(0, keys.length, ...storeKeys);
      }
    }
    if (baseline) {
      baseline.child.stdin?.end();
      await stopChild(baseline.child);
    }
  } finally {
    killAll();
    await cleanUp();
  }

  judge(rows, options.connections);
  const result: Run = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    runtime: process.version,
    ...git,
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30), platform: `${process.platform} ${process.arch}` },
    setup: {
      connections: options.connections,
      generator: generator === 'wrk' ? 'wrk (1 thread)' : 'autocannon',
      pinned: pinning ? `server on CPU ${pinning.server}, load generator on CPU ${pinning.generator}; rows with workers on CPUs ${pinning.all}` : 'no',
      durationSeconds: options.duration,
      warmupSeconds: options.warmup,
      settleSeconds: options.settle,
      rounds: options.rounds,
      roundSeconds: options.roundSeconds,
      store: `${options.databaseUrl ? 'PostgreSQL (own schema)' : 'SQLite (temporary file)'}${options.redisUrl ? ' + Redis' : ''}`,
      keys: KEY_COUNT,
      currencies: currencies.length,
      serviceEnv: options.env ?? {},
      nodeFlags: options.nodeFlag ?? [],
    },
    rows,
    ...judgeRun(peak, coldStarts),
    profile,
  };
  console.log('');
  printRun(result);
  const file = writeRun(RESULTS_DIR, result);
  console.log(`\nbench: results written to ${relative(ROOT, file)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s in all); commit it if the run is worth keeping`);
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAll();
  process.exitCode = 1;
});
