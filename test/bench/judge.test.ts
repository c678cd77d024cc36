import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baselineCpuSpread, judge, resultsTable, type Round, type Row } from '../../bench/report.js';

function row(name: string, requestsPerSecond: number, rounds?: Round[]): Row {
  return {
    name,
    description: name,
    server: name === 'baseline' ? 'baseline' : name === 'baseline+headers' ? 'reference' : 'service',
    ...(name.endsWith('@sqlite') ? { sqlite: true as const } : {}),
    requestsPerSecond,
    latencyMs: { p50: 1, p90: 2, p99: 3, p999: 4, max: 5, mean: 1 },
    responses: requestsPerSecond * 10,
    errors: 0,
    non2xx: 0,
    socketErrors: 0,
    timeouts: 0,
    statusCodes: {},
    bytesPerResponse: 400,
    serverCpuPct: undefined,
    cpuPerRequestUs: undefined,
    loadGeneratorCpuPct: 50,
    serverRssMaxMb: undefined,
    machineBusyPct: undefined,
    otherCpuPct: undefined,
    stealPct: undefined,
    ...(rounds ? { rounds } : {}),
  };
}

/** Rounds in which the service makes `ratio` × the baseline's requests/s, whatever the host's speed. */
const roundsAt = (ratio: number, baselines: number[]): Round[] => baselines.map((b) => ({ requestsPerSecond: b * ratio, baselineRequestsPerSecond: b }));

test('the store is held to SQLite alone by the two rows\' ratios to the baseline, so that the host slowing down between them does not count', () => {
  // The host ran the SQLite row 40 % faster than the store's: their own req/s say 0.64 ×.
  const rows = [row('baseline', 30_000), row('rate', 16_000, roundsAt(0.72, [22_000, 23_000, 21_000])), row('rate@sqlite', 25_000, roundsAt(0.8, [31_000, 32_000, 30_000]))];
  judge(rows, 50);
  assert.deepEqual(rows[1]!.vsSqlite, { ratio: 0.9, byRounds: true });
  assert.equal(rows[2]!.vsSqlite, undefined);
});

test('without rounds against the baseline, the store is held to SQLite alone by the two rows\' requests/s', () => {
  const rows = [row('rate', 16_000), row('rate@sqlite', 20_000)];
  judge(rows, 50);
  assert.deepEqual(rows[0]!.vsSqlite, { ratio: 0.8, byRounds: false });
});

test('the baseline+headers row gets its ratio from its rounds like a service row, and no target or verdict', () => {
  const rows = [row('baseline', 30_000), row('baseline+headers', 21_000, roundsAt(0.7, [30_000, 29_000, 31_000])), row('rate', 20_000, roundsAt(0.75, [27_000, 26_000, 28_000]))];
  judge(rows, 50);
  const [, reference, rate] = rows;
  assert.equal(reference!.ratioToBaseline, 0.7);
  assert.equal(reference!.baselineRequestsPerSecond, 30_000);
  assert.equal(reference!.target, undefined);
  assert.equal(reference!.pass, undefined);
  assert.equal(rate!.pass, false, 'the service row is still judged');
  const line = resultsTable(rows).split('\n').find((l) => l.startsWith('| baseline+headers'))!;
  assert.match(line, /\| +0\.700 \| +30000 \|/);
  assert.doesNotMatch(line, /PASS|FAIL/);
});

test("the host's speed during a row's rounds is read from the baseline's CPU time per request", () => {
  const at = (...us: Array<number | undefined>): Round[] => us.map((baselineCpuPerRequestUs) => ({ requestsPerSecond: 1, baselineRequestsPerSecond: 1, ...(baselineCpuPerRequestUs === undefined ? {} : { baselineCpuPerRequestUs }) }));
  assert.deepEqual(baselineCpuSpread({ rounds: at(16.6, 34.4, 20) }), { low: 16.6, high: 34.4, ratio: 34.4 / 16.6 });
  assert.equal(baselineCpuSpread({ rounds: at(20, undefined) }), undefined, 'one reading is no spread');
  assert.equal(baselineCpuSpread({}), undefined);
});
