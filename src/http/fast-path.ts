import type { IncomingMessage, ServerResponse } from 'node:http';
import { hashApiKey, isWellFormedKey } from '../core/api-keys.js';
import { DEFAULT_RANGE, RANGES, type HistoryRange } from '../core/history.js';
import type { Clock, KeyStore, QuotaStore } from '../core/ports.js';
import { consumeDailyQuota, consumeDailyQuotaNow, type QuotaDecision, type QuotaLimits } from '../core/quota.js';
import { convertAt, parseAmount, type RateBook, type RateQuote } from '../core/rates.js';
import type { ServiceMetrics } from '../metrics.js';
import { compressed, httpDate, negotiateEncoding, strongEtag } from './caching.js';
import { CURRENCY_PATTERN } from './schemas.js';
import { CSV_TYPE, HISTORY_MAX_AGE, JSON_TYPE, liveCacheControl, renderConversion, renderQuote, type HistoryBodies } from './responses.js';

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
  /** Headers every API response carries (CORS, nosniff), as name/value pairs in lower case. */
  commonHeaders: readonly string[];
  /** True once the server is shutting down: Fastify then answers 503. */
  closing(): boolean;
  /** A response that failed after its request was counted. */
  onError(error: unknown): void;
}

type Route = '/api/v1/rate' | '/api/v1/convert' | '/api/v1/history';
const ROUTES: ReadonlySet<string> = new Set<Route>(['/api/v1/rate', '/api/v1/convert', '/api/v1/history']);
/** Characters a parameter may hold on the fast path; anything else (%, +, unicode…) goes the full way. */
const PLAIN = /^[A-Za-z0-9._~-]*$/;
/** The routes' own pattern: the fast path declines what their validation would refuse. */
const CURRENCY = new RegExp(CURRENCY_PATTERN);

interface Query {
  from?: string;
  to?: string;
  amount?: string;
  range?: string;
  format?: string;
  apikey?: string;
}
const KNOWN = new Set(['from', 'to', 'amount', 'range', 'format', 'apikey']);

/** The parameters of a plain query string; undefined when the full parser must decide. */
function plainQuery(search: string): Query | undefined {
  const query: Record<string, string> = {};
  if (search.length === 0) return query;
  for (const part of search.split('&')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const name = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (!PLAIN.test(name) || !PLAIN.test(value)) return undefined;
    if (!KNOWN.has(name)) continue;
    // A repeated parameter is an error the full path words.
    if (name in query) return undefined;
    query[name] = value;
  }
  return query;
}

interface Answer {
  route: Route;
  status: 200;
  body: string | Buffer;
  headers: string[];
  stale: boolean;
}

export function createFastPath(options: FastPathOptions): FastPath {
  const { book, histories, keys, quotas, limits, clock, metrics } = options;
  const peek = keys.peekByHash?.bind(keys);
  if (!peek) return (request, response, fallback) => fallback(request, response);

  /** The answer without the key's headers, when it is ready now. */
  function answer(route: Route, query: Query, request: IncomingMessage): Answer | undefined {
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
      const rendered = histories.peek(fromCode, toCode, range, csv);
      if (!rendered) return undefined;
      const encoding = negotiateEncoding(request.headers['accept-encoding']);
      const headers = [
        'vary', 'Accept-Encoding, X-Api-Key',
        'cache-control', `private, max-age=${HISTORY_MAX_AGE}`,
        'content-type', csv ? CSV_TYPE : JSON_TYPE,
      ];
      if (csv) headers.push('content-disposition', `attachment; filename="${rendered.name}"`);
      if (encoding === 'identity') {
        headers.push('etag', rendered.etag);
        return { route, status: 200, body: rendered.body, headers, stale: false };
      }
      const etag = `${rendered.etag.slice(0, -1)}-${encoding}"`;
      headers.push('etag', etag, 'content-encoding', encoding);
      return { route, status: 200, body: compressed(rendered.body, etag, encoding), headers, stale: false };
    }
    const quote: RateQuote | undefined = book.cachedQuote(fromCode, toCode);
    if (!quote) return undefined;
    const live = ['vary', 'X-Api-Key', 'cache-control', liveCacheControl(book, options.refreshSeconds), 'last-modified', httpDate(quote.asOf), 'content-type', JSON_TYPE];
    if (route === '/api/v1/rate') {
      const rendered = renderQuote(quote);
      live.push('etag', rendered.etag);
      return { route, status: 200, body: rendered.body, headers: live, stale: quote.stale };
    }
    const amountText = query.amount;
    // parseAmount refuses a bad amount by throwing, which hands the request on.
    if (amountText === undefined) return undefined;
    const body = renderConversion(convertAt(quote, parseAmount(amountText)));
    live.push('etag', strongEtag(body));
    return { route, status: 200, body, headers: live, stale: quote.stale };
  }

  return function fastPath(request, response, fallback) {
    const started = performance.now();
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const headers = request.headers;
    // A GET with a body (or body framing to check) is not everyday: the full path words it.
    const framed = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    if (request.method !== 'GET' || !ROUTES.has(path) || headers['if-none-match'] !== undefined || framed || options.closing()) {
      return fallback(request, response);
    }
    const query = plainQuery(mark === -1 ? '' : url.slice(mark + 1));
    if (!query) return fallback(request, response);
    const header = headers['x-api-key'];
    const presented = header !== undefined ? header : query.apikey;
    if (typeof presented !== 'string' || !isWellFormedKey(presented)) return fallback(request, response);
    const record = peek(hashApiKey(presented));
    if (!record || record.revokedAt !== null) return fallback(request, response);
    let ready: Answer | undefined;
    try {
      ready = answer(path as Route, query, request);
    } catch {
      ready = undefined;
    }
    if (!ready) return fallback(request, response);
    const found = ready;
    const respond = (decision: QuotaDecision): void => {
      // A refusal is not counted: the full path counts again, refuses and words the 429.
      if (!decision.allowed) return fallback(request, response);
      if (found.stale) metrics.staleServed();
      const out = found.headers;
      out.push(
        'x-ratelimit-limit', String(decision.limit),
        'x-ratelimit-remaining', String(decision.remaining),
        'x-ratelimit-reset', String(decision.resetAt),
        'content-length', String(typeof found.body === 'string' ? Buffer.byteLength(found.body) : found.body.length),
        ...options.commonHeaders,
      );
      try {
        response.writeHead(found.status, out);
        response.end(found.body);
      } catch (error) {
        // Counted already, so not handed on; the socket is the only way left to say it failed.
        options.onError(error);
        response.destroy();
        return;
      }
      metrics.httpRequest(found.route, 'GET', found.status, (performance.now() - started) / 1000);
      metrics.fastPathServed();
    };
    const now = consumeDailyQuotaNow(quotas, record, limits, clock);
    if (now) return respond(now);
    consumeDailyQuota(quotas, record, limits, clock).then(
      respond,
      // Not counted (the store could not be reached): the full path tries again and answers 503 if it must.
      () => fallback(request, response),
    );
  };
}
