import type { FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { authenticateApiKey, type PresentedKeyHashes } from '../core/api-keys.js';
import { consumeDemoQuota, DEMO_KEY, demoUsage, looksLikeDemoKey, type DemoKeyPolicy } from '../core/demo-key.js';
import { DomainError, type ErrorCode } from '../core/errors.js';
import { RANGES } from '../core/history.js';
import type { ApiKeyRecord, Clock, KeyStore, QuotaStore, Tier } from '../core/ports.js';
import { consumeDailyQuota, dailyUsage, type QuotaCalendar, type QuotaDecision, type QuotaLimits, type QuotaUsage } from '../core/quota.js';
import type { ServiceMetrics } from '../metrics.js';
import { addVary, KEY_VARY, setQuotaHeaders } from './headers.js';
import { notFound, problemOf, sendProblem, type Problem } from './problem.js';
import { PARAM_CODES } from './schemas.js';

/**
 * The key and quota step of the keyed API, run on every request before its body or query is
 * looked at (an onRequest hook): a route whose config says `keyed` needs a valid key, and a
 * `counted` one counts the request against that key's daily quota. Every request with a valid
 * key to a path under /api/ counts, whatever its answer (SPEC §6): a path that names nothing (404)
 * and a method other than GET or HEAD (405) included; one refused for the quota itself does not.
 * Validation comes after this step, so an invalid parameter with a valid key counts too.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Needs an API key: `counted` requests count against its quota, `read` ones (usage) do not. */
    keyed?: 'counted' | 'read';
  }
  interface FastifyRequest {
    /** Who the request's key names, on a keyed route. */
    caller: Caller | undefined;
  }
}

/** Who a request's key names: a stored key, or the demo key. */
export type Caller = { key: ApiKeyRecord; demo?: undefined } | { demo: DemoKeyPolicy; key?: undefined };

/**
 * Where an entry takes the key from, and what its 401 asks for. Both entries read X-Api-Key and
 * Authorization: Bearer <key> (what MCP clients and generic HTTP clients send); the API also reads
 * the apikey query parameter. The header X-Api-Key wins, and a header sent twice is no key.
 *
 * The challenge names the ApiKey scheme with where the key goes, never Bearer alone: a `Bearer`
 * challenge on a 401 is what MCP clients (the MCP authorization spec, RFC 9728) take as "this
 * server uses OAuth" and start an authorization flow from, looking for protected-resource metadata
 * that this service does not serve; with the ApiKey challenge they show the 401 problem instead.
 */
export type KeyEntry = 'api' | 'mcp';
export const WWW_AUTHENTICATE: Readonly<Record<KeyEntry, string>> = {
  api: 'ApiKey realm="exrates", header="X-Api-Key", query="apikey"',
  mcp: 'ApiKey realm="exrates", header="X-Api-Key"',
};

/** The key a request presents to an entry, or undefined for none. */
function presentedKey(request: FastifyRequest, entry: KeyEntry): string | undefined {
  const header = request.headers['x-api-key'];
  if (header !== undefined) return typeof header === 'string' ? header : undefined;
  const bearer = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined || entry === 'mcp') return bearer;
  const query = (request.query as Record<string, unknown>).apikey;
  return typeof query === 'string' ? query : undefined;
}

/** The options Fastify's Ajv compiles the schemas with: a parameter given twice is an array, and so a 400. */
export const AJV_OPTIONS = { coerceTypes: 'array', allErrors: false, removeAdditional: false } as const;

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** Turns a schema failure into the problem code of the offending parameter (SPEC §7); `ranges` are those /history takes. */
export function validationProblem(issues: readonly ValidationIssue[], ranges: readonly string[] = RANGES): DomainError {
  const issue = issues[0]!;
  if (issue.keyword === 'required') {
    const param = String(issue.params.missingProperty ?? '').replace(/^\//, '');
    return new DomainError('missing_parameter', `The query parameter '${param}' is required.`, { param });
  }
  const param = issue.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  const code: ErrorCode = (PARAM_CODES as Record<string, ErrorCode>)[param] ?? 'missing_parameter';
  const date = `${param} must be given once, as a calendar date written YYYY-MM-DD (for example 2026-03-02), not after today (UTC).`;
  const currency = `'${param}' must be given once, as one ISO 4217 alphabetic code, such as EUR (case-insensitive).`;
  const details: Record<string, string> = {
    from: currency,
    to: currency,
    amount:
      'amount must be given once, as a non-negative decimal with up to 18 integer digits and up to 12 decimals, using "." as the decimal point (for example 100 or 99.95); no sign, exponent, spaces or thousands separators.',
    range: `range must be given once, as one of ${ranges.join(', ')}.`,
    group: 'group must be given once, as week or month.',
    format: 'format must be given once, as json, csv or ndjson.',
    date,
    start: date,
    end: date,
    expand: 'expand must be given once, as provenance.',
    source: 'source must be given once, as a configured provider id (GET /api/v1/providers lists them).',
  };
  return new DomainError(code, details[param] ?? `The query parameter '${param}' is not valid.`, { param });
}

/** True for a path under /api/: a request to it with a valid key counts, even when it names nothing. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/api/');
}

/** A 400 for a request whose framing or headers HTTP/1.1 forbids. */
function malformed(detail: string): Problem {
  return problemOf('malformed_request', detail);
}

/** How many times the raw request carries a header, `name` in lower case (Node keeps only the first Host). */
function headerCount(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!;
    // Lowercasing makes a new string: only a name of the same length can match.
    if (raw.length === name.length && raw.toLowerCase() === name) count += 1;
  }
  return count;
}

/**
 * What makes a request unanswerable whatever it asks for, checked from its headers before anything
 * reads its body or key: a body whose length cannot be known (RFC 9112 §6.3: a transfer coding
 * other than a final chunked, which Node's parser lets through) is a 400; an HTTP/1.1 request must
 * carry exactly one Host header (RFC 9112 §3.2; Node's own check is off, as it would answer an
 * empty 400, and Node keeps only the first of two). Both close the connection after the answer.
 * So does the answer to any chunked body: a route that does not read it (every one but POST /mcp)
 * would otherwise leave Node to read it to its end, however long, to keep the connection.
 */
export function requestDefect(request: FastifyRequest, reply: FastifyReply, closeAfterAnswer: (socket: object) => void): Problem | undefined {
  const coding = request.headers['transfer-encoding'];
  if (coding !== undefined) {
    closing(request, reply, closeAfterAnswer);
    if (!/(?:^|,)[ \t]*chunked[ \t]*$/i.test(coding)) return malformed('Transfer-Encoding must end with chunked; the request body cannot be delimited.');
  }
  const hosts = headerCount(request.raw.rawHeaders, 'host');
  if (hosts > 1) {
    closing(request, reply, closeAfterAnswer);
    return malformed('The request carries more than one Host header.');
  }
  if (hosts === 0 && request.raw.httpVersion === '1.1') return malformed('An HTTP/1.1 request must carry a Host header.');
  return undefined;
}

/**
 * A body announced longer than its route reads (1 KiB, 64 KiB on /mcp): the 413, refused from the
 * Content-Length header before a byte of the body is read (a preParsing hook, after the key step,
 * so that a request without a valid key is the 401 and one with a valid key counts, SPEC §6).
 * Whatever answers such a request closes the connection after it (marked by the app's onRequest
 * hook), so the body is never read. A chunked body is bounded while it is read (Fastify's
 * bodyLimit) where a route reads it; where none does, its connection closes (requestDefect).
 */
export function oversizedBody(request: FastifyRequest): Problem | undefined {
  const declared = request.headers['content-length'];
  // Most requests have no body: Fastify makes the route's options anew at each read.
  if (declared === undefined) return undefined;
  const length = Number(declared);
  const limit = request.routeOptions.bodyLimit;
  if (!(length > limit)) return undefined;
  return problemOf('payload_too_large', `The request body announces ${length} bytes; this path reads at most ${limit}.`);
}

/** Marks the answer as the connection's last. */
function closing(request: FastifyRequest, reply: FastifyReply, closeAfterAnswer: (socket: object) => void): void {
  closeAfterAnswer(request.raw.socket);
  reply.header('connection', 'close');
}

export interface KeyStepOptions {
  keys: KeyStore;
  /** Hashes of keys presented lately (made by createDeps). */
  keyHashes: PresentedKeyHashes;
  quotas: QuotaStore;
  limits: QuotaLimits;
  clock: Clock;
  /** The current UTC day, worked out once a day (made by createDeps). */
  quotaCalendar: QuotaCalendar;
  metrics: ServiceMetrics;
  contactEmail: string;
  /** The portal's public demo key, when the operator enables it (src/core/demo-key.ts). */
  demo: DemoKeyPolicy | undefined;
  /** Marks a connection answered for good (src/http/client-errors.ts). */
  closeAfterAnswer(socket: object): void;
  /** The methods the app routes: those of a keyed path other than GET and HEAD are its 405. */
  methods: readonly string[];
}

export interface KeyStep {
  /** The app's onRequest hook: what no route can answer. */
  onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void;
  /** The app's 404, for what no route takes: the API's under /api/ counts against a valid key. */
  notFound(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * The 404's onRequest hook, before any body is read: it answers a method other than GET or HEAD
   * (its body is not read, and a 415 about it would hide the 404), and any request under /api/
   * (counted, SPEC §6, and so before a 413); a GET or HEAD elsewhere meets a 413 first, like any route.
   */
  notFoundFirst(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The app's preParsing hook, before any body is read: a body announced longer than the route reads is a 413. */
  preParsing(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error?: Error | null) => void): void;
  /**
   * An onRoute hook: a keyed route gets the key (and quota) step as a hook of its own, so that no
   * other request reads its options; for a keyed GET route, the answer is the route to add for
   * the other methods on its path, their 405.
   */
  route(route: RouteOptions): RouteOptions | undefined;
  /**
   * Who the request's key names, for the entry it came to; without a valid key, the 401 is sent
   * (with what that entry's clients are asked for) and the answer is undefined.
   */
  authenticate(request: FastifyRequest, reply: FastifyReply, entry: KeyEntry): Promise<Caller | undefined>;
  /** Counts one request against the caller's quota and writes the quota headers; the 429's problem when the quota refuses it (not counted). */
  count(request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<Problem | undefined>;
  /** The caller's usage today, read without counting, with the quota headers of that reading. */
  usage(request: FastifyRequest, reply: FastifyReply): Promise<{ tier: Tier; usage: QuotaUsage }>;
}

/** A route's hooks of one kind, as an array (its options give one function, an array or none). */
export function hooksOf<H>(hooks: H | H[] | undefined): H[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

export function createKeyStep(options: KeyStepOptions): KeyStep {
  const { keys, keyHashes, quotas, quotaCalendar, limits, clock, metrics } = options;
  // OPTIONS is CORS's (preflights), CONNECT the server's 'connect' event's.
  const otherMethods = options.methods.filter((method) => !['GET', 'HEAD', 'OPTIONS', 'CONNECT'].includes(method));
  const unauthorizedDetail: Record<KeyEntry, string> = {
    api: `Send a valid API key in the X-Api-Key header, as Authorization: Bearer <key> or in the apikey query parameter. To get a key, or the pro tier, e-mail ${options.contactEmail}.`,
    mcp: `Send a valid API key in the X-Api-Key header or as Authorization: Bearer <key>. To get a key, or the pro tier, e-mail ${options.contactEmail}.`,
  };

  async function identify(request: FastifyRequest, entry: KeyEntry = 'api'): Promise<Caller | undefined> {
    const presented = presentedKey(request, entry);
    // The demo key is no stored key: it is recognised here, by its exact value, or refused.
    if (presented !== undefined && looksLikeDemoKey(presented)) return options.demo && presented === DEMO_KEY ? { demo: options.demo } : undefined;
    const record = await authenticateApiKey(keys, presented, keyHashes);
    return record ? { key: record } : undefined;
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply, entry: KeyEntry): Promise<Caller | undefined> {
    // Whatever the answer is, success or error, it depends on the key headers.
    addVary(reply, KEY_VARY);
    const caller = await identify(request, entry);
    if (caller === undefined) {
      reply.header('www-authenticate', WWW_AUTHENTICATE[entry]);
      sendProblem(reply, problemOf('unauthorized', unauthorizedDetail[entry]));
    }
    return caller;
  }

  async function count(request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<Problem | undefined> {
    const decision: QuotaDecision & { exhausted?: string } = await (caller.demo
      ? consumeDemoQuota(quotas, caller.demo, request.ip, limits, clock)
      : consumeDailyQuota(quotas, caller.key, limits, clock, quotaCalendar));
    setQuotaHeaders(reply, decision);
    if (decision.allowed) return undefined;
    metrics.quotaRejected();
    const detail = !caller.demo
      ? `This key's ${decision.limit} requests for today are used up; the quota resets at 00:00 UTC.`
      : decision.exhausted === 'shared'
        ? `The demo key's requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`
        : `This address's ${decision.limit} demo requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`;
    return problemOf('quota_exceeded', detail);
  }

  /** An error answer to a request under /api/ that still counts against a valid key (SPEC §6). */
  async function countedError(request: FastifyRequest, reply: FastifyReply, problem: Problem): Promise<void> {
    addVary(reply, KEY_VARY);
    const caller = await identify(request);
    // The quota's 429 when it refuses the request, else the error.
    const refused = caller && (await count(request, reply, caller));
    sendProblem(reply, refused ?? problem);
  }

  /**
   * The answer to another method on a keyed path: a 405 that says what is allowed (SPEC §7),
   * counted like any request to /api/ (the API is read-only; OPTIONS is CORS's).
   */
  async function methodNotAllowed(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('allow', 'GET, HEAD');
    await countedError(request, reply, problemOf('method_not_allowed', `${request.method} is not allowed here; use GET or HEAD.`));
  }

  async function answerNotFound(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const problem = notFound(request.method, request.url);
    // An unknown API path is the API's 404: a request to it with a valid key counts.
    if (isApiPath(request.url)) await countedError(request, reply, problem);
    else sendProblem(reply, problem);
  }

  /** The onRequest hook of every request: what makes it unanswerable whatever it asks for. */
  function onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const defect = requestDefect(request, reply, options.closeAfterAnswer);
    if (defect) return void sendProblem(reply, defect);
    // An oversized body is refused once the key step has run (preParsing); whatever answers the
    // request (a 401, or a 404 or 405 for what no route takes) closes the connection after it.
    if (oversizedBody(request)) closing(request, reply, options.closeAfterAnswer);
    done();
  }

  /** The onRequest hook of a keyed route (after the app's): the key, and for `counted`, the quota. A hook that sent an answer ends the request there. */
  function keyedStep(mode: 'counted' | 'read'): onRequestHookHandler {
    return async (request, reply) => {
      const caller = await authenticate(request, reply, 'api');
      if (caller === undefined) return;
      request.caller = caller;
      if (mode === 'read') return;
      const refused = await count(request, reply, caller);
      if (refused) sendProblem(reply, refused);
    };
  }
  const counted = keyedStep('counted');
  const read = keyedStep('read');

  return {
    onRequest,
    authenticate,
    notFound: answerNotFound,
    async notFoundFirst(request, reply) {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || isApiPath(request.url)) await answerNotFound(request, reply);
    },
    preParsing(request, reply, _payload, done) {
      const tooLarge = oversizedBody(request);
      if (tooLarge) sendProblem(reply, tooLarge);
      else done();
    },
    count,
    route(route) {
      const mode = route.config?.keyed;
      if (mode === undefined) return undefined;
      route.onRequest = [...hooksOf(route.onRequest), mode === 'counted' ? counted : read];
      // One 405 route per path: the GET route's (a HEAD route of its own shares its path).
      if (![route.method].flat().includes('GET')) return undefined;
      return {
        method: otherMethods,
        url: route.url,
        // Answered before any body is read, whatever its type or size.
        onRequest: methodNotAllowed,
        handler: methodNotAllowed,
        schema: { hide: true },
      };
    },
    async usage(request, reply) {
      const caller = request.caller!;
      const usage = await (caller.demo ? demoUsage(quotas, caller.demo, request.ip, limits, clock) : dailyUsage(quotas, caller.key, limits, clock, quotaCalendar));
      setQuotaHeaders(reply, usage);
      return { tier: caller.demo ? caller.demo.tier : caller.key.tier, usage };
    },
  };
}
