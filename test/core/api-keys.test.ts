/**
 * Authentication remembers the hash of each key presented lately. Each key must still name its
 * own record, a key not issued none, whatever was presented before it; a malformed key is refused
 * without a lookup. Runs on a real SQLite key store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authenticateApiKey, createPresentedKeyHashes, hashApiKey, KEY_PREFIX } from '../../src/core/api-keys.js';
import type { ApiKeyRecord, KeyStore } from '../../src/core/ports.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { storeEngines } from '../support/stores.js';

test('keys presented in turn each name their own record, one not issued none, and a malformed one is never looked up', async () => {
  const store = await storeEngines()[0]!.open();
  assert.ok(store);
  try {
    const stored = createKeyStore(store.database.db);
    const lookups: string[] = [];
    const keys: KeyStore = {
      ...stored,
      findByHash(hash) {
        lookups.push(hash);
        return stored.findByHash(hash);
      },
    };
    // Two remembered at most: the third key presented drops the one remembered longest ago.
    const hashes = createPresentedKeyHashes(2);
    const [first, second, third] = ['A', 'B', 'C'].map((c) => `${KEY_PREFIX}${c.repeat(32)}`) as [string, string, string];
    const insert = async (key: string, id: string) => {
      const record: ApiKeyRecord = { id, prefix: key.slice(0, 12), tier: 'free', owner: `${id}@example.org`, createdAt: '2026-03-06T12:00:00.000Z', revokedAt: null };
      await stored.insert({ ...record, hash: hashApiKey(key) });
    };
    await insert(first, 'first');
    for (let round = 0; round < 3; round++) {
      assert.equal((await authenticateApiKey(keys, first, hashes))?.id, 'first');
      assert.equal(await authenticateApiKey(keys, second, hashes), null, 'a key never issued');
    }
    await insert(second, 'second');
    await insert(third, 'third');
    for (let round = 0; round < 3; round++) {
      assert.equal((await authenticateApiKey(keys, first, hashes))?.id, 'first');
      assert.equal((await authenticateApiKey(keys, second, hashes))?.id, 'second');
      assert.equal((await authenticateApiKey(keys, third, hashes))?.id, 'third');
    }
    assert.equal(hashes.size, 2);
    assert.deepEqual([...hashes.keys()].sort(), [second, third].sort(), 'the two presented last are kept');
    assert.deepEqual(new Set(lookups), new Set([first, second, third].map(hashApiKey)));
    // Too long to be a key, a valid key with a character more, none: refused without a lookup.
    const before = lookups.length;
    assert.equal(await authenticateApiKey(keys, `${first}${'x'.repeat(70)}`, hashes), null);
    assert.equal(await authenticateApiKey(keys, `${first}!`, hashes), null);
    assert.equal(await authenticateApiKey(keys, undefined, hashes), null);
    assert.equal(lookups.length, before);
  } finally {
    await store.close();
  }
});
