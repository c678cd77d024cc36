import type { Clock, QuotaStore, Tier } from './ports.js';
import { nextUtcMidnightSeconds, utcDay, type Day } from './time.js';

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

/** The current UTC day and its end (Unix seconds, when quotas reset). */
export interface QuotaCalendar {
  today(now: Date): { day: Day; resetAt: number };
}

/**
 * A calendar that works the day out once a day rather than on every request (formatting the day
 * costs more than the rest of counting a request in memory). createDeps makes one
 * (Deps.quotaCalendar).
 */
export function createQuotaCalendar(): QuotaCalendar {
  let current: { start: number; end: number; day: Day; resetAt: number } | undefined;
  return {
    today(now) {
      const ms = now.getTime();
      if (!current || ms < current.start || ms >= current.end) {
        const resetAt = nextUtcMidnightSeconds(now);
        current = { start: (resetAt - 86_400) * 1000, end: resetAt * 1000, day: utcDay(now), resetAt };
      }
      return current;
    },
  };
}

/** Without a calendar of the caller's: the day worked out for this call alone. */
const dayOf = (now: Date) => ({ day: utcDay(now), resetAt: nextUtcMidnightSeconds(now) });

function decision(now: Date, resetAt: number, limit: number, outcome: { allowed: boolean; used: number }): QuotaDecision {
  return {
    allowed: outcome.allowed,
    limit,
    remaining: Math.max(0, limit - outcome.used),
    resetAt,
    retryAfter: Math.max(1, resetAt - Math.floor(now.getTime() / 1000)),
  };
}

/** Counts one request against a key's quota for the current UTC day. Refused requests are not counted. */
export async function consumeDailyQuota(
  store: QuotaStore,
  key: { id: string; tier: Tier },
  limits: QuotaLimits,
  clock: Clock,
  calendar?: QuotaCalendar,
): Promise<QuotaDecision> {
  const now = clock.now();
  const limit = dailyQuota(key.tier, limits);
  const today = calendar ? calendar.today(now) : dayOf(now);
  return decision(now, today.resetAt, limit, await store.consume(key.id, today.day, limit));
}

/** A key's use of its quota today, without counting anything. */
export interface QuotaUsage extends QuotaDecision {
  used: number;
}

/** Reads a key's count for the current UTC day without counting (GET /api/v1/usage). */
export async function dailyUsage(store: QuotaStore, key: { id: string; tier: Tier }, limits: QuotaLimits, clock: Clock, calendar?: QuotaCalendar): Promise<QuotaUsage> {
  const now = clock.now();
  const limit = dailyQuota(key.tier, limits);
  const today = calendar ? calendar.today(now) : dayOf(now);
  const used = await store.used(key.id, today.day);
  return { ...decision(now, today.resetAt, limit, { allowed: true, used }), used };
}
