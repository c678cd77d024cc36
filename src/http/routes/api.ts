import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { historyCsv, pairHistory } from '../../core/history.js';
import type { RateBook } from '../../core/rates.js';
import { createByteLru } from '../byte-lru.js';
import { sendCacheable, strongEtag } from '../caching.js';
import { PROBLEMS, problemOf, sendProblem } from '../problem.js';
import {
  badRequest,
  ConversionResponse,
  ConvertQuery,
  HistoryQuery,
  HistoryResponse,
  KEYED_ERRORS,
  notFoundProblem,
  RateQuery,
  RateResponse,
} from '../schemas.js';

export interface ApiRouteOptions {
  book: RateBook;
  refreshSeconds: number;
}

const HISTORY_MAX_AGE = 3600;
const LIVE_MAX_AGE_CAP = 600;
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { type: 'integer', description: "The key's requests per UTC day." },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left today.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix seconds of the next reset (00:00 UTC).' },
  ETag: { type: 'string', description: 'Strong validator of this representation.' },
  'Cache-Control': { type: 'string', description: 'private, max-age=<seconds>.' },
};

export const API_PATHS = ['/api/v1/rate', '/api/v1/convert', '/api/v1/history'] as const;

/** Rendered bodies of cached answers, dropped with them. */
const renderedQuotes = new WeakMap<object, { body: string; etag: string }>();


export function registerApiRoutes(app: FastifyInstance, options: ApiRouteOptions): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { book } = options;
  /** Rendered history bodies of this app's book (ASCII: one byte a character). */
  const renderedHistories = createByteLru<{ body: string; etag: string; name: string }>(48 * 1024 * 1024);

  /** Live responses may be cached until the next scheduled refresh; refreshes run on wall-clock multiples of the interval. */
  function liveCacheControl(): string {
    const nowSeconds = Math.floor(book.clock.now().getTime() / 1000);
    const untilRefresh = options.refreshSeconds - (nowSeconds % options.refreshSeconds);
    return `private, max-age=${Math.min(untilRefresh, LIVE_MAX_AGE_CAP)}`;
  }

  api.get(
    '/api/v1/rate',
    {
      config: { keyed: true },
      schema: {
        operationId: 'getRate',
        summary: 'Live mid-market rate for a currency pair',
        description:
          'Units of `to` per one unit of `from`, derived exactly through the provider base and rounded once. Refreshed every 10 minutes; when the feed is down the last stored rate is served with `stale: true`.',
        tags: ['rates'],
        querystring: RateQuery,
        response: {
          200: { ...RateResponse, headers: RATE_LIMIT_HEADERS },
          304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' },
          400: badRequest('`invalid_currency`, `unsupported_currency`, `missing_parameter`'),
          ...KEYED_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const quote = await book.liveRate(request.query.from, request.query.to);
      // The book hands out the same quote object until the rates change: render it once.
      let rendered = renderedQuotes.get(quote);
      if (!rendered) {
        const body = reply.serialize(quote) as string;
        rendered = { body, etag: strongEtag(body) };
        renderedQuotes.set(quote, rendered);
      }
      return sendCacheable(request, reply, {
        body: rendered.body,
        etag: rendered.etag,
        contentType: 'application/json; charset=utf-8',
        cacheControl: liveCacheControl(),
        lastModified: quote.asOf,
      });
    },
  );

  api.get(
    '/api/v1/convert',
    {
      config: { keyed: true },
      schema: {
        operationId: 'convertAmount',
        summary: 'Convert an amount at the live mid-market rate',
        description:
          'result = amount × rate, with the rate exactly as returned in the same response, rounded half-to-even to the target currency minor units. Integer-exact arithmetic throughout.',
        tags: ['rates'],
        querystring: ConvertQuery,
        response: {
          200: { ...ConversionResponse, headers: RATE_LIMIT_HEADERS },
          304: { description: 'Not modified.', type: 'null' },
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_amount`, `missing_parameter`'),
          ...KEYED_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const conversion = await book.convert(request.query.from, request.query.to, request.query.amount);
      return sendCacheable(request, reply, {
        body: reply.serialize(conversion) as string,
        contentType: 'application/json; charset=utf-8',
        cacheControl: liveCacheControl(),
        lastModified: conversion.asOf,
      });
    },
  );

  api.get(
    '/api/v1/history',
    {
      config: { keyed: true },
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
            headers: RATE_LIMIT_HEADERS,
            content: {
              'application/json': { schema: HistoryResponse },
              'text/csv': {
                schema: { type: 'string', description: 'RFC 4180, CRLF line ends, header `date,rate`, one row per point, ascending.' },
              },
            },
          },
          304: { description: 'Not modified.', type: 'null' },
          400: badRequest('`invalid_currency`, `unsupported_currency`, `invalid_range`, `invalid_format`, `missing_parameter`'),
          404: notFoundProblem('`no_history`: no rates stored for the pair in the range.'),
          ...KEYED_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const { from, to, range, format } = request.query;
      const cacheControl = `private, max-age=${HISTORY_MAX_AGE}`;
      const csv = format === 'csv';
      // Rendered bodies are cached per pair, range, day and generation of the rates: the same
      // history is asked for again and again between refreshes.
      const key = `${from.toUpperCase()}${to.toUpperCase()}:${range ?? ''}:${csv ? 'csv' : 'json'}:${book.clock.now().toISOString().slice(0, 10)}:${book.generation()}`;
      let rendered = renderedHistories.get(key);
      if (!rendered) {
        const history = await pairHistory(book, from, to, range);
        let body: string;
        if (csv) body = historyCsv(history.points);
        else {
          const { from: _from, to: _to, ...fields } = history;
          body = JSON.stringify(fields);
        }
        rendered = { body, etag: strongEtag(body), name: `${history.pair}_${history.range}.csv` };
        // The generation may have moved while computing: key by the one the answer was built from.
        renderedHistories.set(key, rendered, body.length);
      }
      if (csv) {
        return sendCacheable(request, reply, {
          body: rendered.body,
          etag: rendered.etag,
          contentType: 'text/csv; charset=utf-8',
          cacheControl,
          compressible: true,
          extraHeaders: { 'Content-Disposition': `attachment; filename="${rendered.name}"` },
        });
      }
      return sendCacheable(request, reply, {
        body: rendered.body,
        etag: rendered.etag,
        contentType: 'application/json; charset=utf-8',
        cacheControl,
        compressible: true,
      });
    },
  );

  // The API is read-only: every other method on its paths is a 405 that says what is allowed.
  for (const url of API_PATHS) {
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url,
      schema: { hide: true },
      handler: async (request, reply) => {
        reply.header('Allow', 'GET, HEAD');
        return sendProblem(reply, problemOf('method_not_allowed', `${request.method} is not allowed here; use GET or HEAD.`));
      },
    });
  }

  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    const entry = (PROBLEMS as Record<string, { status: number; title: string; description: string }>)[code];
    if (!entry) return sendProblem(reply, problemOf('not_found', `No problem type '${code.slice(0, 40)}'.`));
    return reply.type('application/json; charset=utf-8').send({ code, ...entry });
  });
}
