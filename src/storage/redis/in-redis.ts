import type { Clock } from '../../core/ports.js';
import type { Day } from '../../core/time.js';
import { createBatches } from './batches.js';
import type { RedisClient } from './connection.js';
import { consumeCall, sendConsumeCall } from './consume-script.js';
import type { Counter } from './counters.js';
import type { RedisHealth } from './health.js';
import { secondsUntil } from './keyspace.js';

/** Requests per script call at most: a script blocks its Redis while it runs. */
const MAX_CALL = 1_000;

export type Outcome = { allowed: boolean; used: number };

/** A request waiting to be counted. */
export interface Pending {
  c: Counter;
  limit: number;
  /** The counter was missing and has been seeded from the store for this request. */
  seeded: boolean;
  /** Gives the request its answer. */
  settle(outcome: Outcome | Promise<Outcome>): void;
}

export interface RedisCountingPorts {
  redis: RedisClient;
  health: RedisHealth;
  clock: Clock;
  /** The stored count, from which a missing counter starts (with this instance's unflushed requests). */
  used(keyId: string, day: Day): Promise<number>;
  /** Whether requests may go to Redis now. */
  mayAsk(): boolean;
  /**
   * Counts requests in the store instead. `error`: why Redis did not (none when it was not
   * asked); `uncertain`: the requests' sequence numbers in a call that failed without an answer,
   * which may have run.
   */
  toStore(requests: readonly Pending[], error?: unknown, uncertain?: readonly number[]): void;
}

/**
 * Counting in Redis: requests go in batches (./batches.ts); a batch becomes script calls per
 * receipt, of at most MAX_CALL requests each; a counter Redis lacks is seeded from the store and
 * its requests go again in the next batch. What Redis cannot count goes to `toStore`.
 */
export function createRedisCounting(ports: RedisCountingPorts): { count(c: Counter, limit: number): Promise<Outcome>; drain(): Promise<void> } {
  const { redis, health, clock } = ports;
  let sequence = 0;

  /**
   * Runs one script call and gives its answers, but for the requests whose counter is missing,
   * which it returns. None if the call failed: then the store counted them.
   */
  async function runCall(receipt: string, requests: Pending[]): Promise<Pending[]> {
    const call = consumeCall(
      requests.map((r) => ({ counter: r.c.name, limit: r.limit })),
      sequence + 1,
    );
    sequence += requests.length;
    let expiry = 0;
    for (const r of requests) expiry = Math.max(expiry, r.c.expiry);
    const lifetime = secondsUntil(expiry, clock);
    let outcomes;
    try {
      outcomes = call.read(await sendConsumeCall(redis, receipt, call, lifetime));
      health.answered();
    } catch (error) {
      ports.toStore(requests, error, call.seqs);
      return [];
    }
    const missing: Pending[] = [];
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]!;
      const outcome = outcomes[i]!;
      if (outcome === 'missing') missing.push(request);
      else {
        if (outcome.allowed) request.c.unflushed += 1;
        request.settle(outcome);
      }
    }
    return missing;
  }

  /**
   * Sends a batch: calls per receipt, of at most MAX_CALL requests each. Those of one receipt go
   * one after the other, so that at most one of them can be lost between reconciles (after a
   * failure the rest go to the store); those of different receipts go at once.
   */
  async function sendBatch(batch: Pending[]): Promise<void> {
    const byReceipt = new Map<string, Pending[]>();
    for (const request of batch) {
      const name = request.c.receiptName;
      let requests = byReceipt.get(name);
      if (!requests) byReceipt.set(name, (requests = []));
      requests.push(request);
    }
    const missing: Pending[] = [];
    await Promise.all(
      [...byReceipt].map(async ([receipt, requests]) => {
        for (let i = 0; i < requests.length; i += MAX_CALL) {
          const call = requests.slice(i, i + MAX_CALL);
          if (!ports.mayAsk()) ports.toStore(call);
          else missing.push(...(await runCall(receipt, call)));
        }
      }),
    );
    if (missing.length > 0) await seed(missing);
  }

  const batches = createBatches(sendBatch);

  /**
   * Counters missing from Redis start from the store plus what this instance has not flushed yet
   * (SET NX: of several instances seeding at once, the first wins and none undoes another's
   * counting); their requests go in the next batch, ahead of those that came meanwhile.
   */
  async function seed(requests: Pending[]): Promise<void> {
    const again = requests.filter((r) => r.seeded);
    const first = requests.filter((r) => !r.seeded);
    try {
      for (const c of new Set(first.map((r) => r.c))) {
        const floor = (await ports.used(c.keyId, c.day)) + c.unflushed;
        await redis.set(c.name, floor, 'EX', secondsUntil(c.expiry, clock), 'NX');
      }
    } catch (error) {
      return ports.toStore(requests, error);
    }
    for (const r of first) r.seeded = true;
    batches.addFirst(first);
    // Seeded and missing again at once (evicted at once): Redis cannot hold it; the store decides.
    if (again.length > 0) ports.toStore(again, new Error('quota counter vanished from redis right after it was seeded'));
  }

  return {
    /** Queues a request for the next batch; the counter stays in memory until it is answered. */
    count(c, limit) {
      c.waiting += 1;
      return new Promise<Outcome>((resolve) =>
        batches.add({
          c,
          limit,
          seeded: false,
          settle(outcome) {
            c.waiting -= 1;
            resolve(outcome);
          },
        }),
      );
    },
    drain: () => batches.drain(),
  };
}

