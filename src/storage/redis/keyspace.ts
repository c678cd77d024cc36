import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/ports.js';
import { addDays, type Day } from '../../core/time.js';

/**
 * The names of this service's keys. A script may touch only keys of one hash slot on a cluster,
 * so there every key of an API key's counting carries the key's id as hash tag (`{id}`), and the
 * receipt is one per API key and instance. On one server the names stay as they always
 * were, so instances of an earlier release keep counting in the same counters during a rolling
 * upgrade.
 */
export function redisKeyspace(prefix: string, cluster: boolean, instance: string) {
  return {
    counter: (keyId: string, day: Day) => (cluster ? `${prefix}quota:{${keyId}}:${day}` : `${prefix}quota:${keyId}:${day}`),
    /** Of the last script call, per instance (per API key and instance on a cluster); a batch is split along these. */
    receipt: (keyId: string) => (cluster ? `${prefix}receipt:{${keyId}}:${instance}` : `${prefix}receipt:${instance}`),
    marker: (keyId: string) => (cluster ? `${prefix}reconciled:{${keyId}}:${randomUUID()}` : `${prefix}reconciled:${randomUUID()}`),
    lock: (name: string) => `${prefix}lock:${name}`,
  };
}

/**
 * When a day's counter may expire (ms since the epoch): at the end of the day after it, so a late
 * flush still finds it.
 */
export const counterExpiry = (day: Day): number => Date.parse(`${addDays(day, 2)}T00:00:00Z`);

/**
 * Seconds from now to `expiry`, at least a minute. Relative to the service's clock, which may be
 * fixed in the past (EXRATES_NOW), not Redis's.
 */
export const secondsUntil = (expiry: number, clock: Clock): number => Math.max(60, Math.ceil((expiry - clock.now().getTime()) / 1000));
