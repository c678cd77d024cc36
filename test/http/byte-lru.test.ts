import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createByteLru } from '../../src/http/byte-lru.js';

test('keeps at most its byte budget, dropping the least recently used first', () => {
  const lru = createByteLru<string>(100);
  lru.set('a', 'A', 40);
  lru.set('b', 'B', 40);
  assert.equal(lru.get('a'), 'A'); // a is now the most recent
  lru.set('c', 'C', 40); // 120 > 100: b, the least recent, goes
  assert.equal(lru.get('b'), undefined);
  assert.equal(lru.get('a'), 'A');
  assert.equal(lru.get('c'), 'C');
  assert.equal(lru.bytes, 80);
  assert.equal(lru.size, 2);
});

test('replacing an entry counts its new size only, and an entry over the budget is not kept', () => {
  const lru = createByteLru<string>(100);
  lru.set('a', 'A', 60);
  lru.set('a', 'A2', 30);
  assert.equal(lru.bytes, 30);
  assert.equal(lru.get('a'), 'A2');
  lru.set('huge', 'H', 101);
  assert.equal(lru.get('huge'), undefined);
  assert.equal(lru.bytes, 30);
});
