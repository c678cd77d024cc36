/**
 * `npm run bench`: the service against two bare Fastify routes, in one run, on the runtime that
 * runs the bench. Options: `npm run bench -- --help`. What a run does: docs/performance.md.
 */
import { join, relative } from 'node:path';
import { measure, requireWrk, round, warmUp, type LoadRun, type Measurement } from './load.js';
import { parseOptions } from './options.js';
import { choosePinning, killAll, stopChild } from './processes.js';
import { REFERENCE_ROW, RESULTS_DIR, gitState, machineOf, judge, judgeRun, renderRun, resultsDirOf, writeRun, type Round, type Row, type Run } from './report.js';
import { machineBusyFor, processMemory } from './sampling.js';
import { SCENARIOS, VARIANT_SCENARIOS, createRotation, currentCurrencies, scenarioEnvironment, selectScenarios, type Scenario } from './scenarios.js';
import { ensureBuilt, ROOT } from '../test/support/processes.js';
import { coldStart, issueKeys, loadHistory, runWorkspace, serviceCounters, serviceEnvironment, serviceNodeFlags, serviceReady, startBaseline, startService, stopBaseline, storeFigures, type Server, type ServiceSetup, type StoreFigures } from './servers.js';

const KEY_COUNT = 1000;
const COLD_STARTS = 3;

/** A service started once for some rows: plain (judged), with several workers (wrk on every CPU too), or on PostgreSQL + Redis (keys of its own). */
type Variant = { suffix: string; description: string; setup: ServiceSetup; wrkCpus?: string; scenarios: Scenario[]; keys: string[] };

const pick = <T, K extends keyof T>(from: T, ...names: K[]) => Object.fromEntries(names.map((name) => [name, from[name]])) as Pick<T, K>;

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.list) {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(22)} ${s.standard ? '' : '(only with --only) '}${s.description}`);
    return;
  }
  requireWrk();
  const startedAt = new Date();
  const pinning = choosePinning(options.pin);
  const selected = selectScenarios(options.only);
  const baselineScenario = selected.find((s) => s.baseline)!;
  const serviceScenarios = selected.filter((s) => !s.baseline);
  const variantScenarios = serviceScenarios.filter((s) => VARIANT_SCENARIOS.includes(s.name));
  const currencies = currentCurrencies(options.csv);
  const keys: string[] = [];
  const rotation = createRotation(currencies, keys);

  await ensureBuilt();
  const busy = await machineBusyFor(1000);
  const { dir, cleanUp, redis } = await runWorkspace(options.databaseUrl, options.redisUrl);
  // A row of range=max needs every year kept: the service of such a run keeps them for every row.
  const extra = scenarioEnvironment(selected, options.env ?? {});
  const setup: ServiceSetup = { dir, env: serviceEnvironment({ databaseUrl: `sqlite:${join(dir, 'bench.db')}`, csv: options.csv, extra }), cpus: pinning?.server };
  const variants: Variant[] = [{ suffix: '', description: '', setup, wrkCpus: pinning?.generator, scenarios: serviceScenarios, keys }];
  if (options.workers > 1 && variantScenarios.length > 0) {
    variants.push({ suffix: `@${options.workers}w`, description: `, EXRATES_WORKERS=${options.workers}`, setup: { ...setup, cpus: pinning?.all, env: { ...setup.env, EXRATES_WORKERS: String(options.workers) } }, wrkCpus: pinning?.all, scenarios: variantScenarios, keys });
  }
  if (redis && variantScenarios.length > 0) {
    const env = serviceEnvironment({ databaseUrl: redis.databaseUrl, csv: options.csv, redisUrl: redis.redisUrl, redisPrefix: redis.prefix, extra });
    variants.push({ suffix: '@redis', description: ', PostgreSQL + Redis', setup: { ...setup, env }, wrkCpus: pinning?.generator, scenarios: variantScenarios, keys: [] });
  }
  console.log(`bench: node ${process.version}, ${options.connections} connections, ${KEY_COUNT} keys, ${pinning ? `servers on CPU ${pinning.server}, wrk on CPU ${pinning.generator}` : 'not pinned'}`);
  if (busy > 25) console.log(`bench: WARNING: the machine is already ${busy} % busy: results will be low and noisy`);

  const rows: Row[] = [];
  const stores: StoreFigures[] = [];
  const coldStartsMs: number[] = [];
  let peak: { hwmMb: number; afterRunsMb: number } | undefined;
  let baseline: Server | undefined;
  /** baseline+headers, kept for the rounds of the service's rows. */
  let reference: Server | undefined;

  const loadRun = (scenario: Scenario, server: Server, seconds: number, cpus = pinning?.generator): LoadRun => ({
    cpus,
    connections: options.connections,
    seconds,
    port: server.port,
    pid: server.child.pid,
    request: (n) => scenario.request(n, rotation),
  });
  /** Load after a server's start, not measured (--settle). */
  async function settle(scenario: Scenario, server: Server, cpus?: string): Promise<void> {
    if (options.settle > 0) await warmUp(loadRun(scenario, server, options.settle, cpus));
  }
  /** Warm-up, the measured run, then the rounds against the references. */
  async function row(scenario: Scenario, server: Server, fields: Pick<Row, 'name' | 'description' | 'server' | 'variant'>, cpus?: string): Promise<Row> {
    console.log(`bench: ${fields.name}: warm-up ${options.warmup} s, measure ${options.duration} s, ${fields.server === 'baseline' ? 'no rounds' : `${options.rounds} rounds`}`);
    await warmUp(loadRun(scenario, server, options.warmup, cpus));
    const before = fields.server === 'service' ? await serviceCounters(server) : undefined;
    const measured: Row = { ...fields, ...(await measure(loadRun(scenario, server, options.duration, cpus))) };
    if (before) {
      const after = await serviceCounters(server);
      if (fields.variant === '@redis') measured.redisCommandsPerRequest = round((after.redisCommands - before.redisCommands) / measured.responses, 3);
      measured.fullCollections = after.fullCollections - before.fullCollections;
      measured.collectionPct = round(((after.collectionSeconds - before.collectionSeconds) / options.duration) * 100, 1);
    }
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server died during ${fields.name}\n${server.output()}`);
    if (fields.server !== 'baseline' && baseline) {
      // Each round measures the row's server and the references it is compared with, a few
      // seconds each, in an order that turns from round to round: a service row against both the
      // bare baseline and baseline+headers, so that each ratio it is judged by is measured directly.
      const rounds: Round[] = [];
      const compared = fields.server === 'service' ? reference : undefined;
      const servers = [baseline, ...(compared ? [compared] : []), server];
      for (let i = 0; i < options.rounds; i++) {
        const figures = new Map<Server, Measurement>();
        for (let k = 0; k < servers.length; k++) {
          const next = servers[(i + k) % servers.length]!;
          figures.set(next, await measure(next === server ? loadRun(scenario, server, options.roundSeconds, cpus) : loadRun(baselineScenario, next, options.roundSeconds)));
        }
        const [base, own, headers] = [figures.get(baseline)!, figures.get(server)!, compared && figures.get(compared)];
        rounds.push({
          requestsPerSecond: own.requestsPerSecond,
          cpuPerRequestUs: own.cpuPerRequestUs,
          baselineRequestsPerSecond: base.requestsPerSecond,
          baselineCpuPerRequestUs: base.cpuPerRequestUs,
          ...(headers ? { headersRequestsPerSecond: headers.requestsPerSecond } : {}),
        });
      }
      measured.rounds = rounds;
    }
    console.log(`bench:   ${measured.requestsPerSecond} req/s, ${measured.cpuPerRequestUs ?? '?'} µs CPU/req, p99 ${measured.latencyMs.p99} ms, errors ${measured.errors}`);
    return measured;
  }

  try {
    keys.push(...(await issueKeys(setup, KEY_COUNT)));
    const sample = await loadHistory(setup, keys[0]!);
    stores.push(await storeFigures(setup, sample.ms));
    if (redis) {
      // The same first load on PostgreSQL, into the schema the row on PostgreSQL + Redis then serves from.
      const postgres = { ...setup, env: serviceEnvironment({ databaseUrl: redis.databaseUrl, csv: options.csv, extra }) };
      const loaded = await loadHistory(postgres, (await issueKeys(postgres, 1))[0]!);
      stores.push(await storeFigures(postgres, loaded.ms));
    }
    for (const store of stores) console.log(`bench: first load on ${store.database}: ${store.firstLoadMs} ms, ${store.rows} rows, ${store.bytes} bytes`);
    // The baselines answer the service's own rate body, so that the sizes match; baseline+headers
    // sends its header lines too: what the wire format's headers cost any server.
    baseline = await startBaseline(sample.body, pinning?.server);
    await settle(baselineScenario, baseline);
    rows.push(await row(baselineScenario, baseline, { name: 'baseline', description: baselineScenario.description, server: 'baseline' }));
    reference = await startBaseline(sample.body, pinning?.server, sample.headers);
    await settle(baselineScenario, reference);
    rows.push(await row(baselineScenario, reference, { name: REFERENCE_ROW, description: "the baseline sending a rate answer's header lines too", server: 'reference' }));

    if (options.coldStart) {
      for (let i = 0; i < COLD_STARTS; i++) coldStartsMs.push(await coldStart(setup, keys[i]!));
      console.log(`bench: cold start: ${coldStartsMs.map(Math.round).join(', ')} ms`);
    }

    for (const variant of variants) {
      if (variant.keys.length === 0) variant.keys.push(...(await issueKeys(variant.setup, KEY_COUNT)));
      keys.splice(0, keys.length, ...variant.keys);
      const server = await startService(variant.setup);
      try {
        await serviceReady(server, keys[0]!, 120_000);
        await settle(variant.scenarios[0]!, server, variant.wrkCpus);
        for (const scenario of variant.scenarios) {
          const fields = { name: `${scenario.name}${variant.suffix}`, description: `${scenario.description}${variant.description}`, server: 'service' as const, ...(variant.suffix ? { variant: variant.suffix } : {}) };
          rows.push(await row(scenario, server, fields, variant.wrkCpus));
        }
        if (variant.suffix === '') {
          const memory = processMemory(server.child.pid!);
          peak = { hwmMb: memory.hwmMb, afterRunsMb: memory.rssMb };
        }
      } finally {
        await stopChild(server.child, 30_000);
      }
    }
  } finally {
    if (reference) await stopBaseline(reference);
    if (baseline) await stopBaseline(baseline);
    killAll();
    await cleanUp();
  }

  judge(rows, options.connections);
  const git = gitState(ROOT);
  const nodeFlags = serviceNodeFlags(setup);
  const result: Run = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    runtime: process.version,
    ...git,
    machine: { ...machineOf(), busyBeforePct: busy },
    setup: {
      ...pick(options, 'connections', 'duration', 'warmup', 'settle', 'rounds', 'roundSeconds'),
      pinned: pinning ? `servers on CPU ${pinning.server}, wrk on CPU ${pinning.generator}, several workers on CPUs ${pinning.all}` : 'no',
      keys: KEY_COUNT,
      currencies: currencies.length,
      serviceEnv: extra,
      nodeFlags,
    },
    rows,
    stores,
    ...judgeRun(peak, nodeFlags, coldStartsMs),
  };
  console.log(`\n${renderRun(result)}`);
  const file = writeRun(result);
  const keep = resultsDirOf(result) === RESULTS_DIR ? "replace this runtime's file in bench/results/ with it and run npm run docs:performance" : 'run npm run docs:performance';
  console.log(`bench: written to ${relative(ROOT, file)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s); to keep it, ${keep}`);
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAll();
  process.exitCode = 1;
});
