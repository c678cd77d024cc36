/**
 * Authentication remembers the hash of each key presented lately, in slots found by a number
 * computed from the key (textKey). Two keys that share a slot must each still name their
 * own record, and a key that only shares a slot with a valid one must name none. Runs on a real
 * SQLite key store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authenticateApiKey, hashApiKey, KEY_PREFIX } from '../../src/core/api-keys.js';
import { textKey } from '../../src/core/text-key.js';
import type { ApiKeyRecord } from '../../src/core/ports.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { storeEngines } from '../support/stores.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Two well-formed keys with one text key, found by trying numbered keys (tens of thousands, as a rule). */
function keysSharingASlot(): [string, string] {
  const seen = new Map<number, string>();
  for (let n = 0; n < 10_000_000; n++) {
    let digits = '';
    for (let rest = n; digits.length < 32; rest = Math.floor(rest / 62)) digits += BASE62[rest % 62];
    const key = KEY_PREFIX + digits;
    const slot = textKey(key);
    const other = seen.get(slot);
    if (other !== undefined) return [other, key];
    seen.set(slot, key);
  }
  throw new Error('no two keys with one text key');
}

test('keys that share a text key each name their own record, and one not issued none', async () => {
  const store = await storeEngines()[0]!.open();
  assert.ok(store);
  try {
    const keys = createKeyStore(store.database.db);
    const [first, second] = keysSharingASlot();
    assert.equal(textKey(first), textKey(second));
    const insert = async (key: string, id: string) => {
      const record: ApiKeyRecord = { id, prefix: key.slice(0, 12), tier: 'free', owner: `${id}@example.org`, createdAt: '2026-03-06T12:00:00.000Z', revokedAt: null };
      await keys.insert({ ...record, hash: hashApiKey(key) });
    };
    await insert(first, 'first');
    // Alternating, so that each presentation finds the other key in the slot.
    for (let round = 0; round < 3; round++) {
      assert.equal((await authenticateApiKey(keys, first))?.id, 'first');
      assert.equal(await authenticateApiKey(keys, second), null, 'a key never issued');
    }
    await insert(second, 'second');
    for (let round = 0; round < 3; round++) {
      assert.equal((await authenticateApiKey(keys, first))?.id, 'first');
      assert.equal((await authenticateApiKey(keys, second))?.id, 'second');
    }
    // Too long to be a key, and a valid key with a character more: refused.
    assert.equal(await authenticateApiKey(keys, `${first}${'x'.repeat(70)}`), null);
    assert.equal(await authenticateApiKey(keys, `${first}x`), null);
  } finally {
    await store.close();
  }
});
