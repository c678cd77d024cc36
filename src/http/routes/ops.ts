import type { FastifyInstance } from 'fastify';
import { noRatesAdvice } from '../../announce.js';
import type { Deps } from '../../deps.js';

export function registerOpsRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    return reply.header('Cache-Control', 'no-store').send({ status: 'ok' });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(deps.metrics.registry.contentType).header('Cache-Control', 'no-store').send(await deps.metricsText());
  });

  /** Ready when the store answers and holds rates to serve. */
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    try {
      const providers = [];
      let loaded = false;
      for (const provider of deps.providers) {
        const [latestDay, state] = await Promise.all([deps.rates.latestDay(provider.id), deps.rates.providerState(provider.id)]);
        if (latestDay !== null) loaded = true;
        providers.push({
          id: provider.id,
          latestDay,
          stale: state?.failing ?? false,
          lastSuccessAt: state?.lastSuccessAt ?? null,
          lastFailureAt: state?.lastFailureAt ?? null,
          lastError: state?.lastError ?? null,
        });
      }
      // Nothing stored and a provider already failed: say what to do rather than only what is wrong.
      const next = !loaded && providers.some((p) => p.stale) ? { next: noRatesAdvice(deps.config) } : {};
      return reply.code(loaded ? 200 : 503).send({ status: loaded ? 'ready' : 'no rates loaded', providers, ...next });
    } catch (error) {
      deps.log.warn({ err: String(error) }, 'readiness check failed');
      return reply.code(503).send({ status: 'store unreachable' });
    }
  });
}
