import type { ApiKeyRecord, Clock, KeyStore, QuotaStore } from './ports.js';
import type { Logger } from './refresh.js';
import type { Day } from './time.js';

/**
 * Key lookups cached for a short time: a request costs one hash and one map lookup instead of a
 * query. Revocations are seen once the entry expires, so the TTL bounds how long a revoked key
 * still works on an instance.
 */
export function createCachedKeyStore(keys: KeyStore, options: { ttlMs: number; maxEntries?: number }): KeyStore {
  const max = options.maxEntries ?? 50_000;
  const cache = new Map<string, { at: number; record: Promise<ApiKeyRecord | null> }>();
  return {
    insert: (record) => keys.insert(record),
    list: () => keys.list(),
    revokeByPrefix: async (prefix, at) => {
      const revoked = await keys.revokeByPrefix(prefix, at);
      cache.clear();
      return revoked;
    },
    findByHash(hash) {
      const now = Date.now();
      const hit = cache.get(hash);
      if (hit && now - hit.at < options.ttlMs) return hit.record;
      const record = keys.findByHash(hash);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(hash, { at: now, record });
      record.catch(() => cache.delete(hash));
      return record;
    },
  };
}

/**
 * Quota counters held in memory and written to the store in batches: a request costs no write.
 * Exact within this process; written every `flushMs` and on shutdown, so a killed process (not a
 * stopped one) forgives at most the requests of the last `flushMs`. For several processes on one
 * store, use Redis (EXRATES_REDIS_URL) instead.
 */
export function createBufferedQuotaStore(
  store: QuotaStore & Required<Pick<QuotaStore, 'record'>>,
  options: { flushMs: number; log: Logger; clock: Clock },
): QuotaStore {
  const counters = new Map<string, { keyId: string; day: Day; used: number; loading?: Promise<void> }>();
  const dirty = new Set<string>();

  async function flush(): Promise<void> {
    const names = [...dirty];
    dirty.clear();
    for (const name of names) {
      const c = counters.get(name);
      if (!c) continue;
      try {
        await store.record(c.keyId, c.day, c.used);
      } catch (error) {
        dirty.add(name);
        options.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not write quota counters; will retry');
        return;
      }
    }
    // Yesterday's counters are done once written.
    const today = options.clock.now().toISOString().slice(0, 10);
    for (const [name, c] of counters) if (c.day < today && !dirty.has(name)) counters.delete(name);
  }

  let flushing: Promise<void> | undefined;
  const runFlush = () =>
    (flushing ??= flush().finally(() => {
      flushing = undefined;
    }));
  const timer = setInterval(() => void runFlush(), options.flushMs);
  timer.unref();

  return {
    async consume(keyId, day, limit) {
      const name = `${keyId}:${day}`;
      let c = counters.get(name);
      if (!c) {
        const entry: { keyId: string; day: Day; used: number; loading?: Promise<void> } = { keyId, day, used: 0 };
        entry.loading = store.used(keyId, day).then((used) => {
          entry.used += used;
          delete entry.loading;
        });
        counters.set(name, entry);
        c = entry;
        entry.loading.catch(() => counters.delete(name));
      }
      if (c.loading) await c.loading;
      if (c.used >= limit) return { allowed: false, used: c.used };
      c.used += 1;
      dirty.add(name);
      return { allowed: true, used: c.used };
    },
    async used(keyId, day) {
      const c = counters.get(`${keyId}:${day}`);
      if (c && !c.loading) return c.used;
      return store.used(keyId, day);
    },
    record: (keyId, day, used) => store.record(keyId, day, used),
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
