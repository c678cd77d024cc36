import type { ApiKeyRecord, Clock, KeyStore, QuotaStore } from './ports.js';
import type { Logger } from './refresh.js';
import type { Day } from './time.js';

/**
 * Key lookups cached, so a request costs one hash and one map lookup instead of a query. Known
 * keys are kept for `ttlMs`; unknown ones only briefly (a key created a moment ago must work).
 * Revocations, also those made by another process (the CLI, another instance), are noticed by
 * polling a revocation mark every `revocationPollMs`, which empties the cache.
 */
export function createCachedKeyStore(
  keys: KeyStore,
  options: { ttlMs: number; unknownTtlMs?: number; revocationPollMs: number; log: Logger; maxEntries?: number },
): KeyStore & { close(): void } {
  const max = options.maxEntries ?? 50_000;
  const unknownTtl = options.unknownTtlMs ?? 1_000;
  /** `known` is the record once the lookup has answered (null: no such key). */
  const cache = new Map<string, { until: number; record: Promise<ApiKeyRecord | null>; known?: ApiKeyRecord | null }>();
  let mark: string | undefined;
  let polling = false;
  const timer = setInterval(() => {
    if (polling || !keys.revocationMark) return;
    polling = true;
    keys
      .revocationMark()
      .then((current) => {
        if (mark !== undefined && current !== mark) cache.clear();
        mark = current;
      })
      .catch((error: unknown) => {
        // Without the mark, cached keys cannot be trusted to be unrevoked.
        cache.clear();
        options.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not check for revoked keys');
      })
      .finally(() => {
        polling = false;
      });
  }, options.revocationPollMs);
  timer.unref();
  return {
    insert: (record) => keys.insert(record),
    list: () => keys.list(),
    revocationMark: () => keys.revocationMark?.() ?? Promise.resolve(''),
    revokeByPrefix: async (prefix, at) => {
      const revoked = await keys.revokeByPrefix(prefix, at);
      cache.clear();
      return revoked;
    },
    findByHash(hash) {
      const now = Date.now();
      const hit = cache.get(hash);
      if (hit && now < hit.until) return hit.known !== undefined ? hit.known : hit.record;
      const record = Promise.resolve(keys.findByHash(hash));
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      const entry: { until: number; record: Promise<ApiKeyRecord | null>; known?: ApiKeyRecord | null } = { until: now + unknownTtl, record };
      cache.set(hash, entry);
      record.then(
        (found) => {
          entry.known = found;
          // A revoked key is kept no longer than an unknown one: both cost the same lookups, so
          // the time of a 401 does not tell a revoked key from one never issued (SPEC §6).
          if (found && found.revokedAt === null) entry.until = now + options.ttlMs;
        },
        () => cache.delete(hash),
      );
      return record;
    },
    close() {
      clearInterval(timer);
    },
  };
}

const FLUSH_BATCH = 100;

/**
 * Quota counters held in memory and written to the store in batches: a request costs no write.
 * Exact within this process; written every `flushMs` and on shutdown, so a killed process (not a
 * stopped one) forgives at most the requests of the last `flushMs`. For several processes on one
 * store, use Redis (EXRATES_REDIS_URL) instead.
 */
export function createBufferedQuotaStore(
  store: QuotaStore & Required<Pick<QuotaStore, 'record' | 'recordMany'>>,
  options: { flushMs: number; log: Logger; clock: Clock },
): QuotaStore {
  interface Counter {
    keyId: string;
    day: Day;
    used: number;
    loading?: Promise<void>;
  }
  const counters = new Map<string, Counter>();
  const dirty = new Set<Counter>();

  async function flush(): Promise<void> {
    const entries = [...dirty];
    dirty.clear();
    // Batches of FLUSH_BATCH keys, one statement and transaction each, with requests served in
    // between: SQLite writes block the event loop, and a thousand keys at once would hold every
    // request for tens of milliseconds.
    for (let i = 0; i < entries.length; i += FLUSH_BATCH) {
      const batch = entries.slice(i, i + FLUSH_BATCH);
      try {
        await store.recordMany(batch.map((c) => ({ keyId: c.keyId, day: c.day, used: c.used })));
      } catch (error) {
        for (const c of entries.slice(i)) dirty.add(c);
        options.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not write quota counters; will retry');
        return;
      }
      if (i + FLUSH_BATCH < entries.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // Yesterday's counters are done once written.
    const today = options.clock.now().toISOString().slice(0, 10);
    for (const [name, c] of counters) {
      if (c.day >= today || dirty.has(c)) continue;
      counters.delete(name);
    }
  }

  /** Counts one request on a loaded counter unless it reached the limit. */
  function take(c: Counter, limit: number): { allowed: boolean; used: number } {
    if (c.used >= limit) return { allowed: false, used: c.used };
    c.used += 1;
    dirty.add(c);
    return { allowed: true, used: c.used };
  }

  let flushing: Promise<void> | undefined;
  const runFlush = () =>
    (flushing ??= flush().finally(() => {
      flushing = undefined;
    }));
  const timer = setInterval(() => void runFlush(), options.flushMs);
  timer.unref();

  return {
    consume(keyId, day, limit) {
      const name = `${keyId}:${day}`;
      let c = counters.get(name);
      if (!c) {
        const entry: Counter = { keyId, day, used: 0 };
        entry.loading = store.used(keyId, day).then((used) => {
          entry.used += used;
          delete entry.loading;
        });
        counters.set(name, entry);
        c = entry;
        entry.loading.catch(() => counters.delete(name));
      }
      const loaded = c;
      return loaded.loading ? loaded.loading.then(() => take(loaded, limit)) : take(loaded, limit);
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
