/**
 * The key cache must not make a revoked key cheaper to refuse than an unknown one: the 401 for
 * each is the same body (SPEC §6), and the same work behind it keeps its timing the same too.
 * Runs on a real SQLite key store; the wrapper only counts the lookups that reach it. Time is a
 * clock the test moves, not the wall clock.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { hashApiKey, issueApiKey, revokeApiKeys } from '../../src/core/api-keys.js';
import { createCachedKeyStore } from '../../src/core/caches.js';
import type { Clock, KeyStore } from '../../src/core/ports.js';
import { createLogger } from '../../src/log.js';
import { migrateToLatest, openDatabase } from '../../src/storage/database.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { tempDir, unissuedKey } from '../helper.js';

/** A clock that stands still until the test moves it. */
function movingClock(start: string): Clock & { advance(ms: number): void; elapsed(): number } {
  const t0 = Date.parse(start);
  let at = t0;
  return { now: () => new Date(at), advance: (ms) => void (at += ms), elapsed: () => at - t0 };
}

/** Lets the lookups started so far answer (a real SQLite store answers within a few turns). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Runs `body` on a real SQLite key store in a temporary folder. */
async function withKeyStore(body: (stored: KeyStore) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const database = await openDatabase(`sqlite:${join(dir.path, 'keys.db')}`);
  try {
    await migrateToLatest(database.db);
    await body(createKeyStore(database.db));
  } finally {
    await database.close();
    dir.remove();
  }
}

test('a revoked key is looked up as often as an unknown one, and a valid key stays cached', () =>
  withKeyStore(async (stored) => {
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
    const time = movingClock('2026-03-06T12:00:00Z');
    const cache = createCachedKeyStore(counting, { ttlMs: 60_000, unknownTtlMs: 40, revocationPollMs: 60_000, maxEntries: 100, log: createLogger('silent'), clock: time });
    try {
      // About 8 unknown-key lifetimes, each hash presented every 10 ms.
      while (time.elapsed() < 330) {
        await Promise.all([cache.findByHash(hashApiKey(valid.key)), cache.findByHash(hashApiKey(revoked.key)), cache.findByHash(unknownHash)]);
        await settle();
        time.advance(10);
      }
    } finally {
      cache.close();
    }
    const unknownLookups = lookups.get(unknownHash) ?? 0;
    const revokedLookups = lookups.get(hashApiKey(revoked.key)) ?? 0;
    assert.ok(unknownLookups >= 4, `the unknown key was looked up again after its short stay (${unknownLookups})`);
    // Same presentation pattern, same expiry: equal.
    assert.equal(revokedLookups, unknownLookups, `revoked ${revokedLookups} lookups, unknown ${unknownLookups}`);
    assert.equal(lookups.get(hashApiKey(valid.key)), 1, 'a valid key stays cached for at least half its TTL');
  }));

test('known keys cached together are looked up again at spread times, each after at least half its TTL', () =>
  withKeyStore(async (stored) => {
    const clock = { now: () => new Date('2026-03-06T12:00:00Z') };
    const keys = await Promise.all(Array.from({ length: 40 }, (_, i) => issueApiKey(stored, { tier: 'free', owner: `k${i}@example.org` }, clock)));
    const hashes = keys.map((k) => hashApiKey(k.key));
    const TTL_MS = 2_000;
    const time = movingClock('2026-03-06T12:00:00Z');
    let watching = false;
    /** When each key was looked up again, in ms after the first lookups began. */
    const again = new Map<string, number>();
    const counting: KeyStore = {
      ...stored,
      findByHash(hash) {
        if (watching && !again.has(hash)) again.set(hash, time.elapsed());
        return stored.findByHash(hash);
      },
    };
    const cache = createCachedKeyStore(counting, { ttlMs: TTL_MS, unknownTtlMs: 1_000, revocationPollMs: 60_000, maxEntries: 100, log: createLogger('silent'), clock: time });
    try {
      await Promise.all(hashes.map((hash) => cache.findByHash(hash)));
      await settle();
      watching = true;
      while (again.size < hashes.length && time.elapsed() < 20 * TTL_MS) {
        await Promise.all(hashes.map((hash) => cache.findByHash(hash)));
        await settle();
        time.advance(5);
      }
    } finally {
      cache.close();
    }
    const times = [...again.values()];
    assert.equal(times.length, hashes.length, 'every key was looked up again once its stay ended');
    assert.ok(Math.min(...times) >= TTL_MS / 2, `no key left before half its TTL (first again after ${Math.round(Math.min(...times))} ms)`);
    // Uniform over [TTL/2, TTL]: 40 keys spread over less than a quarter of the TTL is a chance of about 1e-9.
    assert.ok(Math.max(...times) - Math.min(...times) >= TTL_MS / 4, `looked up again between ${Math.round(Math.min(...times))} and ${Math.round(Math.max(...times))} ms`);
  }));
