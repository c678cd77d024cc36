/**
 * The performance targets every run is held to, in one place: requests/s as a share of the bare
 * baseline's in the same run, latency, memory and start-up.
 */

export interface ScenarioTarget {
  /** Minimum requests/s as a share of the baseline's, or with `versus` of that scenario's. */
  minRatio: number;
  /**
   * Another scenario of the run: the ratio is this row's × baseline over that row's, so that the
   * host's drift between the two rows cancels out.
   */
  versus?: string;
  /** Maximum p99 latency in ms. */
  maxP99Ms?: number;
}

/** The ratio and latency targets hold at this many connections; other runs are not judged. */
export const TARGET_CONNECTIONS = 50;

export const SCENARIO_TARGETS: Readonly<Record<string, ScenarioTarget>> = {
  rate: { minRatio: 0.8, maxP99Ms: 5 },
  convert: { minRatio: 0.8, maxP99Ms: 5 },
  'history-1y-json': { minRatio: 0.6 },
  'rate-dated': { minRatio: 0.8, versus: 'rate' },
  'rates-all': { minRatio: 1 / 3, versus: 'rate' },
};

/** Several instances' store (PostgreSQL + Redis): requests/s of one instance as a share of SQLite alone's, in one run (--compare-sqlite). */
export const STORE_RATIO = 0.85;

interface StoreRow {
  requestsPerSecond: number;
  ratioToBaseline?: number;
  rounds?: readonly unknown[];
}

/**
 * A store's requests/s as a share of SQLite alone's, for one scenario. The two services run
 * minutes apart, so their own req/s carry the host's drift between them; each is also measured
 * in rounds against the one baseline, so the ratio of their two × baseline figures leaves it out
 * (as far as the host slows the baseline as much as each service), as for a target with `versus`. Without rounds (no baseline in the run), their req/s.
 */
export function storeRatio(store: StoreRow, sqlite: StoreRow): { ratio: number; byRounds: boolean } {
  const byRounds = Boolean(store.rounds?.length && sqlite.rounds?.length && store.ratioToBaseline !== undefined && sqlite.ratioToBaseline !== undefined);
  const ratio = byRounds ? store.ratioToBaseline! / sqlite.ratioToBaseline! : store.requestsPerSecond / sqlite.requestsPerSecond;
  return { ratio: Math.round(ratio * 1000) / 1000, byRounds };
}

/** Peak resident memory of the service (VmHWM) with the full ECB history stored and 1,000 keys. */
export const PEAK_RSS_MB = 200;

/** Spawn of the service → its first 200 of /api/v1/rate, on a store already holding the full history (median of 3). */
export const COLD_START_MS = 1500;

export function targetText(target: ScenarioTarget | undefined): string {
  if (!target) return '–';
  return [`≥${target.minRatio.toFixed(2)}× ${target.versus ?? ''}`.trimEnd(), ...(target.maxP99Ms !== undefined ? [`p99≤${target.maxP99Ms}ms`] : [])].join(', ');
}

/** Why a measured scenario misses its target (none: it holds). A row with errors never holds. */
export function missedBecause(target: ScenarioTarget, row: { errors: number; ratioToBaseline?: number; latencyMs: { p99: number } }, versus?: { ratioToBaseline?: number }): string[] {
  const reasons: string[] = [];
  if (row.errors > 0) reasons.push(`${row.errors} errors`);
  if (row.ratioToBaseline === undefined) reasons.push('no baseline in this run');
  else if (target.versus !== undefined) {
    if (versus?.ratioToBaseline === undefined) reasons.push(`no ${target.versus} row in this run`);
    else {
      const ratio = Math.round((row.ratioToBaseline / versus.ratioToBaseline) * 1000) / 1000;
      if (ratio < target.minRatio) reasons.push(`${ratio} × ${target.versus} < ${Math.round(target.minRatio * 1000) / 1000}`);
    }
  } else if (row.ratioToBaseline < target.minRatio) reasons.push(`ratio ${row.ratioToBaseline} < ${target.minRatio}`);
  if (target.maxP99Ms !== undefined && !(row.latencyMs.p99 <= target.maxP99Ms)) reasons.push(`p99 ${row.latencyMs.p99} ms > ${target.maxP99Ms} ms`);
  return reasons;
}
