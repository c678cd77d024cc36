import { hash } from 'node:crypto';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TextKeyedMap } from '../core/text-key.js';
import { createByteLru } from './byte-lru.js';

export function strongEtag(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}

/** If-None-Match uses the weak comparison (RFC 9110 §13.1.2): W/ prefixes are ignored. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === bare);
}

/**
 * If-Modified-Since (RFC 9110 §13.1.3): true when the representation was last modified at or
 * before the given date. A header that is not an HTTP date is ignored.
 */
export function notModifiedSince(header: string | undefined, lastModified: string): boolean {
  if (header === undefined) return false;
  const since = Date.parse(header);
  return !Number.isNaN(since) && Date.parse(lastModified) <= since;
}

export type Encoding = 'br' | 'gzip' | 'identity';

/** The strong ETag of a compressed form of the body whose ETag is `etag`. */
export function encodedEtag(etag: string, encoding: 'br' | 'gzip'): string {
  return `${etag.slice(0, -1)}-${encoding}"`;
}

/**
 * A text as UTF-8 bytes in memory of their own, for a body that is kept: `Buffer.from` carves
 * texts of up to half of `Buffer.poolSize` (64 KB since Node.js 26) out of a shared slab, and a
 * kept body would hold its whole slab, and every evicted neighbour in it, for as long as it is kept.
 */
export function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/**
 * A body compressed as the service compresses every body it sends compressed, in memory of its
 * own size: zlib writes into 16 KB chunks, and a kept 10 KB body would otherwise hold all 16.
 */
export function compressBody(body: string | Buffer, encoding: 'br' | 'gzip'): Buffer {
  const out = encoding === 'br' ? brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }) : gzipSync(body, { level: 6 });
  if (out.buffer.byteLength === out.length) return out;
  const exact = Buffer.allocUnsafeSlow(out.length);
  out.copy(exact);
  return exact;
}

/**
 * Compressed bodies by ETag and encoding, for the portal's page and assets (history bodies are
 * kept with the history answers, src/http/responses.ts): a body that does not change is
 * compressed once for every repeat of the same request.
 */
const compressedCache = createByteLru<Buffer>(4 * 1024 * 1024);

export function compressed(body: string | Buffer, etag: string, encoding: 'br' | 'gzip'): Buffer {
  const key = `${encoding}:${etag}`;
  let buffer = compressedCache.get(key);
  if (!buffer) {
    buffer = compressBody(body, encoding);
    compressedCache.set(key, buffer, buffer.length);
  }
  return buffer;
}

const httpDates = new Map<string, string>();
/** asOf values repeat across requests until the next refresh: format each once. */
export function httpDate(iso: string): string {
  let date = httpDates.get(iso);
  if (date === undefined) {
    if (httpDates.size > 10_000) httpDates.clear();
    date = new Date(iso).toUTCString();
    httpDates.set(iso, date);
  }
  return date;
}

/** By the header's text (src/core/text-key.ts): not a map keyed by the request's own string. */
const negotiated = new TextKeyedMap<Encoding>(1_001);
/** The encoding to send for an Accept-Encoding header; clients send few distinct ones, so each is parsed once. */
export function negotiateEncoding(accepted: string | undefined): Encoding {
  if (accepted === undefined || accepted.length === 0) return 'identity';
  let encoding = negotiated.get(accepted);
  if (encoding === undefined) {
    encoding = (negotiate(accepted, ['br', 'gzip', 'identity']) as Encoding | null) ?? 'identity';
    negotiated.set(accepted, encoding);
  }
  return encoding;
}

export interface CacheableBody {
  /** A large body is best given as a Buffer, encoded once rather than on every send. */
  body: string | Buffer;
  /** The body's strong ETag, when the caller already knows it. */
  etag?: string;
  contentType: string;
  cacheControl: string;
  /** Offer gzip and br when the client accepts them. */
  compressible?: boolean;
}

/**
 * Sends a 200 with a strong ETag per representation (a compressed body has its own), or a 304
 * when the client already holds it. For Fastify's routes (the portal); the keyed API answers its own.
 */
export function sendCacheable(request: FastifyRequest, reply: FastifyReply, response: CacheableBody): FastifyReply {
  const baseTag = response.etag ?? strongEtag(response.body);
  let encoding: Encoding = 'identity';
  if (response.compressible) {
    reply.header('Vary', 'Accept-Encoding');
    const accepted = request.headers['accept-encoding'];
    if (typeof accepted === 'string') encoding = negotiateEncoding(accepted);
  }
  const etag = encoding === 'identity' ? baseTag : encodedEtag(baseTag, encoding);
  reply.header('ETag', etag);
  reply.header('Cache-Control', response.cacheControl);
  if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) {
    return reply.code(304).send();
  }
  reply.type(response.contentType);
  if (encoding === 'identity') return reply.send(response.body);
  reply.header('Content-Encoding', encoding);
  return reply.send(compressed(response.body, etag, encoding));
}
