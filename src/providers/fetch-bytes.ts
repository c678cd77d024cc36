import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { FeedError } from '../core/errors.js';

export interface FetchBytesOptions {
  /** Covers the whole exchange, body included: a server that stalls mid-body times out too. */
  timeoutMs: number;
  /**
   * The most bytes of the answer read: as sent (a declared Content-Length over it is refused before
   * the body is read) and as inflated from gzip, deflate or br (counted as the body streams in, the
   * read stopped at the limit). Each provider sizes it to its largest real document, with a wide
   * margin: an upstream's document is hostile until bounded, and a bomb or an endless body must
   * fail like any bad document instead of filling the heap.
   */
  maxBytes: number;
  signal?: AbortSignal;
  /** The Accept header, for upstreams that choose the format by it. */
  accept?: string;
  /** A POST of this body instead of a GET, for upstreams that answer only that way (SOAP services). */
  post?: { body: string; contentType: string; headers?: Record<string, string> };
  /**
   * Read the body of a non-2xx answer too (under the same limit) and keep it as the
   * FeedHttpError's `body`: for upstreams that say only there why they refused a request.
   */
  keepErrorBody?: boolean;
  /**
   * For a URL that carries a secret: applied to every message, and the errors then keep no
   * `cause` (the network library's errors may quote the URL as it was).
   */
  redact?: (text: string) => string;
}

/** An upstream answer with a non-2xx status; callers may fall back on particular statuses (404). */
export class FeedHttpError extends FeedError {
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  /** The error page, when the fetch asked to keep it (keepErrorBody). */
  readonly body: Uint8Array | undefined;

  constructor(url: string, status: number, statusText: string, body?: Uint8Array) {
    super(`${url}: HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
    this.url = url;
    this.status = status;
    this.statusText = statusText;
    this.body = body;
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
  const redact = options.redact;
  const shown = redact ? redact(url) : url;
  const withCause = (error: unknown): ErrorOptions | undefined => (redact ? undefined : { cause: error });

  const fail = (error: unknown): never => {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) {
      throw new FeedError(`${shown}: no complete answer within ${options.timeoutMs} ms`, withCause(error));
    }
    const message = `${shown}: ${describeCause(error)}`;
    throw new FeedError(redact ? redact(message) : message, withCause(error));
  };

  let response: Response;
  try {
    const headers: Record<string, string> = {
      ...(options.accept ? { accept: options.accept } : {}),
      ...(options.post ? { 'content-type': options.post.contentType, ...options.post.headers } : {}),
    };
    response = await fetch(url, { signal, headers, ...(options.post ? { method: 'POST', body: options.post.body } : {}) });
  } catch (error) {
    return fail(error);
  }

  if (!response.ok) {
    if (options.keepErrorBody) throw new FeedHttpError(shown, response.status, response.statusText, await readBody(response, shown, options.maxBytes, fail));
    // Release the connection; the error page itself is of no use.
    await response.body?.cancel().catch(() => undefined);
    throw new FeedHttpError(shown, response.status, response.statusText);
  }

  return readBody(response, shown, options.maxBytes, fail);
}

/** A byte count as a person reads it: 256 KiB, 16 MiB. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The body of an answer, at most `maxBytes` of it as sent and as inflated, streamed so that
 * nothing past the limit is held; a body over it is a FeedError naming the limit, and a body shorter
 * than its declared length one naming both. `url` is the address as messages may show it; `fail`
 * turns a read that broke off (timeout, abort, reset) into the caller's error.
 */
async function readBody(response: Response, url: string, maxBytes: number, fail: (error: unknown) => never): Promise<Uint8Array> {
  // Content-Length counts the bytes as sent, so it is checked against the limit before any is read,
  // and against what arrived only when the body was not decoded.
  const declaredText = response.headers.get('content-length');
  const declared = declaredText === null ? undefined : Number(declaredText);
  const encoding = response.headers.get('content-encoding')?.toLowerCase();
  const decoded = encoding !== undefined && encoding !== 'identity';
  if (declared !== undefined && Number.isSafeInteger(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new FeedError(`${url}: the answer declares ${declared} bytes, over this feed's limit of ${sizeText(maxBytes)}; not read`);
  }

  const chunks: Uint8Array[] = [];
  let length = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        return fail(error);
      }
      if (chunk.done) break;
      length += chunk.value.length;
      if (length > maxBytes) {
        await reader.cancel().catch(() => undefined);
        const what = decoded ? `inflated from ${encoding}` : 'read';
        throw new FeedError(`${url}: the answer is longer than this feed's limit of ${sizeText(maxBytes)} (${what}); read no further`);
      }
      chunks.push(chunk.value);
    }
  }

  if (!decoded && declared !== undefined && Number.isSafeInteger(declared) && length < declared) {
    throw new FeedError(`${url}: truncated body, ${length} of ${declared} bytes`);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** UTF-8 text of a feed body; a FeedError naming the feed for bytes that are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array, feed: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new FeedError(`${feed}: the body is not UTF-8 text`, { cause: error });
  }
}

/** The text of a feed body in a legacy single-byte encoding (`windows-1251`); a FeedError naming the feed for bytes the encoding does not define. */
export function decodeLegacy(bytes: Uint8Array, encoding: 'windows-1251', feed: string): string {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch (error) {
    throw new FeedError(`${feed}: the body is not ${encoding} text`, { cause: error });
  }
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
    // The same limit as over HTTP: a file named by EXRATES_FILE_URL may be another system's output.
    const { size } = await stat(path);
    if (size > options.maxBytes) throw new FeedError(`${path}: ${size} bytes, over this feed's limit of ${sizeText(options.maxBytes)}; not read`);
    return await readFile(path, options.signal ? { signal: options.signal } : {});
  } catch (error) {
    if (error instanceof FeedError) throw error;
    if (options.signal?.aborted) throw options.signal.reason;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FeedError(`${path}: no such file`, { cause: error });
    throw new FeedError(`${path}: cannot be read: ${code ?? (error as Error).message}`, { cause: error });
  }
}
