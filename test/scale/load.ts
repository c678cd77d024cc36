/** Load for the scale suites: work spread over a bounded pool, and upstream calls counted per refresh tick. */
import { sleep } from '../support/wait.js';

/** Runs `work` for every item with at most `limit` in flight. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Counts calls to an upstream path per refresh tick over `ticks` whole ticks of `intervalMs`,
 * starting mid-interval so that every tick of the window lies well inside it.
 */
export async function callsPerTick(calls: () => number, intervalMs: number, ticks: number): Promise<{ perTick: number[]; windowStart: number; windowEnd: number }> {
  await sleep((intervalMs * 1.5 - (Date.now() % intervalMs)) % intervalMs);
  const windowStart = Date.now();
  const windowEnd = windowStart + ticks * intervalMs;
  const firstTick = Math.ceil(windowStart / intervalMs);
  const perTick = new Map<number, number>();
  for (let n = 0; n < ticks; n += 1) perTick.set(firstTick + n, 0);
  let seen = calls();
  while (Date.now() < windowEnd) {
    await sleep(20);
    const now = calls();
    if (now > seen) {
      const tick = Math.floor(Date.now() / intervalMs);
      perTick.set(tick, (perTick.get(tick) ?? 0) + (now - seen));
      seen = now;
    }
  }
  return { perTick: [...perTick.values()], windowStart, windowEnd };
}
