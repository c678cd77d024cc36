/**
 * The bench's options, defined once: this table is what `npm run bench -- --help` prints and what
 * the rest of the bench reads. Commander (already the CLI's parser) gives the help text, the
 * environment fallbacks and the checks, so nothing here repeats them.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { fileURLToPath } from 'node:url';

export const DEFAULT_CSV = fileURLToPath(new URL('../../shared/data/ecb/eurofxref-hist.csv', import.meta.url));

function positive(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('a positive number is needed.');
  return number;
}

function nonNegative(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || value.trim() === '') throw new InvalidArgumentError('a number of 0 or more is needed.');
  return number;
}

function positiveInteger(value: string): number {
  const number = positive(value);
  if (!Number.isInteger(number)) throw new InvalidArgumentError('a positive integer is needed.');
  return number;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** One NAME=VALUE added to those before it (`--env`). */
export function nameValue(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('NAME=VALUE is needed.');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

const OPTIONS: Option[] = [
  new Option('--duration <seconds>', 'measured seconds per scenario').env('BENCH_DURATION').argParser(positive).default(10),
  new Option('--warmup <seconds>', 'warm-up seconds per scenario, not measured').env('BENCH_WARMUP').argParser(positive).default(3),
  new Option(
    '--settle <seconds>',
    "load after each server's start, before its first scenario, not measured: V8 sizes its heap in a process's first seconds under load, and the full collections of those seconds belong to the start, not to a scenario (0: none)",
  )
    .env('BENCH_SETTLE')
    .argParser(nonNegative)
    .default(20),
  new Option('--rounds <n>', "rounds that give each row's ratio to the baseline: the median of theirs, each round the baseline and the service measured in turn")
    .env('BENCH_ROUNDS')
    .argParser(positiveInteger)
    .default(5),
  new Option('--round-seconds <seconds>', 'measured seconds of each server in a round').env('BENCH_ROUND_SECONDS').argParser(positiveInteger).default(2),
  new Option('--connections <n>', 'concurrent connections, one request at a time each (the targets are for 50)')
    .env('BENCH_CONNECTIONS')
    .argParser(positiveInteger)
    .default(50),
  new Option('--only <names>', 'only these scenarios, comma-separated (see --list); the baseline always runs'),
  new Option('--list', 'list the scenarios and exit'),
  new Option('--workers <n>', 'rate, convert and mixed again with EXRATES_WORKERS=n (rows name@nw); 1 skips them')
    .env('BENCH_WORKERS')
    .argParser(positiveInteger)
    .default(2),
  new Option('--generator <name>', 'load generator (default: wrk when installed, else autocannon)').env('BENCH_GENERATOR').choices(['wrk', 'autocannon']),
  new Option('--no-cold-start', 'skip the cold-start measurement'),
  new Option(
    '--no-baseline-headers',
    "skip the row baseline+headers: the baseline sending a rate answer's header lines as well (12 against 2), compared with the baseline in rounds like a service row, never judged",
  ),
  new Option('--no-pin', 'let the kernel place the processes (by default, with 2 CPUs or more and taskset: the server on CPU 0, the load generator on CPU 1; the runs with several workers on every CPU)'),
  new Option('--cpu-prof', 'profile the service under load (node --cpu-prof) and print where its time went'),
  new Option('--node-flag <flag>', 'an extra node flag for the service, after its own (repeatable; --node-flag=--trace-gc)').argParser(collect),
  new Option('--service-log <file>', "append the service's output to this file"),
  new Option('--env <name=value>', "an extra variable in the service's environment (repeatable)").argParser(nameValue),
  new Option('--database-url <url>', 'a PostgreSQL database instead of a temporary SQLite file (the bench works in a schema of its own, dropped at the end)').env(
    'BENCH_DATABASE_URL',
  ),
  new Option('--redis-url <url>', "EXRATES_REDIS_URL for the service (under a key prefix of the run's own, deleted at the end)").env('BENCH_REDIS_URL'),
  new Option('--compare-sqlite', 'with --database-url or --redis-url: the service scenarios again on a temporary SQLite file without Redis, in the same run (rows name@sqlite), and the ratio printed'),
  new Option('--csv <path>', 'the ECB history to load').env('BENCH_ECB_CSV').default(DEFAULT_CSV, '../shared/data/ecb/eurofxref-hist.csv'),
  new Option('--commit <name>', 'the commit to record, for a copy of the tree without .git (default: git rev-parse)').env('BENCH_GIT_LABEL'),
  new Option('--keep', "keep the run's temporary folder"),
];

export interface BenchOptions {
  duration: number;
  warmup: number;
  settle: number;
  rounds: number;
  roundSeconds: number;
  connections: number;
  only?: string;
  list?: boolean;
  workers: number;
  generator?: 'wrk' | 'autocannon';
  coldStart: boolean;
  baselineHeaders: boolean;
  pin: boolean;
  cpuProf?: boolean;
  nodeFlag?: string[];
  serviceLog?: string;
  env?: Record<string, string>;
  databaseUrl?: string;
  redisUrl?: string;
  compareSqlite?: boolean;
  csv: string;
  commit?: string;
  keep?: boolean;
}

/** Parses the command line (printing the help and exiting on --help or a bad option). */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const program = new Command('npm run bench --')
    .description('Measures the service against a bare Fastify route on the same runtime, in one run, and checks the performance targets.')
    .showHelpAfterError()
    .allowExcessArguments(false);
  for (const option of OPTIONS) program.addOption(option);
  program.parse(argv, { from: 'user' });
  return program.opts<BenchOptions>();
}
