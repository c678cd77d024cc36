/**
 * A least-recently-used cache bounded by the bytes of what it holds, for rendered and compressed
 * response bodies: a count bound would let a few large 5-year histories take all the memory.
 */
export interface ByteLru<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, bytes: number): void;
  readonly bytes: number;
  readonly size: number;
}

export function createByteLru<V>(maxBytes: number): ByteLru<V> {
  const entries = new Map<string, { value: V; bytes: number }>();
  let total = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      // Re-inserting moves the entry to the young end of the map's order.
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value, bytes) {
      const existing = entries.get(key);
      if (existing) {
        total -= existing.bytes;
        entries.delete(key);
      }
      if (bytes > maxBytes) return;
      entries.set(key, { value, bytes });
      total += bytes;
      for (const [oldest, entry] of entries) {
        if (total <= maxBytes) break;
        entries.delete(oldest);
        total -= entry.bytes;
      }
    },
    get bytes() {
      return total;
    },
    get size() {
      return entries.size;
    },
  };
}
