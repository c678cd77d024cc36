import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateApiKey } from '../core/api-keys.js';
import type { KeyStore, QuotaStore, Clock, ApiKeyRecord, Metrics } from '../core/ports.js';
import { consumeDailyQuota, type QuotaDecision, type QuotaLimits } from '../core/quota.js';
import { consumeDemoQuota, DEMO_KEY, demoKeyRecord, looksLikeDemoKey, type DemoKeyPolicy } from '../core/demo-key.js';
import { problemOf, sendProblem } from './problem.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs an API key and counts against its daily quota. */
    keyed?: boolean;
  }
  interface FastifyRequest {
    apiKey?: ApiKeyRecord;
  }
}

/** The key a request presents: the X-Api-Key header when present (it wins), else the apikey query parameter. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (header !== undefined) return typeof header === 'string' ? header : undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.apikey;
  return typeof fromQuery === 'string' ? fromQuery : undefined;
}

export interface AuthOptions {
  keys: KeyStore;
  quotas: QuotaStore;
  limits: QuotaLimits;
  clock: Clock;
  contactEmail: string;
  metrics: Metrics;
  /** The portal's public demo key, when the operator enables it (src/core/demo-key.ts). */
  demo?: DemoKeyPolicy | undefined;
}

/**
 * Runs before validation, so every request with a valid key counts, whatever its status
 * (SPEC §6), except one refused for the quota itself.
 */
export function createAuthHook(options: AuthOptions) {
  const unauthorizedDetail = `Send a valid API key in the X-Api-Key header or the apikey query parameter. To get a key, or the pro tier, e-mail ${options.contactEmail}.`;
  async function authenticateDemo(request: FastifyRequest, reply: FastifyReply, demo: DemoKeyPolicy): Promise<void> {
    request.apiKey = demoKeyRecord(demo.tier);
    const decision = await consumeDemoQuota(options.quotas, demo, request.ip, options.limits, options.clock);
    const refused = answerQuota(reply, decision, () =>
      decision.exhausted === 'shared'
        ? `The demo key's requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`
        : `This address's ${decision.limit} demo requests for today are used up; the quota resets at 00:00 UTC. For a key of your own, e-mail ${options.contactEmail}.`,
    );
    if (refused) return reply;
  }

  /** The quota headers of a decision; a refusal is counted and answered with a 429. True when refused. */
  function answerQuota(reply: FastifyReply, decision: QuotaDecision, refusal: () => string): boolean {
    reply.header('X-RateLimit-Limit', decision.limit);
    reply.header('X-RateLimit-Remaining', decision.remaining);
    reply.header('X-RateLimit-Reset', decision.resetAt);
    if (decision.allowed) return false;
    options.metrics.quotaRejected();
    reply.header('Retry-After', decision.retryAfter);
    sendProblem(reply, problemOf('quota_exceeded', refusal()));
    return true;
  }

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.routeOptions.config.keyed) return;
    const presented = presentedKey(request);
    // The demo key is no stored key: it is recognised here, by its exact value, or refused.
    if (presented !== undefined && looksLikeDemoKey(presented)) {
      if (!options.demo || presented !== DEMO_KEY) {
        sendProblem(reply, problemOf('unauthorized', unauthorizedDetail));
        return reply;
      }
      return authenticateDemo(request, reply, options.demo);
    }
    const record = await authenticateApiKey(options.keys, presented);
    if (!record) {
      sendProblem(reply, problemOf('unauthorized', unauthorizedDetail));
      return reply;
    }
    request.apiKey = record;
    const decision = await consumeDailyQuota(options.quotas, record, options.limits, options.clock);
    if (answerQuota(reply, decision, () => `This key's ${decision.limit} requests for today are used up; the quota resets at 00:00 UTC.`)) return reply;
  };
}
