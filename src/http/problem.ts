import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, UnavailableError, type ErrorCode } from '../core/errors.js';
import { PROBLEM_CACHE_CONTROL, SECURITY_HEADERS } from './headers.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** Title and status of each problem code; the `type` URI names the code. */
export const PROBLEMS: Record<ErrorCode, { status: number; title: string; description: string }> = {
  invalid_currency: { status: 400, title: 'Invalid currency', description: 'A currency parameter is not an ISO 4217 alphabetic code.' },
  unsupported_currency: {
    status: 400,
    title: 'Unsupported currency',
    description: 'The currency is a valid ISO 4217 code, but no configured rate provider (or not the one named by source) quotes it.',
  },
  unsupported_source: { status: 400, title: 'Unsupported source', description: 'source names no configured rate provider.' },
  invalid_amount: {
    status: 400,
    title: 'Invalid amount',
    description: 'amount must match ^[0-9]{1,18}(\\.[0-9]{1,12})?$: no sign, exponent, spaces, commas, and given once.',
  },
  invalid_range: { status: 400, title: 'Invalid range', description: 'range must be one of 1m, 3m, 6m, 1y, 5y (and 10y, max where more than five years of history are kept), and is not given with start; group must be week or month.' },
  invalid_format: { status: 400, title: 'Invalid format', description: 'format must be json, csv or ndjson.' },
  invalid_date: { status: 400, title: 'Invalid date', description: 'date must be a calendar date YYYY-MM-DD, not after today (UTC).' },
  missing_parameter: { status: 400, title: 'Missing parameter', description: 'A required query parameter is missing.' },
  unauthorized: { status: 401, title: 'Unauthorized', description: 'The API key is missing or not valid.' },
  quota_exceeded: { status: 429, title: 'Daily quota exceeded', description: "The key's requests for this UTC day are used up." },
  no_history: { status: 404, title: 'No history', description: 'No rates are stored for this pair in the requested range, or on or before the requested date.' },
  not_found: { status: 404, title: 'Not found', description: 'No such resource.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', description: 'The API is read-only: use GET or HEAD.' },
  not_acceptable: {
    status: 406,
    title: 'Not acceptable',
    description: 'The Accept header admits none of the media types the endpoint sends: application/json (/history: also text/csv and application/x-ndjson). No Accept, */* and application/* get JSON.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The request announces a body longer than its route reads (the API reads none: 1 KiB at most; /mcp 64 KiB); refused from its headers, before it is read, and the connection is closed.',
  },
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    description: 'The request is not valid HTTP/1.1 (request line, header syntax, framing, characters, two Host headers or none) or its body is not what its route reads, so it addresses no resource.',
  },
  request_timeout: { status: 408, title: 'Request timeout', description: 'The request did not arrive whole in time.' },
  header_too_large: { status: 431, title: 'Request header fields too large', description: 'The request line and headers together exceed the 16 KiB this server reads.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', description: 'The body is of a type its route does not read (/mcp reads application/json).' },
  feed_unavailable: {
    status: 503,
    title: 'Rate feed unavailable',
    description: 'Nothing is stored for this request and the upstream rate provider cannot be reached.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'A dependency of the service (its database or Redis) cannot be reached right now; retry after Retry-After seconds.',
  },
  internal_error: { status: 500, title: 'Internal error', description: 'The server failed to answer; the failure has been logged.' },
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  param?: string;
}

export function problemType(code: ErrorCode): string {
  return `/problems/${code}`;
}

export function problemOf(code: ErrorCode, detail: string, param?: string): Problem {
  const { status, title } = PROBLEMS[code];
  const problem: Problem = { type: problemType(code), title, status, detail, code };
  if (param !== undefined) problem.param = param;
  return problem;
}

/** The 404 of a request naming nothing served here. */
export function notFound(method: string | undefined, url: string | undefined): Problem {
  return problemOf('not_found', `No resource at ${method ?? ''} ${(url ?? '').split('?')[0]!.slice(0, 200)}.`);
}

/**
 * Sends a problem, never to be stored by any cache (PROBLEM_CACHE_CONTROL); its Vary is what the
 * steps before it depended on (the key step's key headers).
 */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).header('cache-control', PROBLEM_CACHE_CONTROL).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** The 405 of a method this server does not know (the parser's, or the router's). */
export function unknownMethodProblem(): Problem {
  return problemOf('method_not_allowed', 'The method is not one this server knows; use GET or HEAD.');
}

export function problemFromDomainError(error: DomainError): Problem {
  return problemOf(error.code, error.message, error.param);
}

/** How long a client waits before retrying when the database or Redis cannot be reached. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

/** The problem of a dependency (the database or Redis) that cannot be reached. */
export function unavailableProblem(error: UnavailableError): Problem {
  return problemOf('service_unavailable', `The service cannot reach ${error.dependency} right now. Try again in a few seconds.`);
}

/** The problem of an unexpected failure: nothing of it is shown, it is logged. */
export const INTERNAL_DETAIL = 'The server failed to answer this request; the failure has been logged.';

/** An error's answer: its problem, the headers that go with it, and whether it is logged (and how). */
export interface ProblemAnswer {
  problem: Problem;
  headers?: Readonly<Record<string, string>>;
  /** `warn`: a dependency that cannot be reached; `error`: an unexpected failure, shown as nothing but a 500. */
  log?: 'warn' | 'error';
}

/**
 * The code each HTTP status of a client or parser defect is answered with (Fastify's, its
 * plugins', Node's parser's). A status with no code of its own (a static file outside its folder
 * is a 403, a byte range a 416) addresses nothing served here: `not_found`, with its 404.
 */
const DEFECT_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'malformed_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  431: 'header_too_large',
};

/** The answer to a method the server does not route: the API's 405, with what it allows. */
const UNKNOWN_METHOD: ProblemAnswer = { problem: unknownMethodProblem(), headers: { allow: 'GET, HEAD' } };

/**
 * Every error a request can end in, as its problem: the one mapping used by the error handler,
 * the framework's errors before routing, the answers to what Node's HTTP parser rejects
 * (src/http/client-errors.ts) and MCP's tool errors. A domain error is its own code; a dependency
 * that cannot be reached is a 503 to retry; a client or parser defect is the code of its status
 * (DEFECT_CODES), with the status the problems table gives that code; anything else is a 500 that
 * shows nothing of the failure.
 */
export function toProblem(error: unknown): ProblemAnswer {
  if (error instanceof DomainError) {
    const problem = problemFromDomainError(error);
    return error.retryAfterSeconds === undefined ? { problem } : { problem, headers: { 'retry-after': String(error.retryAfterSeconds) } };
  }
  if (error instanceof UnavailableError) return { problem: unavailableProblem(error), headers: { 'retry-after': String(UNAVAILABLE_RETRY_SECONDS) }, log: 'warn' };
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  switch (code) {
    // Node's parser: the request line and headers are larger than it reads, or were not read in time.
    case 'HPE_HEADER_OVERFLOW':
      return { problem: problemOf('header_too_large', 'The request line and headers together exceed the 16 KiB this server reads; no resource was addressed.') };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { problem: problemOf('request_timeout', 'The request did not arrive in time.') };
    // A method the parser does not know, or one the router cannot route at all (PRI, HTTP/2's
    // connection preface, is one: Node closes such a connection as soon as it is handed over).
    case 'HPE_INVALID_METHOD':
      return UNKNOWN_METHOD;
    case 'FST_ERR_NOT_FOUND':
      return { ...UNKNOWN_METHOD, headers: { ...UNKNOWN_METHOD.headers, connection: 'close' } };
    // A path that is not valid percent-encoding names no resource.
    case 'FST_ERR_BAD_URL':
      return { problem: problemOf('not_found', 'The path is not valid percent-encoding; it names no resource.') };
  }
  if (typeof code === 'string' && code.startsWith('HPE_')) {
    return { problem: problemOf('malformed_request', 'The request is not valid HTTP/1.1 (request line, header syntax, framing or characters), so it addresses no resource.') };
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's and its plugins' own messages for these say what was wrong and nothing internal.
    return { problem: problemOf(DEFECT_CODES[statusCode] ?? 'not_found', (error as Error).message) };
  }
  return { problem: problemOf('internal_error', INTERNAL_DETAIL), log: 'error' };
}

/** Logs what an answer says is to be logged, with the error that made it. */
export function logProblem(log: FastifyBaseLogger, error: unknown, answer: ProblemAnswer, context: Record<string, unknown> = {}): void {
  if (answer.log === 'warn') log.warn({ ...context, dependency: (error as UnavailableError).dependency, err: String((error as { cause?: unknown }).cause) }, 'dependency unavailable');
  else if (answer.log === 'error') log.error({ ...context, err: error }, 'request failed');
}

/**
 * The app's error handler, and the framework's before routing: every error a request ends in, as
 * its problem answer (toProblem). Such an answer may skip the hooks: the security headers are
 * added here.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answer = toProblem(error);
  logProblem(request.log, error, answer);
  reply.headers(SECURITY_HEADERS);
  if (answer.headers) reply.headers(answer.headers);
  return sendProblem(reply, answer.problem);
}
