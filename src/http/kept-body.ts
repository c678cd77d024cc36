import type { ServerResponse } from 'node:http';

/**
 * A body a cache keeps and sends by reference, freed as soon as the cache lets it go.
 *
 * Why: an evicted `Buffer` is otherwise freed only by V8's next full collection, which V8 starts
 * when memory outside its heap has grown by 64 MB; under a cache's turnover that much was held
 * by bodies nobody could reach. Freed by hand, since no library frees a `Buffer` on demand: its
 * `ArrayBuffer` is transferred away (`transfer(0)`), which gives its memory back at once.
 *
 * A body must never be freed while a response still reads it: every body the cache hands out is
 * counted out (`takeOut`) and back (`sent`) once its response has handed it to the kernel. A body
 * counted out and never back (a response that never finishes, a path that forgets) is simply left
 * to the collector, as before.
 */
export interface KeptBody {
  readonly body: Buffer;
  /** Hand-outs not back yet. */
  out: number;
  /** The cache has let it go. */
  dropped: boolean;
}

export function keptBody(body: Buffer): KeptBody {
  return { body, out: 0, dropped: false };
}

/** The cache hands the body out to a response. */
export function takeOut(kept: KeptBody): void {
  kept.out += 1;
}

/** `response` has been ended with the body (or without it, a 304 or HEAD): back once nothing of it waits to be written. */
export function sent(kept: KeptBody, response: ServerResponse): void {
  // Ended with nothing left in the response or its socket: the kernel has every byte, the body is
  // not read again. A response not ended yet (its hooks still run) gives it back once finished.
  if (response.writableEnded && response.writableLength === 0) back(kept);
  else response.once('finish', () => back(kept));
}

/** The cache no longer holds the body. */
export function drop(kept: KeptBody): void {
  kept.dropped = true;
  if (kept.out === 0) free(kept);
}

function back(kept: KeptBody): void {
  kept.out -= 1;
  if (kept.dropped && kept.out === 0) free(kept);
}

function free(kept: KeptBody): void {
  const { body } = kept;
  const memory = body.buffer;
  // Only memory the body has to itself (ownBytes, compressBody): a slice of a shared slab is left alone.
  if (!(memory instanceof ArrayBuffer) || body.byteOffset !== 0 || body.byteLength !== memory.byteLength || memory.detached) return;
  try {
    memory.transfer(0);
  } catch {
    // Memory that cannot be detached (made so by whoever allocated it) is left to the collector.
  }
}
