import type { ApiKeyRecord, KeyStore } from './ports.js';
import type { Logger } from './refresh.js';

/**
 * Key lookups cached, so a request costs one hash and one map lookup instead of a query. Known
 * keys are kept for between half of `ttlMs` and all of it, at random: keys first presented
 * together (a burst of clients, a restart under load) would otherwise expire together, and their
 * lookups, all at once, hold every request behind them. Unknown keys are kept only briefly (a key
 * created a moment ago must work).
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
          if (found && found.revokedAt === null) entry.until = now + options.ttlMs * (1 - Math.random() / 2);
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
