/**
 * `npm run bench:instructions`: the instructions the CPU runs per request, counted by valgrind's
 * callgrind, for the service (with its engine workarounds, and without: `@plain`) and for
 * baseline+headers, on the runtime that runs it. A count does not move with what else the machine
 * does, where requests/s on a shared machine move by 10 % and more from process to process, so
 * it tells apart effects of a few per cent that `npm run bench` cannot: what each workaround in
 * src/workarounds.ts buys (docs/performance.md, "Workarounds and what each buys").
 *
 * Each server runs under callgrind with counting off; a warm-up (not counted) lets the JIT settle,
 * and the service runs a full collection while it is idle (collectGarbage); then each row counts exactly
 * `--requests` requests, 50 at a time on keep-alive connections, and divides. Threads are counted
 * apart: the main thread's figure without libuv's timers and immediates is the request path's
 * (`untimed`: the service's work of every few milliseconds or every second runs there, and weighs
 * some 50 times more per request under callgrind than at full speed; see bench/callgrind.ts); the
 * whole main thread's includes it, all threads' adds the collector's and compiler's background work.
 *
 * With `--cache-sim <MB>`, callgrind also simulates a last-level cache of that size and counts the
 * main thread's misses in it per request: on a host whose cache other machines share, each costs a
 * trip to memory, and a request that allocates more or reads more memory misses more.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join, relative } from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULT_CSV, whole } from './options.js';
import { killAll, stopChild } from './processes.js';
import { callCosts, TIMED_PHASES } from './callgrind.js';
import { INSTRUCTIONS_DIR, renderInstructionRun, type InstructionFigures, type InstructionRow, type InstructionRun } from './instruction-report.js';
import { PLAIN_VARIANT, REFERENCE_ROW, gitState, machineOf, median, writeResults } from './report.js';
import { SCENARIOS, createRotation, currentCurrencies, type Rotation, type Scenario } from './scenarios.js';
import { issueKeys, loadHistory, runWorkspace, serviceEnvironment, serviceReady, startBaseline, startService, stopBaseline, type Server } from './servers.js';
import { ensureBuilt, ROOT } from '../test/support/processes.js';

const KEY_COUNT = 1000;
const CONNECTIONS = 50;
/** The rows counted on the service, each also on the service without its workarounds. */
const ROWS = ['rate', 'convert'];

function parseOptions(argv: readonly string[]): { requests: number; counts: number; warmup: number; cacheSim?: number; csv: string } {
  const program = new Command('npm run bench:instructions --')
    .description('Counts the instructions per request of the service, with and without its engine workarounds, and of baseline+headers, under valgrind (callgrind).')
    .addOption(new Option('--requests <n>', 'requests counted per row').argParser(whole(1)).default(5000))
    .addOption(new Option('--counts <n>', "counts of each row, in turn with the server's other rows: its figures are their medians").argParser(whole(1)).default(3))
    .addOption(new Option('--warmup <n>', 'requests before the first count of each server (its rows in turn), not counted').argParser(whole(1)).default(20000))
    .addOption(
      new Option('--cache-sim <MB>', "also simulate a last-level cache of this size (16-way, 64-byte lines) and count its misses per request: a small one stands for a host whose cache other machines share").argParser(whole(1)),
    )
    .addOption(new Option('--csv <path>', 'the ECB history to load').env('BENCH_ECB_CSV').default(DEFAULT_CSV, '../shared/data/ecb/eurofxref-hist.csv'))
    .allowExcessArguments(false);
  program.parse(argv, { from: 'user' });
  return program.opts();
}

/** Fails with what to do when valgrind is not installed; its version otherwise. */
function requireValgrind(): string {
  const result = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error('the instruction count needs valgrind (apt-get install valgrind)');
  return result.stdout.trim();
}

/** A server under callgrind, counting off until told, each thread's counts dumped apart. */
class Counted {
  readonly outFile: string;
  readonly prefix: string;
  constructor(
    readonly dir: string,
    readonly name: string,
    /** HOST as the counted process sees it: callgrind_control finds the process by it. */
    readonly host: string | undefined,
    /** The simulated last-level cache, in MB (none: no cache simulation). */
    readonly cacheMb?: number,
  ) {
    this.outFile = join(dir, `${name}.callgrind`);
    this.prefix = join(dir, `${name}.vgdb`);
  }

  get wrap(): string[] {
    const cache = this.cacheMb === undefined ? [] : ['--cache-sim=yes', `--LL=${this.cacheMb * 2 ** 20},16,64`];
    return ['valgrind', '--tool=callgrind', ...cache, '--instr-atstart=no', '--separate-threads=yes', '--smc-check=all-non-file', `--vgdb-prefix=${this.prefix}`, `--callgrind-out-file=${this.outFile}`];
  }

  private control(pid: number, ...args: string[]): void {
    const env = { ...process.env };
    if (this.host === undefined) delete env.HOST;
    else env.HOST = this.host;
    execFileSync('callgrind_control', [`--vgdb-prefix=${this.prefix}`, ...args, String(pid)], { env, stdio: 'ignore' });
  }

  /** The instructions `work` makes the process run, per thread summed: the main thread's and all; with a cache simulated, the main thread's last-level misses too. */
  async count(pid: number, work: () => Promise<void>): Promise<InstructionFigures> {
    this.control(pid, '-i', 'on');
    await work();
    this.control(pid, '-i', 'off');
    this.control(pid, '-d');
    const dumps = () => readdirSync(this.dir).filter((file) => file.startsWith(`${this.name}.callgrind.`));
    const totals = new Map<string, { thread: number; total: number; untimed: number; lastLevelMisses: number; untimedMisses: number }>();
    for (let waited = 0; waited < 30_000; waited += 200) {
      for (const file of dumps()) {
        if (totals.has(file)) continue;
        const text = readFileSync(join(this.dir, file), 'utf8');
        const total = /^totals: ([\d ]+)$/m.exec(text)?.[1];
        if (total === undefined) continue;
        // One figure per event, in the order of the "events:" line: Ir first; with the cache simulated, ILmr, DLmr and DLmw are the last level's misses.
        const events = (/^events: (.+)$/m.exec(text)?.[1] ?? 'Ir').split(' ');
        const figures = total.split(' ').map(Number);
        const timed = callCosts(text, TIMED_PHASES, events.length);
        const of = (event: string, from = figures) => from[events.indexOf(event)] ?? 0;
        const misses = (from: number[]) => of('ILmr', from) + of('DLmr', from) + of('DLmw', from);
        totals.set(file, {
          thread: Number(/^thread: (\d+)$/m.exec(text)?.[1] ?? 1),
          total: of('Ir'),
          untimed: of('Ir') - of('Ir', timed),
          lastLevelMisses: misses(figures),
          untimedMisses: misses(figures) - misses(timed),
        });
      }
      if (totals.size > 0 && totals.size === dumps().length) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const file of dumps()) rmSync(join(this.dir, file));
    if (totals.size === 0) throw new Error(`callgrind wrote no counts for ${this.name}`);
    const values = [...totals.values()];
    const main = values.filter((t) => t.thread === 1);
    const sum = (of: (t: (typeof values)[number]) => number, threads = main) => threads.reduce((total, t) => total + of(t), 0);
    return {
      main: sum((t) => t.total),
      untimed: sum((t) => t.untimed),
      all: sum((t) => t.total, values),
      ...(this.cacheMb === undefined ? {} : { lastLevelMisses: sum((t) => t.lastLevelMisses), untimedMisses: sum((t) => t.untimedMisses) }),
    };
  }
}

/**
 * Makes the service run one full collection while it is idle, as its start does while the history
 * loads and an idle process does on its own: through the inspector, which SIGUSR1 opens (on the
 * port the process prints), and its `HeapProfiler.collectGarbage`. The counts then meet what a
 * long-running process meets: without the nextTick workaround, the state it prevents. Not baseline+headers, which stays the bare route at its best: after such a
 * collection its count, too, grows by a third.
 */
async function collectGarbage(server: Server): Promise<void> {
  let output = '';
  const listening = new Promise<string>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /ws:\/\/\S+/.exec(output)?.[0];
      if (url) {
        server.child.stderr!.off('data', onData);
        resolve(url);
      }
    };
    server.child.stderr!.on('data', onData);
  });
  server.child.kill('SIGUSR1');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the inspector did not open\n${server.output()}`)), 300_000)));
  const url = await Promise.race([listening, timeout]).finally(() => clearTimeout(timer));
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
    socket.addEventListener('message', (event) => {
      if ((JSON.parse(String(event.data)) as { id?: number }).id === 1) resolve();
    });
    socket.addEventListener('error', () => reject(new Error(`the inspector at ${url} failed`)));
  });
  socket.close();
}

/** Each figure of a count, as `figure` makes it (per request, or the median of several). */
function figuresOf(from: InstructionFigures, figure: (value: number, key: keyof InstructionFigures) => number): InstructionFigures {
  return Object.fromEntries(Object.entries(from).map(([key, value]) => [key, figure(value, key as keyof InstructionFigures)])) as unknown as InstructionFigures;
}

/** Exactly `count` requests of a scenario, `CONNECTIONS` at a time on keep-alive connections; any answer but a 200 fails. */
async function load(port: number, scenario: Scenario, rotation: Rotation, count: number, offset: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let next = 0;
  const one = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const { path, headers } = scenario.request(n, rotation);
      httpRequest({ host: '127.0.0.1', port, path, headers, agent }, (response) => {
        response.resume();
        response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`${path}: status ${response.statusCode}`))));
      }).on('error', reject).end();
    });
  const worker = async () => {
    for (let n = next++; n < count; n = next++) await one(offset + n);
  };
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const valgrind = requireValgrind();
  const startedAt = new Date();
  await ensureBuilt();
  const currencies = currentCurrencies(options.csv);
  const keys: string[] = [];
  const rotation = createRotation(currencies, keys);
  const { dir, cleanUp } = await runWorkspace(undefined, undefined);
  const env = serviceEnvironment({ databaseUrl: `sqlite:${join(dir, 'bench.db')}`, csv: options.csv, extra: {} });
  const scenario = (name: string) => SCENARIOS.find((s) => s.name === name)!;
  const rows: InstructionRow[] = [];

  /**
   * Warms a server up on each of its rows in turn (the service twice, before and after its idle
   * collection), then counts each row `--counts` times, in turn:
   * a row's figures are the medians of its counts (the background work of the collector and the
   * compiler comes in lumps, and moves the count of all threads from one count to the next).
   */
  async function countRows(counted: Counted, server: Server, names: readonly string[], rowName: (name: string) => string, kind: InstructionRow['server']) {
    const pid = server.child.pid!;
    const share = Math.ceil(options.warmup / names.length);
    let offset = 0;
    const warmUp = async () => {
      for (const name of names) {
        await load(server.port, scenario(name), rotation, share, offset);
        offset += share;
      }
    };
    await warmUp();
    // The collection drops compiled code and what the code had learned: the warm-up again.
    if (kind === 'service') {
      await collectGarbage(server);
      await warmUp();
    }
    const counts = new Map<string, InstructionFigures[]>(names.map((name) => [name, []]));
    for (let i = 0; i < options.counts; i++) {
      for (const name of names) {
        const totals = await counted.count(pid, () => load(server.port, scenario(name), rotation, options.requests, offset));
        offset += options.requests;
        counts.get(name)!.push(figuresOf(totals, (figure) => Math.round(figure / options.requests)));
      }
    }
    for (const name of names) {
      const figures = counts.get(name)!;
      const perRequest = figuresOf(figures[0]!, (_, key) => median(figures.map((f) => f[key]!)));
      rows.push({ name: rowName(name), server: kind, perRequest, counts: figures });
      const each = (key: keyof InstructionFigures) => `${perRequest[key]} (${figures.map((f) => f[key]).join(', ')})`;
      const missed = perRequest.lastLevelMisses === undefined ? '' : `; last-level misses on the main thread ${each('lastLevelMisses')}, without timers and immediates ${each('untimedMisses')}`;
      console.log(`bench: ${rowName(name)}: instructions/request on the main thread ${each('main')}, without timers and immediates ${each('untimed')}, on all ${each('all')}${missed}`);
    }
  }

  try {
    keys.push(...(await issueKeys({ dir, env }, KEY_COUNT)));
    const sample = await loadHistory({ dir, env }, keys[0]!);
    console.log(`bench: ${valgrind}, node ${process.version}; each server starts under callgrind (a minute or more)`);

    const reference = new Counted(dir, 'reference', process.env.HOST, options.cacheSim);
    const baseline = await startBaseline(sample.body, undefined, sample.headers, reference.wrap);
    try {
      await countRows(reference, baseline, ['baseline'], () => REFERENCE_ROW, 'reference');
    } finally {
      await stopBaseline(baseline);
    }
    for (const [suffix, extra] of [['', {}], [PLAIN_VARIANT, { EXRATES_ENGINE_WORKAROUNDS: 'false' }]] as const) {
      const counted = new Counted(dir, `service${suffix.replace('@', '-')}`, env.HOST, options.cacheSim);
      // The inspector that collectGarbage opens listens on a free port, not on 9229 (added to any NODE_OPTIONS the bench runs with).
      const nodeOptions = [process.env.NODE_OPTIONS ?? '', '--inspect-port=0'].join(' ').trim();
      const server = await startService({ dir, env: { ...env, ...extra, NODE_OPTIONS: nodeOptions }, wrap: counted.wrap });
      try {
        await serviceReady(server, keys[0]!, 900_000);
        await countRows(counted, server, ROWS, (name) => `${name}${suffix}`, 'service');
      } finally {
        await stopChild(server.child, 60_000);
      }
    }
  } finally {
    killAll();
    await cleanUp();
  }

  const reference = rows.find((row) => row.server === 'reference')!;
  for (const row of rows) if (row.server === 'service') row.ratioToHeaders = Math.round((reference.perRequest.untimed! / row.perRequest.untimed!) * 1000) / 1000;
  const run: InstructionRun = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench:instructions${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    runtime: process.version,
    ...gitState(ROOT),
    machine: machineOf(),
    setup: {
      ...{ requests: options.requests, counts: options.counts, warmup: options.warmup, connections: CONNECTIONS, keys: KEY_COUNT, valgrind },
      ...(options.cacheSim === undefined ? {} : { lastLevelCacheMb: options.cacheSim }),
    },
    rows,
  };
  console.log(`\n${renderInstructionRun(run)}`);
  const file = writeResults(INSTRUCTIONS_DIR, run);
  console.log(`bench: written to ${relative(ROOT, file)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s); the newest run of each runtime there is what npm run docs:performance shows`);
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAll();
  process.exitCode = 1;
});
