import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { noRatesAdvice } from '../../offline-advice.js';
import { describeFinding, providerCrossCheck } from '../../core/cross-check.js';
import { outdatedRates } from '../../core/freshness.js';
import { utcDay } from '../../core/time.js';
import type { Deps } from '../../deps.js';
import { providerEntry } from '../../providers/registry.js';
import { notFound, sendProblem } from '../problem.js';
import { ref } from '../schemas.js';

/** Operations endpoints, in the document for operators' tools; no key, never cached. */
const NO_STORE = { 'Cache-Control': { type: 'string', description: 'no-store.' } };
const READINESS = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    providers: { type: 'array', items: { type: 'object', additionalProperties: true } },
    warnings: { type: 'array', items: { type: 'string' } },
  },
  additionalProperties: true,
};

/** What the server answers any request it cannot take (src/http/keyed.ts requestDefect). */
const REQUEST_DEFECT = {
  description: 'A request the server cannot take (a body, an oversized or malformed header…), as application/problem+json.',
  content: { 'application/problem+json': { schema: ref('Problem') } },
};

function operation(operationId: string, summary: string, description: string, responses: Record<string, unknown>) {
  return { schema: { operationId, summary, description, tags: ['operations'], security: [], response: { ...responses, '4xx': REQUEST_DEFECT } } };
}

/**
 * A refresh error as /readyz shows it, to anyone: of each upstream URL it names only the path is
 * left (the origin may be an internal mirror's, the query may carry a provider's app id), and the
 * addresses Node's network errors name are withheld; the log line of the failure keeps them all
 * for the operator.
 */
export function withoutUrls(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/'"<>?#]+(\/[^\s'"<>?#]*)?(?:[?#][^\s'"<>]*)?/gi, (url: string, path: string | undefined) => {
      // Punctuation after a URL ends the sentence, not the URL.
      const end = /[:,;.)]*$/.exec(url)![0];
      return `<upstream>${(path ?? '/').slice(0, path && end && path.endsWith(end) ? -end.length : undefined)}${end}`;
    })
    .replace(/\b(ENOTFOUND|EAI_AGAIN) +[^\s,;)]+/g, '$1 <host withheld>')
    .replace(/\[[0-9a-f:.]+\](?::\d+)?|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/gi, '<address withheld>');
}

export function registerOpsRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/healthz',
    operation('getHealth', 'Liveness: the process answers', 'Answers 200 while the process serves requests, whatever the store and the providers do: for a liveness probe, which restarts the process when it fails. Public, no key; never cached.', {
      200: { description: 'Alive.', headers: NO_STORE, type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] },
    }),
    async (_request, reply) => {
    return reply.header('Cache-Control', 'no-store').send({ status: 'ok' });
  });

  if (deps.config.metrics.token !== undefined) registerMetricsRoute(app, deps, deps.config.metrics.token);

  /** Ready when the store answers and holds rates to serve. */
  app.get(
    '/readyz',
    operation('getReadiness', 'Readiness: the store answers and holds rates', 'Answers 200 once the store answers and holds rates to serve, with the refresh state of each provider and, in `warnings`, each provider whose newest day is older than EXRATES_OLD_RATES_DAYS and each number the cross-check flags (still served or replaced, so still ready); 503 before the first rates are loaded (with `next`, what to do, when a provider already failed) or while the store cannot be reached: for a readiness probe, which keeps traffic away until it passes. Public, no key; never cached.', {
      200: {
        ...READINESS,
        description: 'Ready. status, per provider: id, latestDay, stale, lastSuccessAt, lastFailureAt, lastError (what failed, with every URL in it withheld: the log has them), crossCheck (as /api/v1/providers shows it); and `warnings`, present when a provider\'s newest day is older than EXRATES_OLD_RATES_DAYS or one of its numbers differs from the other providers\' by more than EXRATES_CROSSCHECK_PERCENT, one sentence each naming the provider and the day.',
        headers: NO_STORE,
      },
      503: { ...READINESS, description: 'Not ready: no rates loaded (`next` says what to do), the store cannot be reached, or its SQLite file can no longer be written (the process is stopping).', headers: NO_STORE },
    }),
    async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    // A store that can no longer be written: the process is stopping (its log says why).
    if (deps.database.fault() !== undefined) return reply.code(503).send({ status: 'store unwritable' });
    try {
      const providers = [];
      const warnings: string[] = [];
      const today = utcDay(deps.clock.now());
      let loaded = false;
      const checked = await deps.book.crossCheck();
      // The legal parities are computed, not fetched: beside fetched providers they alone do not make the instance ready (as the start-up line says).
      const computed = (id: string) => providerEntry(id)?.metadata.kind === 'peg';
      const fetches = deps.providers.some((provider) => !computed(provider.id));
      for (const provider of deps.providers) {
        const [latestDay, state] = await Promise.all([deps.rates.latestDay(provider.id), deps.rates.providerState(provider.id)]);
        if (latestDay !== null && !(fetches && computed(provider.id))) loaded = true;
        const outdated = outdatedRates(provider.id, latestDay, today, deps.config.oldRatesDays);
        if (outdated) warnings.push(outdated.message);
        providers.push({
          id: provider.id,
          latestDay,
          stale: state?.failing ?? false,
          lastSuccessAt: state?.lastSuccessAt ?? null,
          lastFailureAt: state?.lastFailureAt ?? null,
          lastError: state?.lastError ? withoutUrls(state.lastError) : null,
          crossCheck: providerCrossCheck(checked, provider.id),
        });
      }
      // A number that disagrees with the others is warned about; it does not make the instance unready.
      for (const finding of checked.findings) warnings.push(`cross-check: ${describeFinding(finding, checked.percent)}`);
      // Nothing stored and a provider already failed: say what to do rather than only what is wrong.
      const next = !loaded && providers.some((p) => p.stale) ? { next: noRatesAdvice(deps.config) } : {};
      // Old rates are still served, so they warn without making the instance unready.
      const warned = warnings.length > 0 ? { warnings } : {};
      return reply.code(loaded ? 200 : 503).send({ status: loaded ? 'ready' : 'no rates loaded', providers, ...warned, ...next });
    } catch (error) {
      deps.log.warn({ err: String(error) }, 'readiness check failed');
      return reply.code(503).send({ status: 'store unreachable' });
    }
  });
}

/** True when the request carries `Authorization: Bearer <token>`; compared in constant time. */
function bearsToken(request: FastifyRequest, digest: Buffer): boolean {
  const presented = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
  return timingSafeEqual(createHash('sha256').update(presented).digest(), digest);
}

/**
 * /metrics, the Prometheus text of this process (every worker's, summed). Served by the metrics
 * listener of its own (EXRATES_METRICS_PORT) without a token; on the public port only when
 * EXRATES_METRICS_TOKEN is set, and there only to a bearer of it: to anyone else it is the 404 of
 * a path that names nothing, so that it tells nobody it exists.
 */
export function registerMetricsRoute(app: FastifyInstance, deps: Deps, token?: string): void {
  const digest = token === undefined ? undefined : createHash('sha256').update(token).digest();
  const described = operation('getMetrics', 'Prometheus metrics', 'The Prometheus text exposition of this process: requests by route, method and status with their latency, refresh outcomes and durations, upstream latency, backfills, stale answers and quota refusals, and the process metrics. On this port only with `Authorization: Bearer <EXRATES_METRICS_TOKEN>` (without it, a 404); the metrics listener (EXRATES_METRICS_PORT) serves it without. Never cached.', {
    200: {
      description: 'Prometheus text exposition: requests by route and status, latency, refresh outcomes, quota rejections, upstream latency.',
      headers: NO_STORE,
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  });
  // Documented where it is in the API's document: on the public port, behind its token.
  const options = token === undefined ? {} : { schema: { ...described.schema, security: [{ MetricsToken: [] }] } };
  app.get('/metrics', options, async (request: FastifyRequest, reply: FastifyReply) => {
    if (digest !== undefined && !bearsToken(request, digest)) return sendProblem(reply.header('Cache-Control', 'no-store'), notFound(request.method, request.url));
    return reply.type(deps.metrics.registry.contentType).header('Cache-Control', 'no-store').send(await deps.metricsText());
  });
}
