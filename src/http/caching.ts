import { hash } from 'node:crypto';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { createByteLru } from './byte-lru.js';
import { addVary } from './headers.js';

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

export interface HttpCachesOptions {
  /** Bytes of compressed page and asset bodies kept. */
  compressedBytes?: number;
  /** Distinct Accept-Encoding headers whose negotiation is kept. */
  encodings?: number;
}

/**
 * The caches of the HTTP layer that are not bodies of the API's answers: made by buildApp, one
 * set per app, each with its bound.
 */
export interface HttpCaches {
  /** The encoding to send for an Accept-Encoding header; clients send few distinct ones, so each is parsed once. */
  negotiateEncoding(accepted: string | undefined): Encoding;
  /** A body compressed once for every repeat of the same request (the portal's page and assets). */
  compressed(body: string | Buffer, etag: string, encoding: 'br' | 'gzip'): Buffer;
}

export function createHttpCaches(options: HttpCachesOptions = {}): HttpCaches {
  const compressedBodies = createByteLru<Buffer>(options.compressedBytes ?? 4 * 1024 * 1024);
  const negotiated = new LRUCache<string, Encoding>({ max: options.encodings ?? 1_000 });
  return {
    negotiateEncoding(accepted) {
      if (accepted === undefined || accepted.length === 0) return 'identity';
      let encoding = negotiated.get(accepted);
      if (encoding === undefined) {
        encoding = (negotiate(accepted, ['br', 'gzip', 'identity']) as Encoding | null) ?? 'identity';
        negotiated.set(accepted, encoding);
      }
      return encoding;
    },
    compressed(body, etag, encoding) {
      const key = `${encoding}:${etag}`;
      let buffer = compressedBodies.get(key);
      if (!buffer) {
        buffer = compressBody(body, encoding);
        compressedBodies.set(key, buffer, buffer.length);
      }
      return buffer;
    },
  };
}

/** An HTTP date (Last-Modified) of an ISO instant. */
export function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}

/** A representation that a conditional GET may answer with a 304. */
export interface Conditional {
  body: string | Buffer;
  /** The representation's strong ETag: a compressed body has its own. */
  etag: string;
  /** The body's length in bytes, when already known. */
  length?: number;
  contentType: string;
  cacheControl: string;
  /** What the representation depends on besides the URL, added to what earlier steps named (the key step: the key headers). */
  vary?: string;
  lastModified?: string;
  /** Content-Encoding of a compressed body. */
  encoding?: 'br' | 'gzip';
  disposition?: string;
}

/**
 * Conditional GET, for every cacheable answer: a 200 with its validators, or a 304 when the client
 * already holds the representation: by If-None-Match when sent (weak comparison), else by
 * If-Modified-Since against Last-Modified (RFC 9110 §13.2.2). A HEAD gets the same headers.
 */
export function sendConditional(request: FastifyRequest, reply: FastifyReply, answer: Conditional): FastifyReply {
  if (answer.vary !== undefined) addVary(reply, answer.vary);
  reply.header('etag', answer.etag);
  reply.header('cache-control', answer.cacheControl);
  if (answer.lastModified !== undefined) reply.header('last-modified', answer.lastModified);
  if (answer.disposition !== undefined) reply.header('content-disposition', answer.disposition);
  const ifNoneMatch = request.headers['if-none-match'];
  const unchanged =
    ifNoneMatch !== undefined
      ? matchesIfNoneMatch(ifNoneMatch, answer.etag)
      : answer.lastModified !== undefined && notModifiedSince(request.headers['if-modified-since'], answer.lastModified);
  if (unchanged) return reply.code(304).send();
  reply.header('content-type', answer.contentType);
  if (answer.encoding !== undefined) reply.header('content-encoding', answer.encoding);
  if (answer.length !== undefined) reply.header('content-length', String(answer.length));
  return reply.send(answer.body);
}

export interface CacheableBody {
  body: string | Buffer;
  /** The body's strong ETag, when the caller already knows it. */
  etag?: string;
  contentType: string;
  cacheControl: string;
}

/**
 * A body offered plain, gzip or br as the client accepts, each form with its own strong ETag and
 * compressed once (the portal's page and assets).
 *
 * Written by hand: @fastify/compress compresses every answer again as a stream, drops
 * Content-Length and keeps one ETag for every encoding; @fastify/static serves files from disk by
 * name, while these bodies are made in memory under content-hashed names.
 */
export function sendCompressible(request: FastifyRequest, reply: FastifyReply, caches: HttpCaches, response: CacheableBody): FastifyReply {
  const baseTag = response.etag ?? strongEtag(response.body);
  const accepted = request.headers['accept-encoding'];
  const encoding = caches.negotiateEncoding(typeof accepted === 'string' ? accepted : undefined);
  const common = { contentType: response.contentType, cacheControl: response.cacheControl, vary: 'Accept-Encoding' };
  if (encoding === 'identity') return sendConditional(request, reply, { ...common, body: response.body, etag: baseTag });
  const etag = encodedEtag(baseTag, encoding);
  return sendConditional(request, reply, { ...common, body: caches.compressed(response.body, etag, encoding), etag, encoding });
}
