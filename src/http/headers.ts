import type { FastifyReply } from 'fastify';
import type { QuotaDecision } from '../core/quota.js';

/** Sent with every answer: by the app's onRequest hook, and by the raw answers to what the HTTP parser rejects. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };

/**
 * The CORS policy: browsers call rate APIs directly, from any origin, sending their key in
 * X-Api-Key. @fastify/cors writes it on every answer that passes the app (src/app.ts).
 */
export const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['X-Api-Key', 'If-None-Match', 'If-Modified-Since'],
  exposedHeaders: [
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'RateLimit-Policy',
    'RateLimit',
    'Retry-After',
    'ETag',
    'Content-Disposition',
    'WWW-Authenticate',
  ],
  maxAge: 86400,
};

/**
 * The headers of the raw answers to what the HTTP parser rejects (src/http/client-errors.ts),
 * which no Fastify hook sees: the security headers and the CORS policy's headers of an actual
 * (not preflight) response, as @fastify/cors writes them for the API's fixed origin.
 */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': CORS.origin,
  'access-control-expose-headers': CORS.exposedHeaders.join(', '),
  ...SECURITY_HEADERS,
};

/**
 * What every answer that reads a key depends on, for the Vary of each (success or error): the
 * header keys (X-Api-Key, Authorization: Bearer). The apikey query parameter is in the URL, which
 * every cache keys on already.
 */
export const KEY_VARY = 'X-Api-Key, Authorization';

/** The field names of a Vary value, trimmed, without empty members. */
const varyNames = (value: string): string[] => value.split(',').map((name) => name.trim()).filter((name) => name !== '');

/**
 * Adds the field names of `value` (a Vary value) to an answer's Vary, keeping those already there,
 * once each, in order: the key step names the key headers, a route then what else its answer
 * depends on.
 */
export function addVary(reply: FastifyReply, value: string): void {
  const current = reply.getHeader('vary');
  if (typeof current !== 'string' || current === '') return void reply.header('vary', value);
  reply.header('vary', mergedVary(current, value));
}

/** Merged Vary values by the two merged: both are the code's own constants, so few, and each merge is worked out once. */
const merges = new Map<string, Map<string, string>>();
const MERGES_HELD = 64;

function mergedVary(current: string, value: string): string {
  let byValue = merges.get(current);
  let merged = byValue?.get(value);
  if (merged !== undefined) return merged;
  const names = varyNames(current);
  const known = new Set(names.map((name) => name.toLowerCase()));
  for (const name of varyNames(value)) {
    if (known.has(name.toLowerCase())) continue;
    known.add(name.toLowerCase());
    names.push(name);
  }
  merged = names.join(', ');
  if (merges.size >= MERGES_HELD) merges.clear();
  if (!byValue) merges.set(current, (byValue = new Map()));
  byValue.set(value, merged);
  return merged;
}

/**
 * How a problem may be cached: never stored. An error is one key's (its quota headers, a 401
 * instead of a 429) or one moment's, and storing it gains nothing; without this, a shared cache
 * may keep a 404 (heuristically cacheable, RFC 9111 §4.2.2) and serve it to every other key.
 */
export const PROBLEM_CACHE_CONTROL = 'no-store';

/** The one policy of the daily quota, as the IETF RateLimit fields name it. */
const RATE_LIMIT_POLICY = 'daily';
/** The quota's window: one UTC day. */
const DAY_SECONDS = 86_400;

/**
 * The quota headers of a reading or decision (SPEC §6), written here and nowhere else, on every
 * answer to a valid key: X-RateLimit-* (an absolute Unix reset), the same reading as the
 * RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (Structured
 * Field Lists: the policy's quota and window; what remains of it and the seconds until it resets,
 * the same instant as Retry-After), and Retry-After when it is refused.
 * https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
 */
export function setQuotaHeaders(reply: FastifyReply, decision: QuotaDecision): void {
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(decision.remaining));
  reply.header('x-ratelimit-reset', String(decision.resetAt));
  reply.header('ratelimit-policy', `"${RATE_LIMIT_POLICY}";q=${decision.limit};w=${DAY_SECONDS}`);
  reply.header('ratelimit', `"${RATE_LIMIT_POLICY}";r=${decision.remaining};t=${decision.retryAfter}`);
  if (!decision.allowed) reply.header('retry-after', String(decision.retryAfter));
}
