import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KEYED_ROUTES, type ApiRoute, type KeyedApi, type KeyedRoute, type Query } from '../keyed-api.js';
import { PROBLEMS, problemOf, sendProblem } from '../problem.js';
import {
  badRequest,
  ConvertQuery,
  HistoryQuery,
  KEYED_ERRORS,
  NoQuery,
  notFoundProblem,
  RateQuery,
  RatesQuery,
  ref,
  SHARED_SCHEMAS,
  type SharedSchemaId,
} from '../schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A keyed route: the keyed API answers it, and measures and logs it. */
    keyed?: boolean;
  }
}

/** Sent with every answer to a valid key on the keyed endpoints (SPEC §6). */
const QUOTA_HEADERS = {
  'X-RateLimit-Limit': { type: 'integer', description: "The key's requests per UTC day." },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left today.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix seconds of the next reset (00:00 UTC).' },
};

const CACHE_HEADERS = {
  ETag: { type: 'string', description: 'Strong validator of this representation (a compressed body has its own).' },
  'Last-Modified': { type: 'string', description: 'HTTP date of asOf (for a list, the newest; absent for /currencies).' },
  'Cache-Control': {
    type: 'string',
    description: 'private, max-age=<seconds until the next refresh, at most 600>; history private, max-age=3600; a settled past date private, max-age=31536000, immutable.',
  },
  Vary: { type: 'string', description: 'X-Api-Key (history: Accept-Encoding, X-Api-Key).' },
};

/** A 200 with a named JSON shape and the headers every cacheable answer carries. */
function json(description: string, id: SharedSchemaId) {
  return { description, headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS }, content: { 'application/json': { schema: ref(id) } } };
}

const NOT_MODIFIED = {
  description:
    'Not modified: If-None-Match matched the ETag, or, when no If-None-Match is sent, If-Modified-Since is at or after Last-Modified. No body; counts against the quota.',
  headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS },
  type: 'null',
};

const delegated = new WeakSet<FastifyRequest>();

/** Hands a request Fastify received for a keyed route (or an unknown API path) to the keyed API, which answers it on the raw response. */
export function delegateTo(api: KeyedApi, route: ApiRoute, request: FastifyRequest, reply: FastifyReply): void {
  delegated.add(request);
  reply.hijack();
  api.serve(request.raw, reply.raw, route, request.query as Query);
}

/** True for a request the keyed API answered (and so measured and logged). */
export function answeredByKeyedApi(request: FastifyRequest): boolean {
  return delegated.has(request);
}

/**
 * The keyed routes as Fastify knows them: their schemas document them in the OpenAPI document
 * and are what the keyed API validates with; Fastify itself validates nothing here (the keyed API
 * counts the key before it validates, SPEC §6). A request reaches these handlers when Fastify
 * receives it (inject, or a path only its router resolves, such as a percent-encoded one); the
 * server hands every other request for these paths to the keyed API directly.
 */
export function registerApiRoutes(app: FastifyInstance, api: KeyedApi): void {
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  const keyed = (route: KeyedRoute) => ({
    // Not Fastify's CORS, validation or request logs: the keyed API does all three itself.
    config: { keyed: true, cors: false },
    logLevel: 'silent' as const,
    validatorCompiler: () => () => true,
    serializerCompiler: () => JSON.stringify,
    handler: (request: FastifyRequest, reply: FastifyReply) => delegateTo(api, route, request, reply),
  });

  app.get(
    '/api/v1/rate',
    {
      ...keyed('/api/v1/rate'),
      schema: {
        operationId: 'getRate',
        summary: 'Live mid-market rate for a currency pair',
        description:
          'Units of `to` per one unit of `from`, derived exactly through the provider base and rounded once. Refreshed every 10 minutes; when the feed is down the last stored rate is served with `stale: true`.',
        tags: ['rates'],
        querystring: RateQuery,
        response: {
          200: json('The rate.', 'Rate'),
          304: NOT_MODIFIED,
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_date`, `missing_parameter`'),
          404: notFoundProblem('`no_history`: with `date`, no rate for the pair on or before it.'),
          ...KEYED_ERRORS,
        },
      },
    },
  );

  app.get(
    '/api/v1/convert',
    {
      ...keyed('/api/v1/convert'),
      schema: {
        operationId: 'convertAmount',
        summary: 'Convert an amount at the live mid-market rate',
        description:
          'result = amount × rate, with the rate exactly as returned in the same response, rounded half-to-even to the target currency minor units. Integer-exact arithmetic throughout.',
        tags: ['rates'],
        querystring: ConvertQuery,
        response: {
          200: json('The conversion.', 'Conversion'),
          304: NOT_MODIFIED,
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_amount`, `invalid_date`, `missing_parameter`'),
          404: notFoundProblem('`no_history`: with `date`, no rate for the pair on or before it.'),
          ...KEYED_ERRORS,
        },
      },
    },
  );

  app.get(
    '/api/v1/history',
    {
      ...keyed('/api/v1/history'),
      schema: {
        operationId: 'getHistory',
        summary: 'Daily history of a pair, with statistics',
        description:
          'Daily reference rates from the start of the range (counted back from today, UTC) to today, on dates where both currencies have a published rate. JSON or CSV; gzip and br when accepted.',
        tags: ['history'],
        querystring: HistoryQuery,
        response: {
          200: {
            description: 'The history, as JSON or CSV.',
            headers: {
              ...QUOTA_HEADERS,
              ...CACHE_HEADERS,
              'Content-Disposition': { type: 'string', description: 'CSV only: attachment; filename="<PAIR>_<range>.csv".' },
            },
            content: {
              'application/json': { schema: ref('History') },
              'text/csv': {
                schema: { type: 'string', description: 'RFC 4180, CRLF line ends, header `date,rate`, one row per point, ascending.' },
              },
            },
          },
          304: NOT_MODIFIED,
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_range`, `invalid_format`, `missing_parameter`'),
          404: notFoundProblem('`no_history`: no rates stored for the pair in the range.'),
          ...KEYED_ERRORS,
        },
      },
    },
  );

  app.get(
    '/api/v1/rates',
    {
      ...keyed('/api/v1/rates'),
      schema: {
        operationId: 'getRates',
        summary: 'One rate or amount in many currencies',
        description:
          'Each entry is exactly what /rate (with `amount`: /convert) answers for its pair at that moment, sorted by `to`. A bad or repeated code in `to` is a 400 with `param: "to"` naming it; an exotic code is backfilled as /rate would. One call counts once.',
        tags: ['rates'],
        querystring: RatesQuery,
        response: {
          200: json('The rates, or the amount converted, per target.', 'Rates'),
          304: NOT_MODIFIED,
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_amount`, `invalid_date`, `missing_parameter`'),
          404: notFoundProblem('`no_history`: with `date`, a currency named in `to` has no rate on or before it.'),
          ...KEYED_ERRORS,
        },
      },
    },
  );

  app.get(
    '/api/v1/currencies',
    {
      ...keyed('/api/v1/currencies'),
      schema: {
        operationId: 'listCurrencies',
        summary: 'The currencies the service answers for',
        description:
          'Every currency /rate answers now (onRequest false), with its providers and stored days, then those a wide-coverage provider may quote on first request (onRequest true). Sorted by code; names and minor units from ISO 4217. Cacheable until the next refresh; counts once.',
        tags: ['rates'],
        querystring: NoQuery,
        response: {
          200: json('The currencies.', 'CurrencyList'),
          304: NOT_MODIFIED,
          ...KEYED_ERRORS,
        },
      },
    },
  );

  app.get(
    '/api/v1/usage',
    {
      ...keyed('/api/v1/usage'),
      schema: {
        operationId: 'getUsage',
        summary: "The calling key's quota today",
        description:
          'The same reading as the X-RateLimit-* headers, exact across instances. Reading it does not count against the quota, and it is answered even when the quota is used up; `Cache-Control: no-store`.',
        tags: ['keys'],
        querystring: NoQuery,
        response: {
          200: { ...json("The key's usage.", 'Usage'), headers: QUOTA_HEADERS },
          401: KEYED_ERRORS[401],
          503: KEYED_ERRORS[503],
        },
      },
    },
  );

  // The API is read-only: the keyed API answers the other methods with a 405.
  for (const route of KEYED_ROUTES) app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: route, schema: { hide: true }, ...keyed(route) });

  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    const entry = (PROBLEMS as Record<string, { status: number; title: string; description: string }>)[code];
    if (!entry) return sendProblem(reply, problemOf('not_found', `No problem type '${code.slice(0, 40)}'.`));
    return reply.type('application/json; charset=utf-8').send({ code, ...entry });
  });
}
