import type { Clock, QuotaStore, Tier } from './ports.js';
import { nextUtcMidnightSeconds, utcDay } from './time.js';

export interface QuotaLimits {
  free: number;
  pro: number;
}

export interface QuotaDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds of the next reset, 00:00 UTC. */
  resetAt: number;
  /** Seconds until the reset, for Retry-After on a refusal. */
  retryAfter: number;
}

export function dailyQuota(tier: Tier, limits: QuotaLimits): number {
  return tier === 'pro' ? limits.pro : limits.free;
}

/** Counts one request against a key's quota for the current UTC day. Refused requests are not counted. */
export async function consumeDailyQuota(
  store: QuotaStore,
  key: { id: string; tier: Tier },
  limits: QuotaLimits,
  clock: Clock,
): Promise<QuotaDecision> {
  const now = clock.now();
  const limit = dailyQuota(key.tier, limits);
  const { allowed, used } = await store.consume(key.id, utcDay(now), limit);
  const resetAt = nextUtcMidnightSeconds(now);
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    resetAt,
    retryAfter: Math.max(1, resetAt - Math.floor(now.getTime() / 1000)),
  };
}
