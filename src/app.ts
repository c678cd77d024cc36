import { METHODS } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DEMO_KEY } from './core/demo-key.js';
import { rangesFor } from './core/history.js';
import type { Clock } from './core/time.js';
import type { Deps } from './deps.js';
import { createHttpCaches } from './http/caching.js';
import { answerConnect, createClientErrorAnswers } from './http/client-errors.js';
import { normalTarget } from './http/target.js';
import { CORS, SECURITY_HEADERS } from './http/headers.js';
import { AJV_OPTIONS, createKeyStep, hooksOf, validationProblem } from './http/keyed.js';
import { notFound, sendError, sendProblem } from './http/problem.js';
import {
  createConversionBodies,
  createCurrencyListBodies,
  createHistoryBodies,
  createLiveCacheControl,
  createManyRatesBodies,
  createQuoteBodies,
} from './http/responses.js';
import { registerApiRoutes, type ApiServices } from './http/routes/api.js';
import { MCP_BODY_LIMIT, MCP_PATH, mcpCorsPolicy, registerMcpRoutes } from './http/routes/mcp.js';
import { registerMetricsRoute, registerOpsRoutes } from './http/routes/ops.js';
import { registerPortalRoutes } from './http/routes/portal.js';
import { docsPageOptions, openApiOptions, registerDocumentRoutes } from './http/routes/documents.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route's own CORS policy, over the app's (@fastify/cors reads it: its README, "per-route"). */
    cors?: FastifyCorsOptions | false;
  }
}

export interface BuildOptions {
  /** Log each request (the server does; tests usually do not). */
  logRequests?: boolean;
}

/** The bounds of the app's caches of rendered answers. */
const CACHE_BOUNDS = {
  /** Conversions rendered per quote and amount. */
  conversions: 20_000,
  /** Rendered and compressed history answers: every pair of the bulk provider's currencies over five years in one form. */
  historyBytes: 48 * 1024 * 1024,
  /** Rendered /rates answers. */
  manyRatesBytes: 8 * 1024 * 1024,
  /** Compressed portal bodies. */
  compressedBytes: 4 * 1024 * 1024,
  /** Distinct Accept-Encoding headers negotiated. */
  encodings: 1_000,
};

/**
 * A ready app that is not listening: the server listens, tests inject; both take the same path.
 * Every request goes through Fastify: the answer headers (security and CORS) and the checks of
 * what no route can answer (onRequest), the key and quota step of a keyed route (src/http/keyed.ts),
 * then the route's validation and handler; the router's 404 and 405 routes; one error handler,
 * Fastify's request log and one metrics hook. The caches of rendered answers are made here, one
 * set per app.
 */
export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const logRequests = options.logRequests ?? false;
  let requests = 0;
  const clientErrors = createClientErrorAnswers();
  const app = Fastify({
    // Node's own Host check would answer an empty 400; the key step answers it as a problem.
    http: { requireHostHeader: false },
    genReqId: () => `req-${(requests += 1).toString(36)}`,
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: !logRequests }),
    exposeHeadRoutes: true,
    // request.ip: the connection's peer, or, from a trusted proxy, the client it reports.
    ...(deps.config.trustedProxies.length > 0 ? { trustProxy: [...deps.config.trustedProxies] } : {}),
    return503OnClosing: true,
    // One form of each target for the routes and the key step (src/http/target.ts).
    rewriteUrl: (request) => normalTarget(request.url ?? '/'),
    bodyLimit: 1024,
    routerOptions: { maxParamLength: 100, ignoreTrailingSlash: false },
    ajv: { customOptions: AJV_OPTIONS },
    schemaErrorFormatter: (errors) => validationProblem(errors as Parameters<typeof validationProblem>[0], rangesFor(deps.config.historyYears)),
    // What Node's HTTP parser rejects is answered as problem+json too (src/http/client-errors.ts).
    clientErrorHandler: clientErrors.answer,
    // Errors before routing (a path that is not valid percent-encoding…) take the error handler's mapping.
    frameworkErrors: sendError,
  });
  // Every method Node's parser reads takes the same path (a 404 or 405 problem, counted under
  // /api/), not Fastify's bare fallback for methods it does not know. CONNECT is the 'connect' event's.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  // Answers are strings and buffers, rendered where they are made (and most kept): response
  // schemas document them. Fastify's own serializer would compile every response schema at start,
  // a longer start measured for the few object answers (/healthz, /readyz, /problems/:code).
  app.setSerializerCompiler(() => JSON.stringify);
  app.decorateRequest('caller', undefined);
  app.server.on('connect', answerConnect);
  // Node answers `Expect: 100-continue` at once, asking for any body: a body longer than any route
  // reads (/mcp's is the largest) is not asked for, and its request goes on to its 413.
  app.server.on('checkContinue', (request, response) => {
    if (Number(request.headers['content-length'] ?? 0) <= MCP_BODY_LIMIT) response.writeContinue();
    app.server.emit('request', request, response);
  });

  const keyStep = createKeyStep({
    keys: deps.keys,
    keyHashes: deps.keyHashes,
    quotas: deps.quotas,
    limits: deps.config.quota,
    clock: deps.clock,
    quotaCalendar: deps.quotaCalendar,
    metrics: deps.metrics,
    contactEmail: deps.config.contactEmail,
    demo: deps.config.demoKey,
    closeAfterAnswer: clientErrors.closeAfterAnswer,
    methods: app.supportedMethods,
  });
  const measured = (url: string) => (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    deps.metrics.httpRequest(url, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
  // What a route needs is given to it as hooks of its own when it is added, so that no request
  // reads its route's options: the key step on keyed routes, and the metrics hook with its path.
  // A keyed GET route brings the route of the other methods on its path, their 405.
  // /mcp has a CORS policy of its own (src/http/routes/mcp.ts), given to its routes here.
  const mcpCors = { ...mcpCorsPolicy(deps.config.mcpOrigins), strictPreflight: false };
  app.addHook('onRoute', (route) => {
    const otherMethods = keyStep.route(route);
    route.onResponse = [...hooksOf(route.onResponse), measured(route.url)];
    if (route.url === MCP_PATH) route.config = { ...route.config, cors: mcpCors };
    if (otherMethods) app.route(otherMethods);
  });
  // @fastify/cors writes the CORS headers of every answer, first of all (so an error answer has
  // them too), and answers preflights (and an OPTIONS request that is not one, with the same
  // headers, not a bare-text 400). The API's policy adds Authorization (a Bearer key) to the
  // headers CORS names; /mcp's (POST, the MCP headers, the origins EXRATES_MCP_ORIGINS allows) is
  // its routes' config, and its own OPTIONS route's.
  // Its lists are given as the header values they become: an array it would join at every answer.
  await app.register(cors, {
    ...CORS,
    methods: CORS.methods.join(', '),
    allowedHeaders: [...CORS.allowedHeaders, 'Authorization'].join(', '),
    exposedHeaders: CORS.exposedHeaders.join(', '),
    strictPreflight: false,
  });
  app.options(MCP_PATH, { schema: { hide: true } }, (_request, reply) => reply.send());
  const replayedDate = deps.config.now ? createDateHeader(deps.clock) : undefined;
  app.addHook('onRequest', (request, reply, done) => {
    clientErrors.answering(request.raw.socket, reply.raw);
    reply.headers(SECURITY_HEADERS);
    if (replayedDate) reply.header('date', replayedDate());
    keyStep.onRequest(request, reply, done);
  });
  app.addHook('preParsing', keyStep.preParsing);
  app.setErrorHandler(sendError);
  // What no route takes is the 404 (counted under /api/), in a context of its own whose onRequest
  // hook answers before any body is read (src/http/keyed.ts).
  await app.register(async (unmatched) => {
    unmatched.addHook('onRequest', keyStep.notFoundFirst);
    unmatched.addHook('onResponse', measured('unmatched'));
    unmatched.setNotFoundHandler(keyStep.notFound);
  });

  await app.register(swagger, openApiOptions(deps.config));
  await app.register(swaggerUi, docsPageOptions());

  const caches = createHttpCaches({ compressedBytes: CACHE_BOUNDS.compressedBytes, encodings: CACHE_BOUNDS.encodings });
  const wideProviders = deps.providers.filter((p) => p.listCurrencies !== undefined).map((p) => p.id);
  const services: ApiServices = {
    book: deps.book,
    rates: deps.rates,
    providers: deps.providers,
    keyStep,
    caches,
    quotes: createQuoteBodies(),
    conversions: createConversionBodies(CACHE_BOUNDS.conversions),
    histories: createHistoryBodies(deps.book, CACHE_BOUNDS.historyBytes),
    manyRates: createManyRatesBodies(deps.book, CACHE_BOUNDS.manyRatesBytes),
    currencyList: createCurrencyListBodies(deps.book, wideProviders),
    liveCacheControl: createLiveCacheControl(deps.book, deps.config.refreshSeconds),
    calendar: deps.quotaCalendar,
  };
  registerApiRoutes(app, services);
  registerMcpRoutes(app, { services, contactEmail: deps.config.contactEmail, origins: deps.config.mcpOrigins });
  registerDocumentRoutes(app);
  registerOpsRoutes(app, deps);
  registerPortalRoutes(app, {
    book: deps.book,
    caches,
    contactEmail: deps.config.contactEmail,
    quota: deps.config.quota,
    wideCoverage: wideProviders.length > 0,
    demo: deps.config.demoKey ? { key: DEMO_KEY, perAddress: deps.config.demoKey.perAddress } : undefined,
  });
  return app;
}

/**
 * The Date header of a service replaying another time (EXRATES_NOW): its answers are dated on its
 * own clock, the one its `stale`, its days and its quotas follow (the portal tells a rate's age
 * from that Date). The text is made once a second, as Node makes its own Date.
 */
function createDateHeader(clock: Clock): () => string {
  let second = Number.NaN;
  let date = '';
  return () => {
    const now = clock.now().getTime();
    if (Math.floor(now / 1000) !== second) {
      second = Math.floor(now / 1000);
      date = new Date(now).toUTCString();
    }
    return date;
  };
}

/**
 * The metrics listener's app (EXRATES_METRICS_PORT): /metrics without a token, and nothing else,
 * for a scraper on a private network or on the machine itself.
 */
export async function buildMetricsApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
  });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, notFound(request.method, request.url));
  });
  registerMetricsRoute(app, deps);
  await app.ready();
  return app;
}
