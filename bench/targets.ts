/**
 * The performance targets, in one place: every run is held to them (report.ts) and
 * docs/performance.md lists them (scripts/perf-doc.ts).
 */

/** The two references every run measures: the bare route, and the same route sending the rate answer's header lines. */
export type Reference = 'baseline' | 'baseline+headers';

/** Minimum requests/s as a share of the reference's (measured beside it, in rounds), maximum p99 in ms. */
export type ScenarioTarget = { minRatio: number; versus: Reference; maxP99Ms?: number };

/** The ratio and latency targets hold at this many connections; other runs are not judged. */
export const TARGET_CONNECTIONS = 50;

export const SCENARIO_TARGETS: Readonly<Record<string, ScenarioTarget>> = {
  rate: { minRatio: 0.75, versus: 'baseline+headers', maxP99Ms: 5 },
  convert: { minRatio: 0.75, versus: 'baseline+headers', maxP99Ms: 5 },
  'history-1y-json': { minRatio: 0.5, versus: 'baseline' },
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
  return [`≥ ${target.minRatio.toFixed(2)} × ${target.versus}`, ...(target.maxP99Ms !== undefined ? [`p99 ≤ ${target.maxP99Ms} ms`] : [])].join(', ');
}

/** Why a row misses its target (none: it holds). */
export function missedBecause(target: ScenarioTarget, row: { errors: number; ratioToBaseline?: number; ratioToHeaders?: number; latencyMs: { p99: number } }): string[] {
  const reasons: string[] = [];
  if (row.errors > 0) reasons.push(`${row.errors} errors`);
  const ratio = target.versus === 'baseline' ? row.ratioToBaseline : row.ratioToHeaders;
  if (ratio === undefined) reasons.push(`no ${target.versus} in its rounds`);
  else if (ratio < target.minRatio) reasons.push(`${ratio} × ${target.versus} < ${target.minRatio}`);
  if (target.maxP99Ms !== undefined && !(row.latencyMs.p99 <= target.maxP99Ms)) reasons.push(`p99 ${row.latencyMs.p99} ms > ${target.maxP99Ms} ms`);
  return reasons;
}
