import type { IncomingMessage, ServerResponse } from 'node:http';
import { AjvCompiler } from '@fastify/ajv-compiler';
import proxyAddr from '@fastify/proxy-addr';
import { parse as parseQueryString } from 'fast-querystring';
import { authenticateApiKey, type PresentedKeyHashes } from '../core/api-keys.js';
import { andThen, type MaybePromise } from '../core/maybe.js';
import { consumeDemoQuota, DEMO_KEY, demoUsage, looksLikeDemoKey, type DemoKeyPolicy } from '../core/demo-key.js';
import { DomainError, UnavailableError, type ErrorCode } from '../core/errors.js';
import { DEFAULT_RANGE, type HistoryRange } from '../core/history.js';
import type { ApiKeyRecord, Clock, KeyStore, QuotaStore, Tier } from '../core/ports.js';
import { consumeDailyQuota, dailyUsage, type QuotaCalendar, type QuotaDecision, type QuotaLimits, type QuotaUsage } from '../core/quota.js';
import { parseDate, type RateBook, type RateQuote } from '../core/rates.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { httpDate, matchesIfNoneMatch, negotiateEncoding, notModifiedSince } from './caching.js';
import { CORS, SECURITY_HEADERS } from './headers.js';
import { requestDefect } from './request-checks.js';
import { sent } from './kept-body.js';
import { PROBLEM_CONTENT_TYPE, notFound, problemFromDomainError, problemOf, type Problem } from './problem.js';
import {
  CSV_TYPE,
  HISTORY_MAX_AGE,
  JSON_TYPE,
  SETTLED_CACHE_CONTROL,
  createConversionBodies,
  liveCacheControl,
  renderQuote,
  renderUsage,
  type HistoryBodies,
  type ManyRatesQuery,
  type RenderedManyRates,
  type RenderedBody,
} from './responses.js';
import { ConvertQuery, HistoryQuery, NoQuery, PARAM_CODES, RateQuery, RatesQuery } from './schemas.js';

/**
 * The keyed API (rate, convert, history): every request to these paths is answered here, whether
 * it reached the server's request handler directly or came through Fastify (inject, or a path
 * only Fastify's router resolves). Query validation with the routes' schemas, the key and its
 * quota, the answer and its headers (caching, ETag/304, CORS, rate limits, nosniff), problem
 * answers, metrics and request logs live here and nowhere else.
 *
 * Written without Fastify's request lifecycle because its routing, hooks and reply object cost
 * more than the whole of an everyday answer; Fastify keeps the documents, portal and operations
 * routes, and still documents these routes in the OpenAPI document from the same schemas
 * (src/http/routes/api.ts). Query parsing and validation are Fastify's own libraries with
 * Fastify's options, so a query means here what it means to Fastify.
 */

export const KEYED_ROUTES = ['/api/v1/rate', '/api/v1/convert', '/api/v1/history', '/api/v1/rates', '/api/v1/currencies', '/api/v1/usage'] as const;
export type KeyedRoute = (typeof KEYED_ROUTES)[number];

/**
 * The keyed route a path names, exactly (no decoding, no trailing slash), as one of the constant
 * strings above. Compared, not looked up: a lookup by the request's own new string makes V8
 * intern that string first, on every request, and so does every later lookup keyed by it.
 */
export function keyedRoute(path: string): KeyedRoute | undefined {
  for (const route of KEYED_ROUTES) if (route === path) return route;
  return undefined;
}

export type Query = Record<string, unknown>;

/** A query string parsed as Fastify's router parses it. */
export function parseQuery(text: string): Query {
  return text.length === 0 ? {} : (parseQueryString(text) as Query);
}

const EXPOSED_HEADERS = CORS.exposedHeaders.join(', ');
const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

/** The scheme a 401 asks for: no registered one fits an API key, so it is named, with where the key goes. */
export const WWW_AUTHENTICATE = 'ApiKey realm="exrates", header="X-Api-Key", query="apikey"';

/** Schemas are validated as Fastify validates them: its Ajv compiler, with the options buildApp gives Fastify. */
export const AJV_OPTIONS = { coerceTypes: 'array', allErrors: false, removeAdditional: false } as const;

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** Turns a schema failure into the problem code of the offending parameter (SPEC §7). */
export function validationProblem(issues: readonly ValidationIssue[]): DomainError {
  const issue = issues[0]!;
  if (issue.keyword === 'required') {
    const param = String(issue.params.missingProperty ?? '').replace(/^\//, '');
    return new DomainError('missing_parameter', `The query parameter '${param}' is required.`, { param });
  }
  const param = issue.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  const code: ErrorCode = (PARAM_CODES as Record<string, ErrorCode>)[param] ?? 'missing_parameter';
  const details: Record<string, string> = {
    invalid_currency: `'${param}' must be one ISO 4217 alphabetic code, such as EUR (case-insensitive).`,
    invalid_amount:
      'amount must be given once, as a non-negative decimal with up to 18 integer digits and up to 12 decimals, using "." as the decimal point (for example 100 or 99.95); no sign, exponent, spaces or thousands separators.',
    invalid_range: 'range must be given once, as one of 1m, 3m, 6m, 1y, 5y.',
    invalid_format: 'format must be given once, as json or csv.',
    invalid_date: 'date must be given once, as a calendar date written YYYY-MM-DD (for example 2026-03-02), not after today (UTC).',
  };
  return new DomainError(code, details[code] ?? `The query parameter '${param}' is not valid.`, { param });
}

export interface KeyedApiOptions {
  book: RateBook;
  histories: HistoryBodies;
  /** The currencies list's body (src/http/responses.ts createCurrencyListBodies). */
  currencyList: () => MaybePromise<RenderedBody>;
  /** /rates answers (src/http/responses.ts createManyRatesBodies). */
  manyRates: (query: ManyRatesQuery) => MaybePromise<RenderedManyRates>;
  keys: KeyStore;
  keyHashes: PresentedKeyHashes;
  quotas: QuotaStore;
  limits: QuotaLimits;
  clock: Clock;
  quotaCalendar: QuotaCalendar;
  metrics: ServiceMetrics;
  log: Logger;
  refreshSeconds: number;
  contactEmail: string;
  /** The portal's public demo key, when the operator enables it (src/core/demo-key.ts). */
  demo: DemoKeyPolicy | undefined;
  /** Trusted reverse proxies (EXRATES_TRUST_PROXY): the demo key's per-address quota counts the client they report. */
  trustedProxies: readonly string[];
  /** Log every request (two lines, as Fastify logs the other routes' requests). */
  logRequests: boolean;
  /** Request ids shared with Fastify's, so that ids are unique across both. */
  nextRequestId(): string;
}

/** An API path (under /api/) that names no endpoint: answered 404 here, so that it counts as SPEC §6 says. */
export const UNKNOWN_API_PATH = 'unmatched';
export type ApiRoute = KeyedRoute | typeof UNKNOWN_API_PATH;

/** True for a path under /api/: a request to it with a valid key counts, even when it names nothing. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/api/');
}

export interface KeyedApi {
  /** Answers a request to a keyed route, or the 404 of an unknown API path; query is its query string parsed (parseQuery). Never throws. */
  serve(request: IncomingMessage, response: ServerResponse, route: ApiRoute, query: Query): void;
}

/**
 * An answer being built: its headers in the order they are first set, kept flat
 * ([name, value, …]) as writeHead takes them, which spares Node a walk over an object's own
 * properties on every answer. Setting a name again replaces its value in place, as on an object.
 */
class AnswerHeaders {
  readonly flat: string[] = [];

  set(name: string, value: string): void {
    const flat = this.flat;
    for (let i = 0; i < flat.length; i += 2) {
      if (flat[i] === name) {
        flat[i + 1] = value;
        return;
      }
    }
    flat.push(name, value);
  }

  assign(entries: ReadonlyArray<readonly [string, string]>): void {
    for (const [name, value] of entries) this.set(name, value);
  }
}

interface Validator {
  (query: Query): boolean;
  errors?: ValidationIssue[] | null;
}

export function createKeyedApi(options: KeyedApiOptions): KeyedApi {
  const { book, histories, keys, keyHashes, quotas, quotaCalendar, limits, clock, metrics, log } = options;
  const compile = AjvCompiler()({}, { customOptions: AJV_OPTIONS }) as (input: { schema: unknown }) => Validator;
  const schemas: Record<KeyedRoute, unknown> = {
    '/api/v1/rate': RateQuery,
    '/api/v1/convert': ConvertQuery,
    '/api/v1/history': HistoryQuery,
    '/api/v1/rates': RatesQuery,
    '/api/v1/currencies': NoQuery,
    '/api/v1/usage': NoQuery,
  };
  // Compiled on a route's first request: compiling them all would lengthen every start.
  const validators = new Map<KeyedRoute, Validator>();
  const validator = (route: KeyedRoute): Validator => {
    let validate = validators.get(route);
    if (!validate) validators.set(route, (validate = compile({ schema: schemas[route] })));
    return validate;
  };
  const trusted = options.trustedProxies.length > 0 ? proxyAddr.compile([...options.trustedProxies]) : undefined;
  const conversionBody = createConversionBodies();
  const historyCacheControl = `private, max-age=${HISTORY_MAX_AGE}`;
  const unauthorizedDetail = `Send a valid API key in the X-Api-Key header or the apikey query parameter. To get a key, or the pro tier, e-mail ${options.contactEmail}.`;

  /** Sends a whole answer, security headers included; a HEAD request gets its headers only (Node leaves the body out). */
  function send(response: ServerResponse, status: number, headers: AnswerHeaders, body: string | Buffer | undefined, length?: number): void {
    headers.assign(SECURITY_ENTRIES);
    if (body !== undefined) headers.set('content-length', String(length ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.length)));
    response.writeHead(status, headers.flat);
    response.end(body);
  }

  function sendProblem(response: ServerResponse, headers: AnswerHeaders, problem: Problem): number {
    headers.set('content-type', PROBLEM_CONTENT_TYPE);
    send(response, problem.status, headers, JSON.stringify(problem));
    return problem.status;
  }

  /** Adds the quota headers of a decision; a refusal is counted and answered with a 429, whose status is returned. */
  function quotaRefusal(response: ServerResponse, headers: AnswerHeaders, decision: QuotaDecision, detail: () => string): number | undefined {
    headers.set('x-ratelimit-limit', String(decision.limit));
    headers.set('x-ratelimit-remaining', String(decision.remaining));
    headers.set('x-ratelimit-reset', String(decision.resetAt));
    if (decision.allowed) return undefined;
    metrics.quotaRejected();
    headers.set('retry-after', String(decision.retryAfter));
    return sendProblem(response, headers, problemOf('quota_exceeded', detail()));
  }

  /** The client address the demo key's per-address quota counts. */
  function clientAddress(request: IncomingMessage): string {
    return trusted ? proxyAddr(request, trusted) : (request.socket.remoteAddress ?? '');
  }

  /** Who a request's key names: a stored key, the demo key, or nobody (a 401). */
  type Caller = { key: ApiKeyRecord; demo?: undefined } | { demo: DemoKeyPolicy; key?: undefined };

  function identify(request: IncomingMessage, query: Query): MaybePromise<Caller | undefined> {
    // The header wins over the query parameter; a header sent twice is no key.
    const header = request.headers['x-api-key'];
    const presented = header !== undefined ? (typeof header === 'string' ? header : undefined) : typeof query.apikey === 'string' ? query.apikey : undefined;
    // The demo key is no stored key: it is recognised here, by its exact value, or refused.
    if (presented !== undefined && looksLikeDemoKey(presented)) return options.demo && presented === DEMO_KEY ? { demo: options.demo } : undefined;
    return andThen(authenticateApiKey(keys, presented, keyHashes), (record) => (record ? { key: record } : undefined));
  }

  /** A 401 names the scheme it wants (RFC 9110 §15.5.2): an API key, in a header or the query. */
  function unauthorized(response: ServerResponse, headers: AnswerHeaders): number {
    headers.set('www-authenticate', WWW_AUTHENTICATE);
    return sendProblem(response, headers, problemOf('unauthorized', unauthorizedDetail));
  }

  /**
   * Counts the request against its caller's quota, which every request with a valid key does,
   * whatever its answer (SPEC §6), except one refused for the quota itself. The status sent when it
   * was refused (429); undefined when admitted.
   */
  function refusal(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, caller: Caller): MaybePromise<number | undefined> {
    if (caller.demo) {
      return andThen(consumeDemoQuota(quotas, caller.demo, clientAddress(request), limits, clock), (decision) =>
        quotaRefusal(response, headers, decision, () =>
          decision.exhausted === 'shared'
            ? `The demo key's requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`
            : `This address's ${decision.limit} demo requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`,
        ),
      );
    }
    return andThen(consumeDailyQuota(quotas, caller.key, limits, clock, quotaCalendar), (decision) =>
      quotaRefusal(response, headers, decision, () => `This key's ${decision.limit} requests for today are used up; the quota resets at 00:00 UTC.`),
    );
  }

  /**
   * The caller's usage today, read without counting (a client may poll it), with the quota headers
   * of that same reading. Never stored by a shared cache: it is one key's and changes with every
   * request.
   */
  function usage(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, caller: Caller): MaybePromise<number> {
    const reading: Promise<QuotaUsage> = caller.demo
      ? demoUsage(quotas, caller.demo, clientAddress(request), limits, clock)
      : dailyUsage(quotas, caller.key, limits, clock);
    const tier: Tier = caller.demo ? caller.demo.tier : caller.key.tier;
    return reading.then((used) => {
      quotaRefusal(response, headers, used, () => '');
      headers.set('cache-control', 'no-store');
      headers.set('vary', 'X-Api-Key');
      headers.set('content-type', JSON_TYPE);
      send(response, 200, headers, renderUsage(tier, used));
      return 200;
    });
  }

  /**
   * Sends a 200 with a strong ETag per representation, or a 304 when the client already holds it:
   * by If-None-Match when sent, else by If-Modified-Since against Last-Modified (RFC 9110 §13.2.2).
   * `etag` is the representation's (a compressed body has its own).
   */
  function sendCacheable(
    request: IncomingMessage,
    response: ServerResponse,
    headers: AnswerHeaders,
    answer: { body: string | Buffer; length?: number; etag: string; vary: string; cacheControl: string; lastModified?: string; disposition?: string; contentType: string; encoding?: string },
  ): number {
    headers.set('vary', answer.vary);
    headers.set('etag', answer.etag);
    headers.set('cache-control', answer.cacheControl);
    if (answer.lastModified !== undefined) headers.set('last-modified', answer.lastModified);
    if (answer.disposition !== undefined) headers.set('content-disposition', answer.disposition);
    const ifNoneMatch = request.headers['if-none-match'];
    const unchanged =
      ifNoneMatch !== undefined
        ? matchesIfNoneMatch(ifNoneMatch, answer.etag)
        : answer.lastModified !== undefined && notModifiedSince(request.headers['if-modified-since'], answer.lastModified);
    if (unchanged) {
      send(response, 304, headers, undefined);
      return 304;
    }
    headers.set('content-type', answer.contentType);
    if (answer.encoding !== undefined) headers.set('content-encoding', answer.encoding);
    send(response, 200, headers, answer.body, answer.length);
    return 200;
  }

  function sendJson(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, rendered: RenderedBody, cacheControl: string, lastModified: string | undefined): number {
    return sendCacheable(request, response, headers, {
      body: rendered.body,
      length: rendered.length,
      etag: rendered.etag,
      vary: 'X-Api-Key',
      cacheControl,
      ...(lastModified === undefined ? {} : { lastModified }),
      contentType: JSON_TYPE,
    });
  }

  /** The answer of a valid, admitted request. */
  function answer(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, route: KeyedRoute, query: Query): MaybePromise<number> {
    const from = query.from as string;
    const to = query.to as string;
    // Only rate, convert and rates take a date; elsewhere it is an unknown parameter, ignored.
    const dated = () => (query.date === undefined ? undefined : parseDate(query.date as string, clock));
    switch (route) {
      case '/api/v1/history': {
        const csv = query.format === 'csv';
        const accepted = request.headers['accept-encoding'];
        const encoding = negotiateEncoding(accepted);
        // The form that is sent is the one asked for, and the only one kept.
        return andThen(histories.render(from, to, (query.range as HistoryRange | undefined) ?? DEFAULT_RANGE, csv, encoding), (rendered) => {
          const status = sendCacheable(request, response, headers, {
            body: rendered.kept.body,
            etag: rendered.etag,
            vary: 'Accept-Encoding, X-Api-Key',
            cacheControl: historyCacheControl,
            lastModified: rendered.lastModified,
            ...(csv ? { disposition: `attachment; filename="${rendered.name}"` } : {}),
            contentType: csv ? CSV_TYPE : JSON_TYPE,
            ...(encoding === 'identity' ? {} : { encoding }),
          });
          sent(rendered.kept, response);
          return status;
        });
      }
      case '/api/v1/currencies':
        // Changes only with the rates: cacheable until the next refresh.
        return andThen(options.currencyList(), (rendered) => sendJson(request, response, headers, rendered, liveCacheControl(book, options.refreshSeconds), undefined));
      case '/api/v1/rates': {
        const date = dated();
        const many = options.manyRates({ from, ...(to === undefined ? {} : { to }), ...(date === undefined ? {} : { date }), ...(query.amount === undefined ? {} : { amount: query.amount as string }) });
        return andThen(many, ({ rendered, settled, newestAsOf }) =>
          sendJson(request, response, headers, rendered, settled ? SETTLED_CACHE_CONTROL : liveCacheControl(book, options.refreshSeconds), newestAsOf === undefined ? undefined : httpDate(newestAsOf)),
        );
      }
      case '/api/v1/usage':
        throw new Error('usage is answered before counting');
      default: {
        const date = dated();
        const render = (quote: RateQuote) => (route === '/api/v1/rate' ? renderQuote(quote) : conversionBody(quote, query.amount as string));
        if (date !== undefined) {
          // A past day's rate never changes once a later day is published: it may be kept for long.
          return andThen(book.rateOnDate(from, to, date), (dated) =>
            sendJson(request, response, headers, render(dated.quote), dated.settled ? SETTLED_CACHE_CONTROL : liveCacheControl(book, options.refreshSeconds), httpDate(dated.quote.asOf)),
          );
        }
        return andThen(book.liveRate(from, to), (quote) =>
          sendJson(request, response, headers, render(quote), liveCacheControl(book, options.refreshSeconds), httpDate(quote.asOf)),
        );
      }
    }
  }

  /**
   * A request answered with an error whatever its key: it still counts against a valid key's quota,
   * as every request with one does (SPEC §6), and carries the quota headers; a key with no quota
   * left gets the 429 instead.
   */
  function countedError(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, query: Query, answer: () => number): MaybePromise<number> {
    return andThen(identify(request, query), (caller) =>
      caller === undefined ? answer() : andThen(refusal(request, response, headers, caller), (refused) => refused ?? answer()),
    );
  }

  function respond(request: IncomingMessage, response: ServerResponse, headers: AnswerHeaders, route: ApiRoute, query: Query): MaybePromise<number> {
    const method = request.method;
    // Every answer, errors included, is readable cross-origin.
    headers.set('access-control-allow-origin', CORS.origin);
    headers.set('access-control-expose-headers', EXPOSED_HEADERS);
    if (route === UNKNOWN_API_PATH) return countedError(request, response, headers, query, () => sendProblem(response, headers, notFound(method, request.url)));
    // The API is read-only: any other method, with any body, is a 405 that says what is allowed
    // (SPEC §7). OPTIONS is CORS's, answered by the server's CORS handling.
    if (method !== 'GET' && method !== 'HEAD') {
      return countedError(request, response, headers, query, () => {
        headers.set('allow', 'GET, HEAD');
        return sendProblem(response, headers, problemOf('method_not_allowed', `${method} is not allowed here; use GET or HEAD.`));
      });
    }
    const defect = requestDefect(request);
    if (defect) {
      headers.assign(Object.entries(defect.headers));
      return sendProblem(response, headers, defect.problem);
    }
    return andThen(identify(request, query), (caller) => {
      if (caller === undefined) return unauthorized(response, headers);
      if (route === '/api/v1/usage') return usage(request, response, headers, caller);
      return andThen(refusal(request, response, headers, caller), (refused) => {
        if (refused !== undefined) return refused;
        const validate = validator(route);
        if (!validate(query)) throw validationProblem(validate.errors!);
        return answer(request, response, headers, route, query);
      });
    });
  }

  /** The problem answer of a failed request, when nothing was sent yet. */
  function failed(response: ServerResponse, headers: AnswerHeaders, error: unknown, requestLog: () => Logger): number {
    if (error instanceof DomainError) {
      if (error.retryAfterSeconds !== undefined) headers.set('retry-after', String(error.retryAfterSeconds));
      return sendProblem(response, headers, problemFromDomainError(error));
    }
    if (error instanceof UnavailableError) {
      requestLog().warn({ dependency: error.dependency, err: String((error as { cause?: unknown }).cause) }, 'dependency unavailable');
      headers.set('retry-after', '5');
      const problem = problemOf('internal_error', `The service cannot reach ${error.dependency} right now. Try again in a few seconds.`);
      return sendProblem(response, headers, { ...problem, status: 503, title: 'Service unavailable' });
    }
    requestLog().error({ err: error }, 'request failed');
    return sendProblem(response, headers, problemOf('internal_error', 'The server failed to answer this request; the failure has been logged.'));
  }

  /**
   * Answers a request, without a promise of its own when everything it needs is held (a cached
   * key, an in-memory quota count, a computed answer); a step that must wait continues when its
   * value arrives.
   */
  function serve(request: IncomingMessage, response: ServerResponse, route: ApiRoute, query: Query): void {
    const started = performance.now();
    const headers = new AnswerHeaders();
    // A request's logger, made when it first logs: most requests never do.
    let id: string | undefined;
    let child: Logger | undefined;
    const requestLog = () => (child ??= log.child({ reqId: (id = options.nextRequestId()) }));
    if (options.logRequests) requestLog().info({ req: { id, method: request.method, url: request.url, ip: clientAddress(request) } }, 'incoming request');
    const finish = (status: number) => {
      const seconds = (performance.now() - started) / 1000;
      metrics.httpRequest(route, request.method ?? '', status, seconds);
      if (options.logRequests) requestLog().info({ res: { statusCode: status }, responseTime: seconds * 1000 }, 'request completed');
    };
    const fail = (error: unknown) => {
      try {
        if (!response.headersSent) return finish(failed(response, headers, error, requestLog));
        requestLog().error({ err: error }, 'response failed');
      } catch (failure) {
        requestLog().error({ err: failure }, 'response failed');
      }
      // The answer failed after its headers went out: the socket is the only way left to say so.
      response.destroy();
    };
    let outcome: MaybePromise<number>;
    try {
      outcome = respond(request, response, headers, route, query);
    } catch (error) {
      return fail(error);
    }
    if (outcome instanceof Promise) outcome.then(finish, fail);
    else finish(outcome);
  }

  return { serve };
}
