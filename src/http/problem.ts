import type { FastifyReply } from 'fastify';
import { DomainError, type ErrorCode } from '../core/errors.js';
import { SECURITY_HEADERS } from './headers.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** Title and status of each problem code; the `type` URI names the code. */
export const PROBLEMS: Record<ErrorCode, { status: number; title: string; description: string }> = {
  invalid_currency: { status: 400, title: 'Invalid currency', description: 'A currency parameter is not an ISO 4217 alphabetic code.' },
  unsupported_currency: {
    status: 400,
    title: 'Unsupported currency',
    description: 'The currency is a valid ISO 4217 code, but no configured rate provider quotes it.',
  },
  invalid_amount: {
    status: 400,
    title: 'Invalid amount',
    description: 'amount must match ^[0-9]{1,18}(\\.[0-9]{1,12})?$: no sign, exponent, spaces, commas, and given once.',
  },
  invalid_range: { status: 400, title: 'Invalid range', description: 'range must be one of 1m, 3m, 6m, 1y, 5y.' },
  invalid_format: { status: 400, title: 'Invalid format', description: 'format must be json or csv.' },
  invalid_date: { status: 400, title: 'Invalid date', description: 'date must be a calendar date YYYY-MM-DD, not after today (UTC).' },
  missing_parameter: { status: 400, title: 'Missing parameter', description: 'A required query parameter is missing.' },
  unauthorized: { status: 401, title: 'Unauthorized', description: 'The API key is missing or not valid.' },
  quota_exceeded: { status: 429, title: 'Daily quota exceeded', description: "The key's requests for this UTC day are used up." },
  no_history: { status: 404, title: 'No history', description: 'No rates are stored for this pair in the requested range, or on or before the requested date.' },
  not_found: { status: 404, title: 'Not found', description: 'No such resource.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', description: 'The API is read-only: use GET or HEAD.' },
  feed_unavailable: {
    status: 503,
    title: 'Rate feed unavailable',
    description: 'Nothing is stored for this request and the upstream rate provider cannot be reached.',
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
  // Set here as well as in the onSend hook: errors raised before routing skip the hooks.
  reply.headers(SECURITY_HEADERS);
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

export function problemFromDomainError(error: DomainError): Problem {
  return problemOf(error.code, error.message, error.param);
}
