import type { Clock } from '../../core/ports.js';
import type { RedisClient } from './connection.js';
import { countedByReceipt } from './consume-script.js';
import type { Counter } from './counters.js';
import { secondsUntil } from './keyspace.js';

// KEYS[1] counter, KEYS[2] marker; ARGV[1] requests counted in the store while Redis was away,
// less those of a lost call that ran after all, ARGV[2] floor (the stored count), ARGV[3]
// lifetime. Adds those requests to Redis; a counter Redis lost is set to the stored count instead,
// which holds them already. The marker makes a retry of a reconcile that ran late a no-op.
const RECONCILE = `
if not redis.call('SET', KEYS[2], 1, 'NX', 'EX', 86400) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 0
end
if tonumber(ARGV[1]) > 0 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
return 1
`;

export interface ReconcilePorts {
  redis: RedisClient;
  /** The stored count. */
  used(keyId: string, day: string): Promise<number>;
  /** A new marker's name for a key. */
  marker(keyId: string): string;
  clock: Clock;
}

/**
 * Adds to Redis, counter by counter, the requests counted in the store while Redis was away, less
 * those whose lost script call ran after all (its receipt says). Throws at the first command that
 * fails; what is not confirmed stays on its counter, to be sent again as it is.
 *
 * At most one call per receipt can have been lost since the last reconcile: after a failure,
 * nothing goes to Redis until the reconcile is done.
 */
export async function reconcileCounters(counters: Iterable<Counter>, ports: ReconcilePorts): Promise<void> {
  const { redis } = ports;
  const receipts = new Map<string, string | null>();
  for (const c of counters) {
    if (!c.reconciling) {
      if (c.offline === 0 && c.uncertain.length === 0) continue;
      let receipt: string | null = null;
      if (c.uncertain.length > 0) {
        if (!receipts.has(c.receiptName)) receipts.set(c.receiptName, await redis.get(c.receiptName));
        receipt = receipts.get(c.receiptName)!;
      }
      c.reconciling = { marker: ports.marker(c.keyId), count: c.offline - countedByReceipt(receipt, c.uncertain) };
      c.offline = 0;
      c.uncertain = [];
    }
    const { marker, count } = c.reconciling;
    const floor = (await ports.used(c.keyId, c.day)) + c.unflushed;
    await redis.eval(RECONCILE, 2, c.name, marker, count, floor, secondsUntil(c.expiry, ports.clock));
    delete c.reconciling;
  }
}
