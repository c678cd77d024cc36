import { isIPv4, isIPv6 } from 'node:net';
import type { Clock, QuotaStore, Tier } from './ports.js';
import { consumeDailyQuota, dailyUsage, type QuotaDecision, type QuotaLimits, type QuotaUsage } from './quota.js';

/**
 * The portal's demo key. It is public (every visitor's page holds it), so it is not a secret and
 * not an issued key: it is never in the key store, and its shape (`exr_demo_…`, with an
 * underscore no issued key has) is refused by isWellFormedKey, so only this module accepts it.
 * What limits it is its quota: the shared daily quota of its tier, and a small quota per client
 * address.
 */
export const DEMO_KEY_PREFIX = 'exr_demo_';
export const DEMO_KEY = `${DEMO_KEY_PREFIX}public`;

export interface DemoKeyPolicy {
  tier: Tier;
  /** Requests one client address may make with the demo key per UTC day. */
  perAddress: number;
}

/** Anything shaped like a demo key: the demo key itself, or a guess at one (refused). */
export function looksLikeDemoKey(presented: string): boolean {
  return presented.startsWith(DEMO_KEY_PREFIX);
}

/**
 * Who a client address counts as: an IPv4 address itself (also when written IPv4-mapped), an
 * IPv6 address by its /64, which one subscriber usually holds whole.
 */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export interface DemoQuotaDecision extends QuotaDecision {
  /** Which quota refused the request, when one did. */
  exhausted?: 'address' | 'shared';
}

/**
 * Counts one demo request: first against the client address's quota, then against the demo key's
 * shared quota (its tier's). A request refused by the shared quota has used one of its address's.
 * The headers report the address's quota, what the visitor can act on.
 */
export async function consumeDemoQuota(
  store: QuotaStore,
  policy: DemoKeyPolicy,
  address: string,
  limits: QuotaLimits,
  clock: Clock,
): Promise<DemoQuotaDecision> {
  const own = await consumeDailyQuota(store, { id: `demo:${addressGroup(address)}`, tier: policy.tier }, { free: policy.perAddress, pro: policy.perAddress }, clock);
  if (!own.allowed) return { ...own, exhausted: 'address' };
  const shared = await consumeDailyQuota(store, { id: 'demo', tier: policy.tier }, limits, clock);
  if (!shared.allowed) return { ...own, allowed: false, remaining: 0, retryAfter: shared.retryAfter, exhausted: 'shared' };
  return { ...own, remaining: Math.min(own.remaining, shared.remaining) };
}

/** The demo key's use as its headers report it (the address's), without counting anything. */
export async function demoUsage(store: QuotaStore, policy: DemoKeyPolicy, address: string, limits: QuotaLimits, clock: Clock): Promise<QuotaUsage> {
  const own = await dailyUsage(store, { id: `demo:${addressGroup(address)}`, tier: policy.tier }, { free: policy.perAddress, pro: policy.perAddress }, clock);
  const shared = await dailyUsage(store, { id: 'demo', tier: policy.tier }, limits, clock);
  return { ...own, remaining: Math.min(own.remaining, shared.remaining) };
}
