import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, UnavailableError, type ErrorCode } from '../core/errors.js';
import { SECURITY_HEADERS } from './headers.js';

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
  invalid_range: { status: 400, title: 'Invalid range', description: 'range must be one of 1m, 3m, 6m, 1y, 5y, and is not given with start; group must be week or month.' },
  invalid_format: { status: 400, title: 'Invalid format', description: 'format must be json, csv or ndjson.' },
  invalid_date: { status: 400, title: 'Invalid date', description: 'date must be a calendar date YYYY-MM-DD, not after today (UTC).' },
  missing_parameter: { status: 400, title: 'Missing parameter', description: 'A required query parameter is missing.' },
  unauthorized: { status: 401, title: 'Unauthorized', description: 'The API key is missing or not valid.' },
  quota_exceeded: { status: 429, title: 'Daily quota exceeded', description: "The key's requests for this UTC day are used up." },
  no_history: { status: 404, title: 'No history', description: 'No rates are stored for this pair in the requested range, or on or before the requested date.' },
  not_found: { status: 404, title: 'Not found', description: 'No such resource.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', description: 'The API is read-only: use GET or HEAD.' },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The request announces a body longer than its route reads (the API reads none: 1 KiB at most; /mcp 64 KiB); refused from its headers, before it is read, and the connection is closed.',
  },
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

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** The 405 of a method this server does not know (the parser's, or the router's). */
export function unknownMethodProblem(): Problem {
  return { ...problemOf('method_not_allowed', 'The method is not one this server knows; use GET or HEAD.'), title: 'Method Not Allowed' };
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

/**
 * The app's error handler: every error a request ends in, as its problem answer. A domain error is
 * its own code; a dependency that cannot be reached is a 503 to retry; Fastify's and its plugins'
 * own client errors (a body where none is read, a static file outside its folder…) keep the status
 * HTTP prescribes; anything else is logged and a 500.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof DomainError) {
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    return sendProblem(reply, problemFromDomainError(error));
  }
  if (error instanceof UnavailableError) {
    request.log.warn({ dependency: error.dependency, err: String((error as { cause?: unknown }).cause) }, 'dependency unavailable');
    reply.header('retry-after', String(UNAVAILABLE_RETRY_SECONDS));
    return sendProblem(reply, unavailableProblem(error));
  }
  const status = (error as FastifyError).statusCode;
  if ((error as FastifyError).code === 'FST_ERR_NOT_FOUND') {
    // A method the router cannot route at all (PRI, HTTP/2's connection preface, is one): answered
    // as a method the parser does not know is, without waiting, since Node closes such a
    // connection as soon as it is handed over. Such an answer skips the hooks: the security
    // headers are added here.
    reply.headers(SECURITY_HEADERS).header('allow', 'GET, HEAD').header('connection', 'close');
    return sendProblem(reply, unknownMethodProblem());
  }
  if (status !== undefined && status >= 400 && status < 500) {
    // None names a query parameter, so none is a parameter code: the request addresses nothing served here.
    const code: ErrorCode = status === 405 ? 'method_not_allowed' : status === 413 ? 'payload_too_large' : 'not_found';
    const problem = problemOf(code, (error as Error).message);
    return sendProblem(reply, { ...problem, status, title: STATUS_CODES[status] ?? problem.title });
  }
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, problemOf('internal_error', INTERNAL_DETAIL));
}
