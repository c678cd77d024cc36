/**
 * The performance targets, in one place: every run is held to them (report.ts) and
 * docs/performance.md lists them (scripts/perf-doc.ts).
 */

/** The two references every run measures: the bare route, and the same route sending the rate answer's header lines. */
export type Reference = 'baseline' | 'baseline+headers';

/**
 * Minimum requests/s as a share of the reference's (measured beside it, in rounds), maximum p99 in
 * ms; or, for a row of `rate` on other stores (`versus: 'rate'`), its ratio to baseline+headers as
 * a share of the SQLite row's, and at most so many Redis commands per request.
 */
export type ScenarioTarget = { minRatio: number; versus: Reference | 'rate'; maxP99Ms?: number; maxRedisCommandsPerRequest?: number };

/** The ratio and latency targets hold at this many connections; other runs are not judged. */
export const TARGET_CONNECTIONS = 50;

export const SCENARIO_TARGETS: Readonly<Record<string, ScenarioTarget>> = {
  rate: { minRatio: 0.75, versus: 'baseline+headers', maxP99Ms: 5 },
  convert: { minRatio: 0.75, versus: 'baseline+headers', maxP99Ms: 5 },
  'history-1y-json': { minRatio: 0.5, versus: 'baseline' },
  // Measured with --database-url and --redis-url: one instance on PostgreSQL + Redis against the same on SQLite.
  'rate@redis': { minRatio: 0.85, versus: 'rate', maxRedisCommandsPerRequest: 0.05 },
};

/** Peak resident memory of the service (VmHWM) with the full ECB history stored and 1,000 keys. */
export const PEAK_RSS_MB = 256;

/**
 * The node flags the service may start with for the memory target: an operator's heap sizes.
 * Any other flag (V8's internal tuning) makes the memory verdict fail.
 */
export const OPERATOR_FLAGS: readonly string[] = ['--max-old-space-size', '--max-semi-space-size'];

/** Spawn of the service → its first 200 of /api/v1/rate, on a store already holding the full history (median of 3). */
export const COLD_START_MS = 1500;

export function targetText(target: ScenarioTarget | undefined): string {
  if (!target) return '–';
  return [
    `≥ ${target.minRatio.toFixed(2)} × ${target.versus}`,
    ...(target.maxP99Ms !== undefined ? [`p99 ≤ ${target.maxP99Ms} ms`] : []),
    ...(target.maxRedisCommandsPerRequest !== undefined ? [`Redis cmd/req ≤ ${target.maxRedisCommandsPerRequest}`] : []),
  ].join(', ');
}

/** Why a row misses its target (none: it holds). */
export function missedBecause(
  target: ScenarioTarget,
  row: { errors: number; ratioToBaseline?: number; ratioToHeaders?: number; ratioToRate?: number; redisCommandsPerRequest?: number; latencyMs: { p99: number } },
): string[] {
  const reasons: string[] = [];
  if (row.errors > 0) reasons.push(`${row.errors} errors`);
  const ratio = target.versus === 'baseline' ? row.ratioToBaseline : target.versus === 'rate' ? row.ratioToRate : row.ratioToHeaders;
  if (ratio === undefined) reasons.push(target.versus === 'rate' ? 'no rate row with its ratio to baseline+headers' : `no ${target.versus} in its rounds`);
  else if (ratio < target.minRatio) reasons.push(`${ratio} × ${target.versus} < ${target.minRatio}`);
  if (target.maxP99Ms !== undefined && !(row.latencyMs.p99 <= target.maxP99Ms)) reasons.push(`p99 ${row.latencyMs.p99} ms > ${target.maxP99Ms} ms`);
  const commands = target.maxRedisCommandsPerRequest;
  if (commands !== undefined && !((row.redisCommandsPerRequest ?? Infinity) <= commands)) reasons.push(`${row.redisCommandsPerRequest ?? 'no count of'} Redis cmd/req > ${commands}`);
  return reasons;
}
