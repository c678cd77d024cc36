import type { FastifyReply } from 'fastify';
import type { QuotaDecision } from '../core/quota.js';

/** Sent with every answer: by the app's onSend hook, and by the raw answers to what the HTTP parser rejects. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };

/**
 * The CORS policy, applied by @fastify/cors to every answer and preflight: browsers call rate APIs
 * directly, from any origin, sending their key in X-Api-Key.
 */
export const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['X-Api-Key', 'If-None-Match', 'If-Modified-Since'],
  exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Content-Disposition', 'WWW-Authenticate'],
  maxAge: 86400,
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
