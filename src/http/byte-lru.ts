import { LRUCache } from 'lru-cache';

/**
 * A least-recently-used cache bounded by the bytes of what it holds, for rendered and compressed
 * response bodies: a count bound would let a few large 5-year histories take all the memory.
 * Over lru-cache, whose hits only relink array indexes: a Map re-inserted on every hit rebuilds
 * its table every few thousand hits, and under load those tables, promoted before they die,
 * grew the old generation by tens of megabytes between collections.
 */
export interface ByteLru<V extends NonNullable<unknown>, K extends string | number = string> {
  get(key: K): V | undefined;
  /** What is held under the key, leaving the order of use as it is. */
  peek(key: K): V | undefined;
  set(key: K, value: V, bytes: number): void;
  readonly bytes: number;
  readonly size: number;
}

/** `dropped` is called with each value the cache lets go: evicted, replaced or deleted. */
export function createByteLru<V extends NonNullable<unknown>, K extends string | number = string>(maxBytes: number, dropped?: (value: V) => void): ByteLru<V, K> {
  const cache = new LRUCache<K, V>({ maxSize: maxBytes, ...(dropped ? { dispose: (value: V) => dropped(value) } : {}) });
  return {
    get: (key) => cache.get(key),
    peek: (key) => cache.peek(key),
    set(key, value, bytes) {
      if (bytes > maxBytes) {
        // Not kept, and what was held under the key is out of date.
        cache.delete(key);
        return;
      }
      cache.set(key, value, { size: Math.max(1, bytes) });
    },
    get bytes() {
      return cache.calculatedSize;
    },
    get size() {
      return cache.size;
    },
  };
}
