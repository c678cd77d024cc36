import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { FeedError } from '../core/errors.js';

export interface FetchBytesOptions {
  /** Covers the whole exchange, body included: a server that stalls mid-body times out too. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** The Accept header, for upstreams that choose the format by it. */
  accept?: string;
}

/** An upstream answer with a non-2xx status; callers may fall back on particular statuses (404). */
export class FeedHttpError extends FeedError {
  readonly url: string;
  readonly status: number;

  constructor(url: string, status: number, statusText: string) {
    super(`${url}: HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
    this.url = url;
    this.status = status;
  }
}

/** The useful part of a fetch failure, for messages. */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // undici reports network failures as a bare "fetch failed" with the useful part in `cause`.
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (!code) return `${error.message}: ${cause.message}`;
    // Node writes the code into the message too ("getaddrinfo ENOTFOUND host"): name it once, first.
    const rest = cause.message.replace(code, '').replace(/\s+/g, ' ').trim();
    return `${error.message}: ${code}${rest ? `: ${rest}` : ''}`;
  }
  return error.message;
}

/**
 * Fetches a URL into memory. A caller's own abort propagates unchanged, since it is a decision and
 * not a feed failure; everything else (status, timeout, network, short body) becomes a FeedError.
 */
export async function fetchBytes(url: string, options: FetchBytesOptions): Promise<Uint8Array> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;

  const fail = (error: unknown): never => {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) {
      throw new FeedError(`${url}: no complete answer within ${options.timeoutMs} ms`, { cause: error });
    }
    throw new FeedError(`${url}: ${describeCause(error)}`, { cause: error });
  };

  let response: Response;
  try {
    response = await fetch(url, { signal, ...(options.accept ? { headers: { accept: options.accept } } : {}) });
  } catch (error) {
    return fail(error);
  }

  if (!response.ok) {
    // Release the connection; the error page itself is of no use.
    await response.body?.cancel().catch(() => undefined);
    throw new FeedHttpError(url, response.status, response.statusText);
  }

  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    return fail(error);
  }

  // Content-Length counts encoded bytes, so it is only comparable when the body was not decoded.
  const declared = response.headers.get('content-length');
  const encoding = response.headers.get('content-encoding');
  if (declared !== null && (encoding === null || encoding.toLowerCase() === 'identity')) {
    const expected = Number(declared);
    if (Number.isSafeInteger(expected) && bytes.length < expected) {
      throw new FeedError(`${url}: truncated body, ${bytes.length} of ${expected} bytes`);
    }
  }
  return bytes;
}

/** Reads an `http(s)://` URL, a `file://` URL or a plain file path. */
export async function readSource(location: string, options: FetchBytesOptions): Promise<Uint8Array> {
  if (/^https?:\/\//i.test(location)) return fetchBytes(location, options);

  let path: string;
  try {
    path = /^file:/i.test(location) ? fileURLToPath(location) : location;
  } catch (error) {
    throw new FeedError(`${location}: not a usable file URL: ${(error as Error).message}`, { cause: error });
  }
  try {
    return await readFile(path, options.signal ? { signal: options.signal } : {});
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FeedError(`${path}: no such file`, { cause: error });
    throw new FeedError(`${path}: cannot be read: ${code ?? (error as Error).message}`, { cause: error });
  }
}
