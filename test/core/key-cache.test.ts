/**
 * The key cache must not make a revoked key cheaper to refuse than an unknown one: the 401 for
 * each is the same body (SPEC §6), and the same work behind it keeps its timing the same too.
 * Runs on a real SQLite key store; the wrapper only counts the lookups that reach it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { hashApiKey, issueApiKey, revokeApiKeys } from '../../src/core/api-keys.js';
import { createCachedKeyStore } from '../../src/core/caches.js';
import type { KeyStore } from '../../src/core/ports.js';
import { createLogger } from '../../src/log.js';
import { migrateToLatest, openDatabase } from '../../src/storage/database.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { tempDir, unissuedKey } from '../helper.js';

test('a revoked key is looked up as often as an unknown one, and a valid key stays cached', async () => {
  const dir = tempDir();
  const database = await openDatabase(`sqlite:${join(dir.path, 'keys.db')}`);
  try {
    await migrateToLatest(database.db);
    const stored = createKeyStore(database.db);
    const lookups = new Map<string, number>();
    const counting: KeyStore = {
      ...stored,
      findByHash(hash) {
        lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
        return stored.findByHash(hash);
      },
    };
    const clock = { now: () => new Date('2026-03-06T12:00:00Z') };
    const valid = await issueApiKey(stored, { tier: 'free', owner: 'a@example.org' }, clock);
    const revoked = await issueApiKey(stored, { tier: 'free', owner: 'b@example.org' }, clock);
    await revokeApiKeys(stored, revoked.record.prefix, clock);
    const unknownHash = hashApiKey(unissuedKey());
    const cache = createCachedKeyStore(counting, { ttlMs: 60_000, unknownTtlMs: 40, revocationPollMs: 60_000, log: createLogger('silent') });
    try {
      // About 8 unknown-key lifetimes, each hash presented every 10 ms.
      const until = performance.now() + 330;
      while (performance.now() < until) {
        await Promise.all([cache.findByHash(hashApiKey(valid.key)), cache.findByHash(hashApiKey(revoked.key)), cache.findByHash(unknownHash)]);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      cache.close();
    }
    const unknownLookups = lookups.get(unknownHash) ?? 0;
    const revokedLookups = lookups.get(hashApiKey(revoked.key)) ?? 0;
    assert.ok(unknownLookups >= 4, `the unknown key was looked up again after its short stay (${unknownLookups})`);
    // Same presentation pattern, same expiry: equal up to one expiry falling either side of a tick.
    assert.ok(Math.abs(revokedLookups - unknownLookups) <= 1, `revoked ${revokedLookups} lookups, unknown ${unknownLookups}`);
    assert.equal(lookups.get(hashApiKey(valid.key)), 1, 'a valid key is kept for its whole TTL');
  } finally {
    await database.close();
    dir.remove();
  }
});
