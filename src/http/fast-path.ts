import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashApiKey, isWellFormedKey } from '../core/api-keys.js';
import { DEFAULT_RANGE, RANGES, type HistoryRange } from '../core/history.js';
import type { Clock, KeyStore, QuotaStore } from '../core/ports.js';
import { consumeDailyQuota, consumeDailyQuotaNow, type QuotaDecision, type QuotaLimits } from '../core/quota.js';
import type { RateBook, RateQuote } from '../core/rates.js';
import type { ServiceMetrics } from '../metrics.js';
import { httpDate, negotiateEncoding } from './caching.js';
import { CURRENCY_PATTERN } from './schemas.js';
import { CSV_TYPE, HISTORY_MAX_AGE, JSON_TYPE, createConversionBodies, liveCacheControl, renderQuote, type HistoryBodies, type RenderedBody } from './responses.js';

/**
 * The fast path answers the API's everyday request — a GET of rate, convert or history with a
 * plain query, a key the key cache already holds and an answer already computed — straight from
 * Node's request handler, without Fastify's routing, hooks and validation. Each of those costs
 * little, but together they are most of the time such a request takes.
 *
 * Written by hand because no framework offers "run the whole pipeline only when needed". It
 * decides without waiting and declines anything it is not sure of (percent-encoding, repeated
 * parameters, If-None-Match, HEAD, an unknown or revoked key, an answer not computed yet, a
 * refused quota, a failure), handing the request to Fastify untouched, which answers it the
 * full way. Bodies come from the same renderers as the routes' (src/http/responses.ts), and
 * the headers are those the routes and hooks set; a test compares the two ways response by
 * response.
 */

export type Fallback = (request: IncomingMessage, response: ServerResponse) => void;
export type FastPath = (request: IncomingMessage, response: ServerResponse, fallback: Fallback) => void;

export interface FastPathOptions {
  book: RateBook;
  histories: HistoryBodies;
  keys: KeyStore;
  quotas: QuotaStore;
  limits: QuotaLimits;
  clock: Clock;
  metrics: ServiceMetrics;
  refreshSeconds: number;
  /** The CORS Access-Control-Expose-Headers value the full path sends. */
  exposedHeaders: string;
  /** True once the server is shutting down: Fastify then answers 503. */
  closing(): boolean;
  /** A response that failed after its request was counted. */
  onError(error: unknown): void;
}

type Route = '/api/v1/rate' | '/api/v1/convert' | '/api/v1/history';
/** Characters a parameter may hold on the fast path; anything else (%, +, unicode…) goes the full way. */
const PLAIN = /^[A-Za-z0-9._~-]*$/;
/** The routes' own pattern: the fast path declines what their validation would refuse. */
const CURRENCY = new RegExp(CURRENCY_PATTERN);

/** The parameters the API reads; one object shape for every request. */
interface Query {
  from: string | undefined;
  to: string | undefined;
  amount: string | undefined;
  range: string | undefined;
  format: string | undefined;
  apikey: string | undefined;
}

const PARAMETERS: ReadonlySet<string> = new Set<keyof Query>(['from', 'to', 'amount', 'range', 'format', 'apikey']);

/**
 * The parameters of the plain query string url[start..]; undefined when the full parser must
 * decide (an empty or nameless part, a character that is not plain, a repeated parameter).
 */
function plainQuery(url: string, start: number): Query | undefined {
  const query: Query = { from: undefined, to: undefined, amount: undefined, range: undefined, format: undefined, apikey: undefined };
  const end = url.length;
  if (start >= end) return query;
  for (let at = start; ; ) {
    let amp = url.indexOf('&', at);
    if (amp === -1) amp = end;
    const eq = url.indexOf('=', at);
    if (eq <= at || eq > amp) return undefined;
    const name = url.slice(at, eq);
    const value = url.slice(eq + 1, amp);
    if (!PLAIN.test(name) || !PLAIN.test(value)) return undefined;
    // A repeated parameter is an error the full path words; unknown ones are ignored.
    if (PARAMETERS.has(name)) {
      const parameter = name as keyof Query;
      if (query[parameter] !== undefined) return undefined;
      query[parameter] = value;
    }
    if (amp === end) return query;
    at = amp + 1;
  }
}

/** A header name, compared without regard to case (lower is in lower case). */
const isNamed = (name: string, lower: string): boolean => name === lower || name.toLowerCase() === lower;

/** What the fast path reads from the request headers. */
interface Headers {
  apiKey: string | undefined;
  acceptEncoding: string | undefined;
}

/**
 * The headers the fast path needs, read from rawHeaders: request.headers would build an object of
 * every header on each request. Undefined when the full path must answer: If-None-Match, a body
 * (Content-Length but 0, or Transfer-Encoding), or a needed header sent twice.
 */
function readHeaders(raw: string[]): Headers | undefined {
  let apiKey: string | undefined;
  let acceptEncoding: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    switch (name.length) {
      case 9:
        if (isNamed(name, 'x-api-key')) {
          if (apiKey !== undefined) return undefined;
          apiKey = raw[i + 1]!;
        }
        break;
      case 13:
        if (isNamed(name, 'if-none-match')) return undefined;
        break;
      case 14:
        if (isNamed(name, 'content-length') && raw[i + 1] !== '0') return undefined;
        break;
      case 15:
        if (isNamed(name, 'accept-encoding')) {
          if (acceptEncoding !== undefined) return undefined;
          acceptEncoding = raw[i + 1]!;
        }
        break;
      case 17:
        if (isNamed(name, 'transfer-encoding')) return undefined;
        break;
    }
  }
  return { apiKey, acceptEncoding };
}

/** An answer ready to send but for the key's quota headers. */
interface Answer {
  route: Route;
  body: string | Buffer;
  length: number;
  etag: string;
  stale: boolean;
  /** Live answers (rate, convert): their Cache-Control and Last-Modified. */
  cacheControl: string;
  lastModified: string | undefined;
  contentType: string;
  vary: string;
  contentEncoding: string | undefined;
  contentDisposition: string | undefined;
}

export function createFastPath(options: FastPathOptions): FastPath {
  const { book, histories, keys, quotas, limits, clock, metrics, exposedHeaders } = options;
  const peek = keys.peekByHash?.bind(keys);
  if (!peek) return (request, response, fallback) => fallback(request, response);
  const series = {
    '/api/v1/rate': metrics.requestSeries('/api/v1/rate', 'GET', 200),
    '/api/v1/convert': metrics.requestSeries('/api/v1/convert', 'GET', 200),
    '/api/v1/history': metrics.requestSeries('/api/v1/history', 'GET', 200),
  };
  const historyCacheControl = `private, max-age=${HISTORY_MAX_AGE}`;
  const conversionBody = createConversionBodies();

  /** The answer without the key's headers, when it is ready now. */
  function answer(route: Route, query: Query, acceptEncoding: string | undefined, now: Date): Answer | undefined {
    const { from, to } = query;
    if (from === undefined || to === undefined || !CURRENCY.test(from) || !CURRENCY.test(to)) return undefined;
    const fromCode = from.toUpperCase();
    const toCode = to.toUpperCase();
    if (route === '/api/v1/history') {
      const range = (query.range ?? DEFAULT_RANGE) as HistoryRange;
      const format = query.format ?? 'json';
      if (!RANGES.includes(range) || (format !== 'json' && format !== 'csv')) return undefined;
      if (!book.current()) return undefined;
      const csv = format === 'csv';
      const encoding = negotiateEncoding(acceptEncoding);
      const rendered = histories.peek(fromCode, toCode, range, csv, encoding);
      if (!rendered) return undefined;
      const contentDisposition = csv ? `attachment; filename="${rendered.name}"` : undefined;
      const contentType = csv ? CSV_TYPE : JSON_TYPE;
      const body = rendered.body;
      return {
        route,
        body,
        length: body.length,
        etag: rendered.etag,
        stale: false,
        cacheControl: historyCacheControl,
        lastModified: undefined,
        contentType,
        vary: 'Accept-Encoding, X-Api-Key',
        contentEncoding: encoding === 'identity' ? undefined : encoding,
        contentDisposition,
      };
    }
    const quote: RateQuote | undefined = book.cachedQuote(fromCode, toCode);
    if (!quote) return undefined;
    const cacheControl = liveCacheControl(book, options.refreshSeconds, now);
    const lastModified = httpDate(quote.asOf);
    let rendered: RenderedBody;
    if (route === '/api/v1/rate') rendered = renderQuote(quote);
    else {
      if (query.amount === undefined) return undefined;
      // A bad amount throws, which hands the request on.
      rendered = conversionBody(quote, query.amount);
    }
    return { route, body: rendered.body, length: rendered.length, etag: rendered.etag, stale: quote.stale, cacheControl, lastModified, contentType: JSON_TYPE, vary: 'X-Api-Key', contentEncoding: undefined, contentDisposition: undefined };
  }

  /** Sends a counted answer; the headers are those the routes and hooks set, in one object of one shape. */
  function send(response: ServerResponse, found: Answer, decision: QuotaDecision, started: number): void {
    if (found.stale) metrics.staleServed();
    const headers: Record<string, string> = {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': exposedHeaders,
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': String(decision.remaining),
      'x-ratelimit-reset': String(decision.resetAt),
      vary: found.vary,
      etag: found.etag,
      'cache-control': found.cacheControl,
      'content-type': found.contentType,
      'x-content-type-options': 'nosniff',
      'content-length': String(found.length),
    };
    if (found.lastModified !== undefined) headers['last-modified'] = found.lastModified;
    if (found.contentDisposition !== undefined) headers['content-disposition'] = found.contentDisposition;
    if (found.contentEncoding !== undefined) headers['content-encoding'] = found.contentEncoding;
    try {
      response.writeHead(200, headers);
      response.end(found.body);
    } catch (error) {
      // Counted already, so not handed on; the socket is the only way left to say it failed.
      options.onError(error);
      response.destroy();
      return;
    }
    series[found.route].observe((performance.now() - started) / 1000);
    metrics.fastPathServed();
  }

  return function fastPath(request, response, fallback) {
    const started = performance.now();
    if (request.method !== 'GET' || options.closing()) return fallback(request, response);
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    if (path !== '/api/v1/rate' && path !== '/api/v1/convert' && path !== '/api/v1/history') return fallback(request, response);
    const headers = readHeaders(request.rawHeaders);
    if (!headers) return fallback(request, response);
    const query = plainQuery(url, mark === -1 ? url.length : mark + 1);
    if (!query) return fallback(request, response);
    const presented = headers.apiKey !== undefined ? headers.apiKey : query.apikey;
    if (presented === undefined || !isWellFormedKey(presented)) return fallback(request, response);
    const record = peek(hashApiKey(presented));
    if (!record || record.revokedAt !== null) return fallback(request, response);
    const at = clock.now();
    let found: Answer | undefined;
    try {
      found = answer(path, query, headers.acceptEncoding, at);
    } catch {
      found = undefined;
    }
    if (!found) return fallback(request, response);
    const now = consumeDailyQuotaNow(quotas, record, limits, clock, at);
    // A refusal is not counted: the full path counts again, refuses and words the 429.
    if (now) return now.allowed ? send(response, found, now, started) : fallback(request, response);
    const ready = found;
    consumeDailyQuota(quotas, record, limits, clock).then(
      (decision) => (decision.allowed ? send(response, ready, decision, started) : fallback(request, response)),
      // Not counted (the store could not be reached): the full path tries again and answers 503 if it must.
      () => fallback(request, response),
    );
  };
}
