import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judge, judgeRun, renderRun, resultsTable, type Round, type Row, type Run } from '../../bench/report.js';

function row(name: string, requestsPerSecond: number, rounds?: Round[], extra: Partial<Row> = {}): Row {
  return {
    name,
    description: name,
    server: name === 'baseline' ? 'baseline' : name === 'baseline+headers' ? 'reference' : 'service',
    requestsPerSecond,
    latencyMs: { p50: 1, p90: 2, p99: 3, p999: 4, max: 5, mean: 1 },
    responses: requestsPerSecond * 10,
    errors: 0,
    bytesPerResponse: 400,
    serverCpuPct: undefined,
    cpuPerRequestUs: undefined,
    loadGeneratorCpuPct: 50,
    otherCpuPct: undefined,
    stealPct: undefined,
    ...(rounds ? { rounds } : {}),
    ...extra,
  };
}

/** A run of these rows, as a results file holds it. */
const run = (rows: Row[]): Run => ({
  startedAt: '2026-12-07T21:06:41.000Z',
  command: 'npm run bench',
  runtime: 'v26.10.0',
  commit: 'abc1234',
  uncommittedSrcChanges: 0,
  machine: { cpus: 2, cpu: 'test', memoryGb: 24, platform: 'linux x64' },
  setup: { connections: 50, duration: 10, warmup: 3, settle: 20, rounds: 3, roundSeconds: 2, keys: 1000, currencies: 31, pinned: 'no', serviceEnv: {}, nodeFlags: [] },
  rows,
});

/** Rounds in which a server makes `ratio` × the baseline's requests/s, whatever the host's speed (and, given, baseline+headers `headers` × the baseline's). */
const roundsAt = (ratio: number, baselines: number[], headers?: number): Round[] =>
  baselines.map((b) => ({ requestsPerSecond: b * ratio, baselineRequestsPerSecond: b, ...(headers === undefined ? {} : { headersRequestsPerSecond: b * headers }) }));

test('rate and convert are held to baseline+headers measured in the same rounds, history to the bare baseline', () => {
  const rows = [
    row('baseline', 30_000),
    row('baseline+headers', 24_000, roundsAt(0.8, [30_000, 29_000, 31_000])),
    // 0.62 × the baseline while baseline+headers made 0.8 × it: 0.775 × baseline+headers, it holds.
    row('rate', 15_000, roundsAt(0.62, [22_000, 23_000, 21_000], 0.8)),
    // Its rounds saw baseline+headers at 0.9 × the baseline: 0.56 is 0.622 × baseline+headers, it misses
    // (the reference row's own 0.8, measured minutes before, is not what it is held to).
    row('convert', 17_000, roundsAt(0.56, [30_000, 30_000, 30_000], 0.9)),
    row('history-1y-json', 15_000, roundsAt(0.51, [30_000, 30_000, 30_000], 0.9)),
  ];
  judge(rows, 50);
  const [, reference, rate, convert, history] = rows;
  assert.equal(reference!.ratioToBaseline, 0.8);
  assert.equal(reference!.baselineRequestsPerSecond, 30_000);
  assert.equal(reference!.pass, undefined, 'a reference is never judged');
  assert.equal(rate!.ratioToHeaders, 0.775);
  assert.equal(rate!.pass, true);
  assert.equal(convert!.pass, false);
  assert.deepEqual(convert!.failedBecause, ['0.622 × baseline+headers < 0.75']);
  assert.equal(history!.pass, true, 'history is held to the bare baseline: 0.51 ≥ 0.50');
  const line = resultsTable(rows).split('\n').find((l) => l.startsWith('| convert'))!;
  assert.match(line, /\| +0\.560 \| +0\.622 \|/);
  assert.match(line, /FAIL +\|$/);
});

test('the ratio to baseline+headers is the median of the rounds\' own ratios', () => {
  // The host slows in the second round: both servers slow with it, the ratio stays.
  const rounds: Round[] = [
    { requestsPerSecond: 24_000, baselineRequestsPerSecond: 40_000, headersRequestsPerSecond: 30_000 },
    { requestsPerSecond: 12_000, baselineRequestsPerSecond: 20_000, headersRequestsPerSecond: 15_000 },
    { requestsPerSecond: 21_000, baselineRequestsPerSecond: 40_000, headersRequestsPerSecond: 30_000 },
  ];
  const rows = [row('baseline', 40_000), row('rate', 20_000, rounds)];
  judge(rows, 50);
  assert.equal(rows[1]!.ratioToHeaders, 0.8);
  assert.equal(rows[1]!.ratioToBaseline, 0.6);
  assert.equal(rows[1]!.pass, true);
});

test('a row with errors, a p99 over 5 ms or no baseline+headers in its rounds misses its target', () => {
  const slow = { latencyMs: { p50: 1, p90: 2, p99: 6.5, p999: 9, max: 10, mean: 1 } };
  const rows = [row('baseline', 30_000), row('rate', 29_000, roundsAt(0.95, [30_000]), { ...slow, errors: 2 })];
  judge(rows, 50);
  assert.deepEqual(rows[1]!.failedBecause, ['2 errors', 'no baseline+headers in its rounds', 'p99 6.5 ms > 5 ms']);
});

test('rows of several workers, and runs at other connection counts, are measured and not judged', () => {
  const rows = [row('baseline', 30_000), row('baseline+headers', 24_000, roundsAt(0.8, [30_000])), row('rate@2w', 10_000, roundsAt(0.3, [30_000], 0.8), { variant: '@2w' })];
  judge(rows, 50);
  assert.equal(rows[2]!.ratioToHeaders, 0.375);
  assert.equal(rows[2]!.pass, undefined);
  const other = [row('baseline', 30_000), row('rate', 10_000, roundsAt(0.3, [30_000]))];
  judge(other, 100);
  assert.equal(other[1]!.pass, undefined);
});

test('rate on PostgreSQL + Redis is held to the SQLite row by their ratios to baseline+headers, and to its Redis commands per request', () => {
  const rows = () => [
    row('baseline', 30_000),
    row('baseline+headers', 24_000, roundsAt(0.8, [30_000])),
    // 0.56 / 0.8 = 0.7 × baseline+headers on SQLite.
    row('rate', 16_800, roundsAt(0.56, [30_000, 29_000, 31_000], 0.8)),
    // Measured minutes later on a slower host: 0.54 / 0.9 = 0.6 × baseline+headers, 0.857 × the SQLite row.
    row('rate@redis', 12_000, roundsAt(0.54, [20_000, 21_000, 19_000], 0.9), { variant: '@redis', redisCommandsPerRequest: 0.036 }),
  ];
  const holds = rows();
  judge(holds, 50);
  const redis = holds[3]!;
  assert.equal(redis.ratioToHeaders, 0.6);
  assert.equal(redis.ratioToRate, 0.857);
  assert.equal(redis.pass, true);
  assert.match(renderRun(run(holds)), /- rate@redis: 0\.857 × rate on SQLite \(their ratios to baseline\+headers\), 0\.036 Redis commands per request; target ≥ 0\.85 × rate, Redis cmd\/req ≤ 0\.05: \*\*PASS\*\*\./);

  const chatty = rows();
  chatty[3]!.redisCommandsPerRequest = 1;
  chatty[3]!.rounds = roundsAt(0.5, [20_000], 0.9);
  judge(chatty, 50);
  assert.deepEqual(chatty[3]!.failedBecause, ['0.794 × rate < 0.85', '1 Redis cmd/req > 0.05']);
  assert.doesNotMatch(renderRun(run(chatty)), /rate@redis misses/, 'one line says it');

  const alone = rows().filter((r) => r.name !== 'rate');
  judge(alone, 50);
  assert.deepEqual(alone[2]!.failedBecause, ['no rate row with its ratio to baseline+headers']);
});

test('the memory target admits an operator\'s heap sizes and fails on any other node flag', () => {
  const peak = { hwmMb: 200, afterRunsMb: 180 };
  assert.equal(judgeRun(peak, ['--max-semi-space-size=4', '--max-old-space-size=200'], []).peakRss!.pass, true);
  const tuned = judgeRun(peak, ['--max-semi-space-size=4', '--heap-growing-percent=20'], []).peakRss!;
  assert.equal(tuned.pass, false);
  assert.deepEqual(tuned.failedBecause, ['V8-internal flags: --heap-growing-percent=20']);
  assert.deepEqual(judgeRun({ hwmMb: 300, afterRunsMb: 250 }, [], []).peakRss!.failedBecause, ['300 MB > 256 MB']);
  assert.deepEqual(judgeRun(undefined, [], [1400.4, 1600, 900]).coldStart, { runsMs: [1400, 1600, 900], medianMs: 1400, targetMs: 1500, pass: true });
});

test("the flags the memory target judges include the service's NODE_OPTIONS, whether given with --env or inherited from the bench", async () => {
  const { serviceNodeFlags } = await import('../../bench/servers.js');
  const setup = { dir: '/nonexistent', env: { NODE_OPTIONS: ' --max-semi-space-size=16  --heap-growing-percent=20 ' } };
  const flags = serviceNodeFlags(setup);
  assert.deepEqual(flags, ['--max-semi-space-size=16', '--heap-growing-percent=20']);
  assert.deepEqual(judgeRun({ hwmMb: 200, afterRunsMb: 180 }, flags, []).peakRss!.failedBecause, ['V8-internal flags: --heap-growing-percent=20']);
  const inherited = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = '--max-old-space-size=200';
  try {
    assert.deepEqual(serviceNodeFlags({ dir: '/nonexistent', env: {} }), ['--max-old-space-size=200']);
  } finally {
    if (inherited === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = inherited;
  }
});
