import { createServer, type ServerOptions } from 'node:http';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DEMO_KEY } from './core/demo-key.js';
import { DomainError, UnavailableError, type ErrorCode } from './core/errors.js';
import type { Deps } from './deps.js';
import { createAuthHook } from './http/auth.js';
import { createFastPath, type FastPath } from './http/fast-path.js';
import { createHistoryBodies } from './http/responses.js';
import { answerClientError, answerConnect, closeAfterAnswer } from './http/client-errors.js';
import { problemFromDomainError, problemOf, sendProblem } from './http/problem.js';
import { API_PATHS, registerApiRoutes } from './http/routes/api.js';
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
  /**
   * Answer everyday API requests on the fast path when listening (src/http/fast-path.ts); on
   * unless requests are logged, which only the full path does. Off, every request goes through Fastify.
   */
  fastPath?: boolean;
}

/** Browsers call rate APIs directly: any origin may GET, sending its key in X-Api-Key. */
export const CORS_EXPOSED_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Content-Disposition'];

/**
 * Fastify's own HTTP/1 server (fastify/lib/server.js), with the fast path in front of its
 * handler: what Fastify sets on the server it creates is set here too.
 */
function serverWithFastPath(fastPath: FastPath): FastifyServerFactory {
  return (handler, fastifyOptions) => {
    // Fastify has filled in its defaults by now.
    const options = fastifyOptions as unknown as {
      http?: ServerOptions;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket?: number | null;
    };
    const server = createServer(options.http ?? {}, (request, response) => fastPath(request, response, handler));
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if ((options.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket!;
    return server;
  };
}

/** A ready app that is not listening: the server listens, tests inject. */
export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const histories = createHistoryBodies(deps.book);
  const logRequests = options.logRequests ?? false;
  let closing = false;
  const fastPath =
    (options.fastPath ?? true) && !logRequests
      ? createFastPath({
          book: deps.book,
          histories,
          keys: deps.keys,
          quotas: deps.quotas,
          limits: deps.config.quota,
          clock: deps.clock,
          metrics: deps.metrics,
          refreshSeconds: deps.config.refreshSeconds,
          exposedHeaders: CORS_EXPOSED_HEADERS.join(', '),
          closing: () => closing,
          onError: (error) => deps.log.error({ err: error }, 'response failed'),
        })
      : undefined;
  const app = Fastify({
    ...(fastPath ? { serverFactory: serverWithFastPath(fastPath) } : {}),
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: !logRequests }),
    exposeHeadRoutes: true,
    // request.ip: the connection's peer, or, from a trusted proxy, the client it reports.
    ...(deps.config.trustedProxies.length > 0 ? { trustProxy: [...deps.config.trustedProxies] } : {}),
    return503OnClosing: true,
    bodyLimit: 1024,
    routerOptions: { maxParamLength: 100, ignoreTrailingSlash: false },
    ajv: { customOptions: { coerceTypes: 'array', allErrors: false, removeAdditional: false } },
    schemaErrorFormatter: (errors) => validationProblem(errors as ValidationIssue[]),
    // What Node's HTTP parser rejects is answered as problem+json too (src/http/client-errors.ts).
    clientErrorHandler: answerClientError,
    // Node would answer a missing Host with an empty 400; the onRequest hook below words it.
    http: { requireHostHeader: false },
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

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  app.server.on('connect', answerConnect);

  // Before anything reads a body: the API is read-only, so every other method on its paths, with
  // any body of any type or size, is a 405 (SPEC §7); a method nothing is routed for is a 404; and
  // HTTP/1.1 requires a Host header.
  const apiPaths: ReadonlySet<string> = new Set(API_PATHS);
  app.addHook('onRequest', (request, reply, done) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && apiPaths.has(request.url.split('?')[0]!)) {
      reply.header('Allow', 'GET, HEAD');
      sendProblem(reply, problemOf('method_not_allowed', `${method} is not allowed here; use GET or HEAD.`));
      return;
    }
    // Nothing is routed here for this method: say so before a body is read, not 415 or 413 about the body.
    if (request.is404 && method !== 'GET' && method !== 'HEAD') {
      sendProblem(reply, problemOf('not_found', `No resource at ${method} ${request.url.split('?')[0]!.slice(0, 200)}.`));
      return;
    }
    // RFC 9112 §6.3: a request body whose length cannot be known (a transfer coding other than a
    // final chunked) is a 400, and the connection is closed; Node's parser lets it through.
    const coding = request.headers['transfer-encoding'];
    if (coding !== undefined && !/(?:^|,)[ \t]*chunked[ \t]*$/i.test(coding)) {
      const problem = problemOf('not_found', 'Transfer-Encoding must end with chunked; the request body cannot be delimited.');
      reply.header('Connection', 'close');
      closeAfterAnswer(request.raw.socket);
      sendProblem(reply, { ...problem, status: 400, title: 'Bad Request' });
      return;
    }
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      const problem = problemOf('not_found', 'An HTTP/1.1 request must carry a Host header.');
      sendProblem(reply, { ...problem, status: 400, title: 'Bad Request' });
      return;
    }
    done();
  });

  await app.register(cors, {
    origin: '*',
    // An OPTIONS request that is not a preflight gets the same headers, not a bare-text 400.
    strictPreflight: false,
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['X-Api-Key', 'If-None-Match'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
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
      // Fastify's and its plugins' own client errors (a body where none is read, a static file
      // outside its folder…): the status HTTP prescribes, in our shape. None names a query
      // parameter, so none is a parameter code: the request addresses nothing served here.
      const code: ErrorCode = status === 405 ? 'method_not_allowed' : 'not_found';
      const problem = problemOf(code, error.message);
      return sendProblem(reply, { ...problem, status, title: STATUS_CODES[status] ?? problem.title });
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

  registerApiRoutes(app, { book: deps.book, refreshSeconds: deps.config.refreshSeconds, histories });
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
