import type { IncomingMessage, ServerResponse } from 'node:http';
import { AjvCompiler } from '@fastify/ajv-compiler';
import proxyAddr from '@fastify/proxy-addr';
import { parse as parseQueryString } from 'fast-querystring';
import { authenticateApiKey } from '../core/api-keys.js';
import { andThen, type MaybePromise } from '../core/maybe.js';
import { consumeDemoQuota, DEMO_KEY, looksLikeDemoKey, type DemoKeyPolicy } from '../core/demo-key.js';
import { DomainError, UnavailableError, type ErrorCode } from '../core/errors.js';
import { DEFAULT_RANGE, type HistoryRange } from '../core/history.js';
import type { Clock, KeyStore, QuotaStore } from '../core/ports.js';
import { consumeDailyQuota, type QuotaDecision, type QuotaLimits } from '../core/quota.js';
import type { RateBook } from '../core/rates.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { httpDate, matchesIfNoneMatch, negotiateEncoding } from './caching.js';
import { CORS, SECURITY_HEADERS } from './headers.js';
import { requestDefect } from './request-checks.js';
import { PROBLEM_CONTENT_TYPE, problemFromDomainError, problemOf, type Problem } from './problem.js';
import { CSV_TYPE, HISTORY_MAX_AGE, JSON_TYPE, createConversionBodies, liveCacheControl, renderQuote, type HistoryBodies } from './responses.js';
import { ConvertQuery, HistoryQuery, PARAM_CODES, RateQuery } from './schemas.js';

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

export const KEYED_ROUTES = ['/api/v1/rate', '/api/v1/convert', '/api/v1/history'] as const;
export type KeyedRoute = (typeof KEYED_ROUTES)[number];

/** The keyed route a path names, exactly (no decoding, no trailing slash). */
export function keyedRoute(path: string): KeyedRoute | undefined {
  return path === '/api/v1/rate' || path === '/api/v1/convert' || path === '/api/v1/history' ? path : undefined;
}

export type Query = Record<string, unknown>;

/** A query string parsed as Fastify's router parses it. */
export function parseQuery(text: string): Query {
  return text.length === 0 ? {} : (parseQueryString(text) as Query);
}

const EXPOSED_HEADERS = CORS.exposedHeaders.join(', ');

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
  };
  return new DomainError(code, details[code] ?? `The query parameter '${param}' is not valid.`, { param });
}

export interface KeyedApiOptions {
  book: RateBook;
  histories: HistoryBodies;
  keys: KeyStore;
  quotas: QuotaStore;
  limits: QuotaLimits;
  clock: Clock;
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

export interface KeyedApi {
  /** Answers a request to a keyed route; query is its query string parsed (parseQuery). Never throws. */
  serve(request: IncomingMessage, response: ServerResponse, route: KeyedRoute, query: Query): void;
}

/** An answer being built: its headers, in the order they are sent. */
type Headers = Record<string, string>;

interface Validator {
  (query: Query): boolean;
  errors?: ValidationIssue[] | null;
}

export function createKeyedApi(options: KeyedApiOptions): KeyedApi {
  const { book, histories, keys, quotas, limits, clock, metrics, log } = options;
  const compile = AjvCompiler()({}, { customOptions: AJV_OPTIONS }) as (input: { schema: unknown }) => Validator;
  const validators: Record<KeyedRoute, Validator> = {
    '/api/v1/rate': compile({ schema: RateQuery }),
    '/api/v1/convert': compile({ schema: ConvertQuery }),
    '/api/v1/history': compile({ schema: HistoryQuery }),
  };
  const trusted = options.trustedProxies.length > 0 ? proxyAddr.compile([...options.trustedProxies]) : undefined;
  const conversionBody = createConversionBodies();
  const historyCacheControl = `private, max-age=${HISTORY_MAX_AGE}`;
  const unauthorizedDetail = `Send a valid API key in the X-Api-Key header or the apikey query parameter. To get a key, or the pro tier, e-mail ${options.contactEmail}.`;

  /** Sends a whole answer, security headers included; a HEAD request gets its headers only (Node leaves the body out). */
  function send(response: ServerResponse, status: number, headers: Headers, body: string | Buffer | undefined, length?: number): void {
    Object.assign(headers, SECURITY_HEADERS);
    if (body !== undefined) headers['content-length'] = String(length ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.length));
    response.writeHead(status, headers);
    response.end(body);
  }

  function sendProblem(response: ServerResponse, headers: Headers, problem: Problem): number {
    headers['content-type'] = PROBLEM_CONTENT_TYPE;
    send(response, problem.status, headers, JSON.stringify(problem));
    return problem.status;
  }

  /** Adds the quota headers of a decision; a refusal is counted and answered with a 429, whose status is returned. */
  function quotaRefusal(response: ServerResponse, headers: Headers, decision: QuotaDecision, detail: () => string): number | undefined {
    headers['x-ratelimit-limit'] = String(decision.limit);
    headers['x-ratelimit-remaining'] = String(decision.remaining);
    headers['x-ratelimit-reset'] = String(decision.resetAt);
    if (decision.allowed) return undefined;
    metrics.quotaRejected();
    headers['retry-after'] = String(decision.retryAfter);
    return sendProblem(response, headers, problemOf('quota_exceeded', detail()));
  }

  /** The client address the demo key's per-address quota counts. */
  function clientAddress(request: IncomingMessage): string {
    return trusted ? proxyAddr(request, trusted) : (request.socket.remoteAddress ?? '');
  }

  /**
   * Counts the request against its key's quota, which every request with a valid key does, whatever
   * its answer (SPEC §6), except one refused for the quota itself. The status sent when it was
   * refused (401, 429); undefined when admitted.
   */
  function refusal(request: IncomingMessage, response: ServerResponse, headers: Headers, query: Query): MaybePromise<number | undefined> {
    // The header wins over the query parameter; a header sent twice is no key.
    const header = request.headers['x-api-key'];
    const presented = header !== undefined ? (typeof header === 'string' ? header : undefined) : typeof query.apikey === 'string' ? query.apikey : undefined;
    // The demo key is no stored key: it is recognised here, by its exact value, or refused.
    if (presented !== undefined && looksLikeDemoKey(presented)) {
      const demo = options.demo;
      if (!demo || presented !== DEMO_KEY) return sendProblem(response, headers, problemOf('unauthorized', unauthorizedDetail));
      return andThen(consumeDemoQuota(quotas, demo, clientAddress(request), limits, clock), (decision) =>
        quotaRefusal(response, headers, decision, () =>
          decision.exhausted === 'shared'
            ? `The demo key's requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`
            : `This address's ${decision.limit} demo requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`,
        ),
      );
    }
    return andThen(authenticateApiKey(keys, presented), (record) => {
      if (!record) return sendProblem(response, headers, problemOf('unauthorized', unauthorizedDetail));
      return andThen(consumeDailyQuota(quotas, record, limits, clock), (decision) =>
        quotaRefusal(response, headers, decision, () => `This key's ${decision.limit} requests for today are used up; the quota resets at 00:00 UTC.`),
      );
    });
  }

  /**
   * Sends a 200 with a strong ETag per representation, or a 304 when the client already holds it.
   * `etag` is the representation's (a compressed body has its own).
   */
  function sendCacheable(
    request: IncomingMessage,
    response: ServerResponse,
    headers: Headers,
    answer: { body: string | Buffer; length?: number; etag: string; vary: string; cacheControl: string; lastModified?: string; disposition?: string; contentType: string; encoding?: string },
  ): number {
    headers.vary = answer.vary;
    headers.etag = answer.etag;
    headers['cache-control'] = answer.cacheControl;
    if (answer.lastModified !== undefined) headers['last-modified'] = answer.lastModified;
    if (answer.disposition !== undefined) headers['content-disposition'] = answer.disposition;
    if (matchesIfNoneMatch(request.headers['if-none-match'], answer.etag)) {
      send(response, 304, headers, undefined);
      return 304;
    }
    headers['content-type'] = answer.contentType;
    if (answer.encoding !== undefined) headers['content-encoding'] = answer.encoding;
    send(response, 200, headers, answer.body, answer.length);
    return 200;
  }

  /** The answer of a valid, admitted request. */
  function answer(request: IncomingMessage, response: ServerResponse, headers: Headers, route: KeyedRoute, query: Query): MaybePromise<number> {
    const from = query.from as string;
    const to = query.to as string;
    if (route === '/api/v1/history') {
      const csv = query.format === 'csv';
      const accepted = request.headers['accept-encoding'];
      const encoding = negotiateEncoding(accepted);
      // The form that is sent is the one asked for, and the only one kept.
      return andThen(histories.render(from, to, (query.range as HistoryRange | undefined) ?? DEFAULT_RANGE, csv, encoding), (rendered) =>
        sendCacheable(request, response, headers, {
          body: rendered.body,
          etag: rendered.etag,
          vary: 'Accept-Encoding, X-Api-Key',
          cacheControl: historyCacheControl,
          ...(csv ? { disposition: `attachment; filename="${rendered.name}"` } : {}),
          contentType: csv ? CSV_TYPE : JSON_TYPE,
          ...(encoding === 'identity' ? {} : { encoding }),
        }),
      );
    }
    return andThen(book.liveRate(from, to), (quote) => {
      const rendered = route === '/api/v1/rate' ? renderQuote(quote) : conversionBody(quote, query.amount as string);
      return sendCacheable(request, response, headers, {
        body: rendered.body,
        length: rendered.length,
        etag: rendered.etag,
        vary: 'X-Api-Key',
        cacheControl: liveCacheControl(book, options.refreshSeconds),
        lastModified: httpDate(quote.asOf),
        contentType: JSON_TYPE,
      });
    });
  }

  function respond(request: IncomingMessage, response: ServerResponse, headers: Headers, route: KeyedRoute, query: Query): MaybePromise<number> {
    const method = request.method;
    // The API is read-only: any other method, with any body, is a 405 that says what is allowed
    // (SPEC §7). OPTIONS is CORS's, answered by the server's CORS handling.
    if (method !== 'GET' && method !== 'HEAD') {
      headers.allow = 'GET, HEAD';
      return sendProblem(response, headers, problemOf('method_not_allowed', `${method} is not allowed here; use GET or HEAD.`));
    }
    const defect = requestDefect(request);
    if (defect) {
      Object.assign(headers, defect.headers);
      return sendProblem(response, headers, defect.problem);
    }
    headers['access-control-allow-origin'] = CORS.origin;
    headers['access-control-expose-headers'] = EXPOSED_HEADERS;
    return andThen(refusal(request, response, headers, query), (refused) => {
      if (refused !== undefined) return refused;
      const validate = validators[route];
      if (!validate(query)) throw validationProblem(validate.errors!);
      return answer(request, response, headers, route, query);
    });
  }

  /** The problem answer of a failed request, when nothing was sent yet. */
  function failed(response: ServerResponse, headers: Headers, error: unknown, requestLog: () => Logger): number {
    if (error instanceof DomainError) {
      if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
      return sendProblem(response, headers, problemFromDomainError(error));
    }
    if (error instanceof UnavailableError) {
      requestLog().warn({ dependency: error.dependency, err: String((error as { cause?: unknown }).cause) }, 'dependency unavailable');
      headers['retry-after'] = '5';
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
  function serve(request: IncomingMessage, response: ServerResponse, route: KeyedRoute, query: Query): void {
    const started = performance.now();
    const headers: Headers = {};
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
