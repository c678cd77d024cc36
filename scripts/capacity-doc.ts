/**
 * Writes the generated part of docs/capacity.md: the measured inputs and the plan computed from
 * them, from the newest bench run in bench/results/ that measured `rate` on one process, on two
 * workers and on PostgreSQL + Redis, and the newest run of bench/quota-redis.ts; or with --check
 * fails when the committed file differs from what they say.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillBlock, writeOrCheck } from './generated-file.js';
import { RESULTS_DIR, type Row, type Run } from '../bench/report.js';

const target = fileURLToPath(new URL('../docs/capacity.md', import.meta.url));
const QUOTA_REDIS_DIR = join(RESULTS_DIR, 'quota-redis');

/** What bench/quota-redis.ts --save writes. */
interface QuotaRedisRun {
  startedAt: string;
  commit: string;
  node: string;
  clients: number;
  requests: number;
  keys: number;
  rows: Array<{ design: string; redisCallsPerRequest: number; redisMicrosPerRequest: number; processCpuMicrosPerRequest: number }>;
}

/** Peak is this many times the average. */
const PEAK_FACTOR = 3;
/** An instance, or Redis's one thread, is planned at this share of its core. */
const PLANNED_SHARE = 0.6;
const DAYS = [1e9, 1e10];
const SECONDS_A_DAY = 86_400;

const jsonFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []).filter((name) => name.endsWith('.json')).sort();
const whole = (n: number) => Math.round(n).toLocaleString('en-US');
/** Three significant digits, grouped: a figure read from a measurement, not counted. */
const about = (n: number) => Number(n.toPrecision(3)).toLocaleString('en-US');
const inBillions = (n: number) => `${(n / 1e9).toFixed(1)} billion`;
const inMillions = (n: number) => `${whole(n / 1e6)} million`;

function newestBenchRun(): { file: string; run: Run; rate: Row; workers: Row; redis: Row } {
  for (const file of jsonFiles(RESULTS_DIR).reverse()) {
    const run = JSON.parse(readFileSync(join(RESULTS_DIR, file), 'utf8')) as Run;
    const row = (name: string) => run.rows.find((r) => r.name === name && r.cpuPerRequestUs !== undefined);
    const [rate, workers, redis] = [row('rate'), row('rate@2w'), row('rate@redis')];
    if (rate && workers && redis?.redisCommandsPerRequest !== undefined && run.peakRss) return { file, run, rate, workers, redis };
  }
  throw new Error('no run in bench/results/ measures rate, rate@2w and rate@redis with CPU and peak memory');
}

function newestQuotaRedisRun(): { file: string; run: QuotaRedisRun; batched: QuotaRedisRun['rows'][number] } {
  const file = jsonFiles(QUOTA_REDIS_DIR).at(-1);
  if (file === undefined) throw new Error('no run in bench/results/quota-redis/');
  const run = JSON.parse(readFileSync(join(QUOTA_REDIS_DIR, file), 'utf8')) as QuotaRedisRun;
  const batched = run.rows.find((row) => row.design.startsWith('batched'));
  if (!batched) throw new Error(`bench/results/quota-redis/${file}: no row of the batched design`);
  return { file, run, batched };
}

function render(): string {
  const { file, run, rate, workers, redis } = newestBenchRun();
  const quota = newestQuotaRedisRun();
  const cpu = (row: Row) => row.cpuPerRequestUs!;
  const perCore = (micros: number) => PLANNED_SHARE / (micros / 1e6);
  const perDayAtPeak = (perSecond: number) => (perSecond * SECONDS_A_DAY) / PEAK_FACTOR;
  const hwm = run.peakRss!.hwmMb;
  const calls = redis.redisCommandsPerRequest!;
  const redisMicros = quota.batched.redisMicrosPerRequest;
  const instanceRate = perCore(cpu(redis));
  const peaks = DAYS.map((day) => (day / SECONDS_A_DAY) * PEAK_FACTOR);
  const instances = peaks.map((peak) => peak / instanceRate);
  const redisCores = peaks.map((peak) => (peak * redisMicros) / 1e6);
  const busy = run.machine.busyBeforePct === undefined ? '' : ` (${run.machine.busyBeforePct} % busy before it)`;
  return [
    '## Measured inputs',
    '',
    `From the newest recorded bench run with these rows, at \`${run.commit}\` ([JSON](../bench/results/${file}); the command and the whole table:`,
    `[performance.md](performance.md#latest-results)): Node.js ${run.runtime}, ${run.machine.cpus} CPUs${busy}, \`rate\` with ${whole(run.setup.keys)} keys`,
    `rotating, ${run.setup.connections} connections; and Redis's own time in the quota scripts (\`INFO commandstats\`) from the newest run of`,
    `\`bench/quota-redis.ts\` at \`${quota.run.commit}\` ([JSON](../bench/results/quota-redis/${quota.file}); ${quota.run.clients} clients, ${whole(quota.run.keys)} keys).`,
    '',
    '| input | measured |',
    '| --- | ---: |',
    `| service CPU per request, one process on SQLite | ${cpu(rate)} µs |`,
    `| service CPU per request, one process on PostgreSQL + Redis | ${cpu(redis)} µs |`,
    `| service CPU per request, \`EXRATES_WORKERS=2\` on SQLite (main process and workers) | ${cpu(workers)} µs |`,
    `| Redis commands per request, sent by the service | ${calls} |`,
    `| Redis's own time per request in the batched quota scripts (not counting its network work) | ${redisMicros.toFixed(1)} µs |`,
    `| peak resident memory of the service (VmHWM) | ${whole(hwm)} MB |`,
    '',
    '## Quota counting, per deployment',
    '',
    '**One process** (SQLite or PostgreSQL): counts are kept in the process and written to the store',
    `in the background; nothing else to size. At ${cpu(rate)} µs per request one process answers about ${about(perCore(cpu(rate)))}`,
    `requests/s at ${PLANNED_SHARE * 100} % of its core, some ${inMillions(perDayAtPeak(perCore(cpu(rate))))} a day at a peak of ${PEAK_FACTOR} × the average.`,
    '',
    '**Several workers on one machine** (`EXRATES_WORKERS`): the main process keeps the counts for',
    `every worker: ${cpu(workers)} µs of CPU per request over all processes, about ${about(perCore(cpu(workers)))}`,
    `requests/s per core at ${PLANNED_SHARE * 100} %.`,
    '',
    '**Several instances on Redis**: Redis keeps the counts, exact across instances, and the store',
    "takes over while Redis is down. An instance's decisions travel to Redis in batches",
    `(${calls} calls per request at the bench's rate, about ${whole(1 / calls)} requests per call). One Redis carries about`,
    `${about(perCore(redisMicros))} requests/s at ${PLANNED_SHARE * 100} % of its thread (${redisMicros.toFixed(1)} µs each), some ${inBillions(perDayAtPeak(perCore(redisMicros)))} a day.`,
    '',
    '## The plan',
    '',
    'Several instances on Redis, with PostgreSQL as the store:',
    '',
    `| | ${DAYS.map((day) => `${day / 1e9} billion a day`).join(' | ')} |`,
    '| --- | ---: | ---: |',
    `| instances (peak ÷ ${whole(instanceRate)} requests/s) | ${instances.map((n) => `${Math.ceil(n)} (${n.toFixed(1)})`).join(' | ')} |`,
    `| service memory (× ${whole(hwm)} MB) | ${instances.map((n) => `${((Math.ceil(n) * hwm) / 1000).toFixed(1)} GB`).join(' | ')} |`,
    `| Redis time (peak × ${redisMicros.toFixed(1)} µs) | ${redisCores.map((cores) => `${cores.toFixed(2)} of a core: ${cores <= PLANNED_SHARE ? 'one Redis' : 'beyond one Redis'}`).join(' | ')} |`,
    `| Redis script calls/s (peak × ${calls}) | ${peaks.map((peak) => whole(peak * calls)).join(' | ')} |`,
    `| PostgreSQL quota rows/s | ${instances.map((n, i) => `at most ${Math.ceil(n)} × ${i === 0 ? 'the keys each instance serves per second' : 'the same'}`).join(' | ')} |`,
  ].join('\n');
}

const current = readFileSync(target, 'utf8');
writeOrCheck(target, fillBlock(current, 'docs/capacity.md', 'capacity', 'npm run docs:capacity', render()), 'npm run docs:capacity');
