import type { FastifyReply } from 'fastify';
import type { QuotaDecision } from '../core/quota.js';

/** Sent with every answer: by the app's onSend hook, and by the raw answers to what the HTTP parser rejects. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };

/**
 * The CORS policy: browsers call rate APIs directly, from any origin, sending their key in
 * X-Api-Key. @fastify/cors answers preflights with it; the headers it gives every other answer
 * are ANSWER_HEADERS below.
 */
export const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['X-Api-Key', 'If-None-Match', 'If-Modified-Since'],
  exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Content-Disposition', 'WWW-Authenticate'],
  maxAge: 86400,
};

/**
 * The headers of every answer that passes the app's hooks, set before anything else runs (so an
 * error answer has them too): the security headers and the CORS policy's headers of an actual
 * (not preflight) response — the same two @fastify/cors writes for a fixed origin, with no
 * per-request work (its hook costs about 3 % of a rate answer's CPU).
 */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': CORS.origin,
  'access-control-expose-headers': CORS.exposedHeaders.join(', '),
  ...SECURITY_HEADERS,
};

/**
 * The quota headers of a reading or decision (SPEC §6), written here and nowhere else: X-RateLimit-*
 * on every answer to a valid key, and Retry-After when it is refused.
 */
export function setQuotaHeaders(reply: FastifyReply, decision: QuotaDecision): void {
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(decision.remaining));
  reply.header('x-ratelimit-reset', String(decision.resetAt));
  if (!decision.allowed) reply.header('retry-after', String(decision.retryAfter));
}
