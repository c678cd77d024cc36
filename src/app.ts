import { createServer, STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DEMO_KEY } from './core/demo-key.js';
import { DomainError, UnavailableError, type ErrorCode } from './core/errors.js';
import type { Deps } from './deps.js';
import { answerClientError, answerConnect, answerPreface } from './http/client-errors.js';
import { CORS, SECURITY_HEADERS } from './http/headers.js';
import { AJV_OPTIONS, UNKNOWN_API_PATH, createKeyedApi, isApiPath, keyedRoute, parseQuery, validationProblem, type KeyedApi } from './http/keyed-api.js';
import { notFound, problemFromDomainError, problemOf, sendProblem } from './http/problem.js';
import { requestDefect } from './http/request-checks.js';
import { createCurrencyListBodies, createHistoryBodies, createManyRatesBodies } from './http/responses.js';
import { answeredByKeyedApi, delegateTo, registerApiRoutes } from './http/routes/api.js';
import { registerOpsRoutes } from './http/routes/ops.js';
import { registerPortalRoutes } from './http/routes/portal.js';
import { docsPageOptions, openApiOptions, registerDocumentRoutes } from './http/routes/documents.js';

export interface BuildOptions {
  /** Log each request (the server does; tests usually do not). */
  logRequests?: boolean;
}

/**
 * Fastify's HTTP/1 server, with the keyed API in front of its handler: a request for a keyed
 * route goes straight to the keyed API (src/http/keyed-api.ts), everything else, CORS preflights
 * and every request once the server is closing included, to Fastify.
 */
function serverWithKeyedApi(api: KeyedApi, isClosing: () => boolean): FastifyServerFactory {
  return (handler) => {
    const server = createServer({ requireHostHeader: false }, (request, response) => {
      if (request.method === 'PRI') return answerPreface(response);
      const url = request.url ?? '';
      const mark = url.indexOf('?');
      const route = keyedRoute(mark === -1 ? url : url.slice(0, mark));
      if (route === undefined || request.method === 'OPTIONS' || isClosing()) return handler(request, response);
      api.serve(request, response, route, parseQuery(mark === -1 ? '' : url.slice(mark + 1)));
    });
    server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
    server.requestTimeout = SERVER_TIMEOUTS.requestTimeout;
    server.setTimeout(SERVER_TIMEOUTS.connectionTimeout);
    return server;
  };
}

/** Fastify's defaults for the server it would create itself. */
const SERVER_TIMEOUTS = { keepAliveTimeout: 72_000, requestTimeout: 0, connectionTimeout: 0 };

/** A ready app that is not listening: the server listens, tests inject. */
export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const logRequests = options.logRequests ?? false;
  let requests = 0;
  const nextRequestId = () => `req-${(requests += 1).toString(36)}`;
  let closing = false;
  const api = createKeyedApi({
    book: deps.book,
    histories: createHistoryBodies(deps.book),
    currencyList: createCurrencyListBodies(
      deps.book,
      deps.providers.filter((p) => p.listCurrencies !== undefined).map((p) => p.id),
    ),
    manyRates: createManyRatesBodies(deps.book),
    keys: deps.keys,
    keyHashes: deps.keyHashes,
    quotas: deps.quotas,
    limits: deps.config.quota,
    clock: deps.clock,
    quotaCalendar: deps.quotaCalendar,
    metrics: deps.metrics,
    log: deps.log,
    refreshSeconds: deps.config.refreshSeconds,
    contactEmail: deps.config.contactEmail,
    demo: deps.config.demoKey,
    trustedProxies: deps.config.trustedProxies,
    logRequests,
    nextRequestId,
  });
  const app = Fastify({
    serverFactory: serverWithKeyedApi(api, () => closing),
    genReqId: nextRequestId,
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: !logRequests }),
    exposeHeadRoutes: true,
    // request.ip: the connection's peer, or, from a trusted proxy, the client it reports.
    ...(deps.config.trustedProxies.length > 0 ? { trustProxy: [...deps.config.trustedProxies] } : {}),
    return503OnClosing: true,
    bodyLimit: 1024,
    routerOptions: { maxParamLength: 100, ignoreTrailingSlash: false },
    ajv: { customOptions: AJV_OPTIONS },
    schemaErrorFormatter: (errors) => validationProblem(errors as Parameters<typeof validationProblem>[0]),
    // What Node's HTTP parser rejects is answered as problem+json too (src/http/client-errors.ts).
    clientErrorHandler: answerClientError,
    // A path that is not valid percent-encoding names no resource.
    frameworkErrors: (error, request, reply) => {
      if (error.statusCode !== undefined && error.statusCode < 500) {
        sendProblem(reply, notFound(request.method, String(request.url)));
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

  // Before anything reads a body: a method nothing is routed for is a 404, unless the path is a
  // keyed route, whose every method is the keyed API's (a 405 but for GET and HEAD; OPTIONS is
  // CORS's); and what makes any request unanswerable (src/http/request-checks.ts).
  app.addHook('onRequest', (request, reply, done) => {
    // The keyed API checks its requests itself.
    if (request.routeOptions.config.keyed) return done();
    const method = request.method;
    if (request.is404 && method !== 'GET' && method !== 'HEAD') {
      if (method !== 'OPTIONS') {
        const path = request.url.split('?')[0]!;
        const route = keyedRoute(path) ?? (isApiPath(path) ? UNKNOWN_API_PATH : undefined);
        if (route !== undefined) return delegateTo(api, route, request, reply);
      }
      sendProblem(reply, notFound(method, request.url));
      return;
    }
    const defect = requestDefect(request.raw);
    if (defect) {
      reply.headers(defect.headers);
      sendProblem(reply, defect.problem);
      return;
    }
    done();
  });

  await app.register(cors, {
    ...CORS,
    // An OPTIONS request that is not a preflight gets the same headers, not a bare-text 400.
    strictPreflight: false,
  });

  // Callback-style hooks. The keyed API measures its own answers.
  app.addHook('onResponse', (request, reply, done) => {
    if (!answeredByKeyedApi(request)) {
      deps.metrics.httpRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS);
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

  // An unknown API path is the keyed API's 404: a request to it with a valid key counts (SPEC §6).
  app.setNotFoundHandler((request, reply) => {
    if (isApiPath(request.url)) return delegateTo(api, UNKNOWN_API_PATH, request, reply);
    sendProblem(reply, notFound(request.method, request.url));
  });

  await app.register(swagger, openApiOptions(deps.config));
  await app.register(swaggerUi, docsPageOptions());

  registerApiRoutes(app, api);
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
