import type { Day } from '../../core/time.js';
import { counterExpiry } from './keyspace.js';

/** What this instance knows of one key's count on one day, beside the count in Redis. */
export interface Counter {
  keyId: string;
  day: Day;
  /** Its key in Redis, and that of the receipt of the script calls that count it. */
  name: string;
  receiptName: string;
  /** When its key in Redis may expire (ms since the epoch). */
  expiry: number;
  /** Requests this instance counted in Redis and has not yet added to the store. */
  unflushed: number;
  /** Requests this instance counted in the store while Redis was unreachable, not yet in Redis. */
  offline: number;
  /** Sequence numbers of requests whose script call failed without an answer: it may have run. */
  uncertain: number[];
  /** A reconcile sent but not confirmed, retried as it is: the requests to add, and the marker that makes a retry a no-op. */
  reconciling?: { marker: string; count: number };
  /** Requests waiting for Redis's answer: the counter stays in memory until they have it. */
  waiting: number;
}

/** Whether a counter holds nothing that still has to reach Redis or the store. */
export const settled = (c: Counter): boolean => c.unflushed === 0 && c.offline === 0 && !c.reconciling && c.uncertain.length === 0 && c.waiting === 0;

/** Whether a counter holds requests that Redis does not know of yet. */
export const behindRedis = (c: Counter): boolean => c.offline > 0 || c.uncertain.length > 0 || c.reconciling !== undefined;

/** This instance's counters, by key id and day. */
export interface Counters extends Iterable<Counter> {
  get(keyId: string, day: Day): Counter;
  /** Forgets the settled counters of days before `today`. */
  forgetSettledBefore(today: Day): void;
}

export function createCounters(names: { counter(keyId: string, day: Day): string; receipt(keyId: string): string }): Counters {
  /** By day, then key id: a finished day's counters are forgotten together. */
  const byDay = new Map<Day, Map<string, Counter>>();
  return {
    get(keyId, day) {
      let byKey = byDay.get(day);
      if (!byKey) byDay.set(day, (byKey = new Map()));
      let c = byKey.get(keyId);
      if (!c) {
        c = { keyId, day, name: names.counter(keyId, day), receiptName: names.receipt(keyId), expiry: counterExpiry(day), unflushed: 0, offline: 0, uncertain: [], waiting: 0 };
        byKey.set(keyId, c);
      }
      return c;
    },
    forgetSettledBefore(today) {
      for (const [day, byKey] of byDay) {
        if (day >= today) continue;
        for (const [keyId, c] of byKey) if (settled(c)) byKey.delete(keyId);
        if (byKey.size === 0) byDay.delete(day);
      }
    },
    *[Symbol.iterator]() {
      for (const byKey of byDay.values()) yield* byKey.values();
    },
  };
}
