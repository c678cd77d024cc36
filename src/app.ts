import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DEMO_KEY } from './core/demo-key.js';
import { DomainError, UnavailableError, type ErrorCode } from './core/errors.js';
import type { Deps } from './deps.js';
import { createAuthHook } from './http/auth.js';
import { problemFromDomainError, problemOf, sendProblem } from './http/problem.js';
import { registerApiRoutes } from './http/routes/api.js';
import { registerOpsRoutes } from './http/routes/ops.js';
import { registerPortalRoutes } from './http/routes/portal.js';
import { docsPageOptions, openApiOptions, registerDocumentRoutes } from './http/routes/documents.js';
import { PARAM_CODES } from './http/schemas.js';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** Turns a schema failure into the problem code of the offending parameter (SPEC §7). */
function validationProblem(issues: readonly ValidationIssue[]): DomainError {
  const issue = issues[0]!;
  if (issue.keyword === 'required') {
    const param = String(issue.params.missingProperty ?? '').replace(/^\//, '');
    return new DomainError('missing_parameter', `The query parameter '${param}' is required.`, { param });
  }
  const param = issue.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  const code: ErrorCode = (PARAM_CODES as Record<string, ErrorCode>)[param] ?? 'missing_parameter';
  const details: Record<string, string> = {
    invalid_currency: `'${param}' must be one ISO 4217 alphabetic code, such as EUR (case-insensitive).`,
    invalid_amount:
      'amount must be given once, as a non-negative decimal with up to 18 integer digits and up to 12 decimals, using "." as the decimal point (for example 100 or 99.95); no sign, exponent, spaces or thousands separators.',
    invalid_range: 'range must be given once, as one of 1m, 3m, 6m, 1y, 5y.',
    invalid_format: 'format must be given once, as json or csv.',
  };
  return new DomainError(code, details[code] ?? `The query parameter '${param}' is not valid.`, { param });
}

export interface BuildOptions {
  /** Log each request (the server does; tests usually do not). */
  logRequests?: boolean;
}

/** A ready app that is not listening: the server listens, tests inject. */
export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: !(options.logRequests ?? false) }),
    exposeHeadRoutes: true,
    return503OnClosing: true,
    bodyLimit: 1024,
    routerOptions: { maxParamLength: 100, ignoreTrailingSlash: false },
    ajv: { customOptions: { coerceTypes: 'array', allErrors: false, removeAdditional: false } },
    schemaErrorFormatter: (errors) => validationProblem(errors as ValidationIssue[]),
    // A path that is not valid percent-encoding names no resource.
    frameworkErrors: (error, request, reply) => {
      if (error.statusCode !== undefined && error.statusCode < 500) {
        sendProblem(reply, problemOf('not_found', `No resource at ${request.method} ${String(request.url).split('?')[0]!.slice(0, 200)}.`));
        return;
      }
      request.log.error({ err: error }, 'request failed before routing');
      sendProblem(reply, problemOf('internal_error', 'The server failed to answer this request; the failure has been logged.'));
    },
  });

  // Browsers call rate APIs directly: any origin may GET, sending its key in X-Api-Key.
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['X-Api-Key', 'If-None-Match'],
    exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Content-Disposition'],
    maxAge: 86400,
  });

  // Callback-style hooks: on every response, a promise per hook is measurable.
  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics.httpRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    done(null, payload);
  });

  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    if (error instanceof DomainError) {
      if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', error.retryAfterSeconds);
      return sendProblem(reply, problemFromDomainError(error));
    }
    if (error instanceof UnavailableError) {
      request.log.warn({ dependency: error.dependency, err: String((error as { cause?: unknown }).cause) }, 'dependency unavailable');
      reply.header('Retry-After', 5);
      const problem = problemOf('internal_error', `The service cannot reach ${error.dependency} right now. Try again in a few seconds.`);
      return sendProblem(reply, { ...problem, status: 503, title: 'Service unavailable' });
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Fastify's own client errors (malformed URL, bad content type…): say what was wrong, in our shape.
      const code: ErrorCode = status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : 'missing_parameter';
      const problem = problemOf(code, error.message);
      return sendProblem(reply, { ...problem, status, title: status === 400 ? 'Bad request' : problem.title });
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, problemOf('internal_error', 'The server failed to answer this request; the failure has been logged.'));
  });

  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, problemOf('not_found', `No resource at ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}.`));
  });

  await app.register(swagger, openApiOptions(deps.config));
  await app.register(swaggerUi, docsPageOptions());

  app.addHook(
    'onRequest',
    createAuthHook({
      keys: deps.keys,
      quotas: deps.quotas,
      limits: deps.config.quota,
      clock: deps.clock,
      contactEmail: deps.config.contactEmail,
      metrics: deps.metrics,
      demo: deps.config.demoKey,
    }),
  );

  registerApiRoutes(app, { book: deps.book, refreshSeconds: deps.config.refreshSeconds });
  registerDocumentRoutes(app);
  registerOpsRoutes(app, deps);
  registerPortalRoutes(app, {
    book: deps.book,
    contactEmail: deps.config.contactEmail,
    quota: deps.config.quota,
    wideCoverage: deps.providers.some((p) => p.listCurrencies !== undefined),
    demo: deps.config.demoKey ? { key: DEMO_KEY, perAddress: deps.config.demoKey.perAddress } : undefined,
  });
  return app;
}
