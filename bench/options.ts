/**
 * The bench's options, defined once: this table is what `npm run bench -- --help` prints and what
 * the rest of the bench reads. Commander (already the CLI's parser) gives the help text, the
 * environment fallbacks and the checks.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { fileURLToPath } from 'node:url';

export const DEFAULT_CSV = fileURLToPath(new URL('../../shared/data/ecb/eurofxref-hist.csv', import.meta.url));

/** A whole number of at least `min` (wrk takes whole seconds). */
export const whole = (min: number) => (value: string) => {
  const number = Number(value);
  if (value.trim() === '' || !Number.isInteger(number) || number < min) throw new InvalidArgumentError(`a whole number of ${min} or more is needed.`);
  return number;
};

/** One NAME=VALUE added to those before it (`--env`). */
function nameValue(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('NAME=VALUE is needed.');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

const OPTIONS: Option[] = [
  new Option('--duration <seconds>', 'measured seconds per row').env('BENCH_DURATION').argParser(whole(1)).default(10),
  new Option('--warmup <seconds>', 'warm-up seconds per row, not measured').env('BENCH_WARMUP').argParser(whole(1)).default(3),
  new Option('--settle <seconds>', "load after each server's start, not measured: the full collections of a process's first seconds under load belong to the start")
    .env('BENCH_SETTLE')
    .argParser(whole(0))
    .default(20),
  new Option('--rounds <n>', "rounds that give each row's ratio to the baseline (their median), the two measured in turn").env('BENCH_ROUNDS').argParser(whole(1)).default(5),
  new Option('--round-seconds <seconds>', 'measured seconds of each server in a round').env('BENCH_ROUND_SECONDS').argParser(whole(1)).default(2),
  new Option('--connections <n>', 'concurrent connections, one request at a time each (the targets are for 50)').env('BENCH_CONNECTIONS').argParser(whole(1)).default(50),
  new Option('--only <names>', 'only these scenarios, comma-separated (see --list); the baselines always run'),
  new Option('--list', 'list the scenarios and exit'),
  new Option('--workers <n>', 'rate again with EXRATES_WORKERS=n (row rate@nw); 1 skips it').env('BENCH_WORKERS').argParser(whole(1)).default(2),
  new Option('--no-cold-start', 'skip the cold-start measurement'),
  new Option('--no-pin', 'let the kernel place the processes (by default, with 2 CPUs or more and taskset: servers on CPU 0, wrk on CPU 1)'),
  new Option('--env <name=value>', "an extra variable in the service's environment (repeatable)").argParser(nameValue),
  new Option('--database-url <url>', 'with --redis-url: rate again on this PostgreSQL (a schema of its own, dropped at the end) and Redis (row rate@redis)').env('BENCH_DATABASE_URL'),
  new Option('--redis-url <url>', "the Redis of that row (a key prefix of the run's own, deleted at the end)").env('BENCH_REDIS_URL'),
  new Option('--csv <path>', 'the ECB history to load').env('BENCH_ECB_CSV').default(DEFAULT_CSV, '../shared/data/ecb/eurofxref-hist.csv'),
];

/** What OPTIONS parse to, by Commander's names. */
export type BenchOptions = Record<'duration' | 'warmup' | 'settle' | 'rounds' | 'roundSeconds' | 'connections' | 'workers', number> &
  Record<'coldStart' | 'pin', boolean> &
  Partial<Record<'only' | 'databaseUrl' | 'redisUrl', string>> & { list?: boolean; env?: Record<string, string>; csv: string };

/** Parses the command line (printing the help and exiting on --help or a bad option). */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const program = new Command('npm run bench --')
    .description('Measures the service against two bare Fastify routes on the same runtime, in one run, and checks the performance targets.')
    .showHelpAfterError()
    .allowExcessArguments(false);
  for (const option of OPTIONS) program.addOption(option);
  program.parse(argv, { from: 'user' });
  const options = program.opts<BenchOptions>();
  if ((options.databaseUrl === undefined) !== (options.redisUrl === undefined)) program.error('--database-url and --redis-url go together (the row on PostgreSQL + Redis)');
  return options;
}
