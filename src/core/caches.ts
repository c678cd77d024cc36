import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, Clock, KeyStore } from './ports.js';
import type { Logger } from './refresh.js';

/**
 * Key lookups cached, so a request costs one hash and one cache lookup instead of a query. Known
 * keys are kept for between half of `ttlMs` and all of it, at random: keys first presented
 * together (a burst of clients, a restart under load) would otherwise expire together, and their
 * lookups, all at once, hold every request behind them. Unknown keys are kept only briefly (a key
 * created a moment ago must work). At most `maxEntries`, the least recently used going first.
 * Times are the clock's.
 * Revocations, also those made by another process (the CLI, another instance), are noticed by
 * polling a revocation mark every `revocationPollMs`, which empties the cache.
 */
export function createCachedKeyStore(
  keys: KeyStore,
  options: { ttlMs: number; unknownTtlMs: number; revocationPollMs: number; maxEntries: number; log: Logger; clock: Clock },
): KeyStore & { close(): void } {
  // A lookup is kept as the store's answer on its way, so that concurrent requests for one key share one query.
  const cache = new LRUCache<string, Promise<ApiKeyRecord | null>>({
    max: options.maxEntries,
    // Every read asks the clock: a resolution of its own would read the time behind the clock's back.
    ttlResolution: 0,
    perf: { now: () => options.clock.now().getTime() },
  });
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
    revokeByHash: async (hash, at) => {
      const revoked = await keys.revokeByHash(hash, at);
      cache.clear();
      return revoked;
    },
    findByHash(hash) {
      const hit = cache.get(hash);
      if (hit) return hit;
      const record = keys.findByHash(hash);
      cache.set(hash, record, { ttl: options.unknownTtlMs });
      record.then(
        (found) => {
          // A revoked key is kept no longer than an unknown one: both cost the same lookups, so
          // the time of a 401 does not tell a revoked key from one never issued (SPEC §6).
          if (found && found.revokedAt === null && cache.peek(hash) === record) cache.set(hash, record, { ttl: options.ttlMs * (1 - Math.random() / 2) });
        },
        () => {
          if (cache.peek(hash) === record) cache.delete(hash);
        },
      );
      return record;
    },
    close() {
      clearInterval(timer);
    },
  };
}
