import { createRequire } from 'node:module';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Keeps the process's memory close to what it holds. V8 sizes its heap for the machine: with
 * gigabytes free it lets the old generation grow past 100 MB before its first full collection,
 * and Buffers (the history bodies, and each one evicted from the cache) 64 MB past the last
 * collection. For a service that holds 100 MB that is most of its memory again, in garbage: the
 * rates loaded at start, the objects of requests in flight that a young-generation collection
 * promoted, and evicted bodies. `--max-old-space-size` near the live size makes V8 mark all the
 * time instead.
 *
 * So the service looks at its heap ten times a second and asks for a full collection when the
 * old generation and the Buffers have grown by a budget since the last one: once after the
 * history is loaded, every half minute or so under a steady load, a few times a second while the
 * history cache turns over. A collection of this heap pauses for about 10–30 ms, and the
 * collections asked for take at most a tenth of the time, so a working set that really grows
 * costs little.
 *
 * A collection frees the Buffers, but the C allocator (glibc's malloc, on Linux) keeps their
 * pages: the next bodies rarely fit the holes exactly, so after the history cache has turned
 * over, 12–17 MB of the process's resident memory were free pages between live allocations. So
 * after each collection the keeper also asks glibc to give free pages back (`malloc_trim`,
 * through the optional native module built from native/trim.c at install).
 */

export interface MemoryKeeperOptions {
  /** Growth of the old generation and external memory that asks for a collection. */
  budgetBytes?: number;
  /** How often the heap is looked at. */
  intervalMs?: number;
  /**
   * The most of the time the collections asked for may take: after one that took d ms, the next
   * waits d × (1 / share − 1) ms.
   */
  maxTimeShare?: number;
}

export interface MemoryKeeper {
  /** Collections asked for so far. */
  readonly collections: number;
  /** What the heap held (old generation and external memory) after the last collection. */
  readonly floorBytes: number;
  /** Times the C allocator was asked to give free pages back, one after each collection. */
  readonly trims: number;
  stop(): void;
}

export const DEFAULT_BUDGET_BYTES = 16 * 1024 * 1024;

/**
 * Memory that only a full collection frees: the heap's old spaces and the Buffers' memory (as
 * Node's allocator counts it: V8's own count of external memory lags a collection behind).
 */
export function collectableBytes(): number {
  let bytes = process.memoryUsage().arrayBuffers;
  for (const space of v8.getHeapSpaceStatistics()) {
    // The young generation is collected on its own every few megabytes.
    if (space.space_name !== 'new_space' && space.space_name !== 'new_large_object_space') bytes += space.space_used_size;
  }
  return bytes;
}

let exposedGc: (() => void) | null | undefined;

/**
 * V8's collector as a function, or null where it cannot be had. Node offers it only with
 * `--expose-gc` at start; the flag set at run time takes effect for contexts created after, so
 * a new context hands its `gc` out (the same isolate-wide collection).
 */
export function fullCollection(): (() => void) | null {
  if (exposedGc !== undefined) return exposedGc;
  const global = globalThis as { gc?: () => void };
  if (typeof global.gc === 'function') return (exposedGc = global.gc);
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('typeof gc === "function" ? gc : undefined');
    exposedGc = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    exposedGc = null;
  }
  return exposedGc;
}

interface NativeModule {
  /** True where the C allocator is glibc's. */
  available: boolean;
  /** malloc_trim(0): whether any memory was given back. */
  trim(): boolean;
}

let nativeTrim: (() => boolean) | null | undefined;

/**
 * glibc's malloc_trim, from the native module `npm install` builds (native/trim.c); null where it
 * was not built (no C compiler at install) or the allocator is not glibc's.
 */
export function allocatorTrim(): (() => boolean) | null {
  if (nativeTrim !== undefined) return nativeTrim;
  try {
    const native = createRequire(import.meta.url)('../build/Release/exrates_native.node') as NativeModule;
    nativeTrim = native.available ? () => native.trim() : null;
  } catch {
    nativeTrim = null;
  }
  return nativeTrim;
}

/** Starts watching; undefined where the collector cannot be had (the process runs as before). */
export function keepMemory(options: MemoryKeeperOptions = {}): MemoryKeeper | undefined {
  const gc = fullCollection();
  if (!gc) return undefined;
  const budget = options.budgetBytes ?? DEFAULT_BUDGET_BYTES;
  const waitFactor = 1 / (options.maxTimeShare ?? 0.1) - 1;
  let floor = collectableBytes();
  let nextAllowedAt = 0;
  let collections = 0;
  const trim = allocatorTrim();
  let trimPending = false;
  let trims = 0;
  const timer = setInterval(() => {
    // One look after the collection: V8 frees the Buffers' memory as it sweeps, just after.
    if (trimPending && trim) {
      trimPending = false;
      trim();
      trims += 1;
    }
    const bytes = collectableBytes();
    // V8's own full collections lower the floor too.
    if (bytes < floor) floor = bytes;
    if (bytes - floor < budget) return;
    const started = performance.now();
    if (started < nextAllowedAt) return;
    gc();
    collections += 1;
    const ended = performance.now();
    nextAllowedAt = ended + (ended - started) * waitFactor;
    floor = collectableBytes();
    trimPending = true;
  }, options.intervalMs ?? 100);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    get floorBytes() {
      return floor;
    },
    get trims() {
      return trims;
    },
    stop: () => clearInterval(timer),
  };
}
