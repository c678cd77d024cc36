import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DEFAULT_RANGE } from '../../core/history.js';
import type { RateBook } from '../../core/rates.js';
import { negotiateEncoding, sendCacheable } from '../caching.js';
import { PROBLEMS, problemOf, sendProblem } from '../problem.js';
import { CSV_TYPE, HISTORY_MAX_AGE, JSON_TYPE, liveCacheControl, renderConversion, renderQuote, type HistoryBodies } from '../responses.js';
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
  histories: HistoryBodies;
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { type: 'integer', description: "The key's requests per UTC day." },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left today.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix seconds of the next reset (00:00 UTC).' },
  ETag: { type: 'string', description: 'Strong validator of this representation.' },
  'Cache-Control': { type: 'string', description: 'private, max-age=<seconds>.' },
};

export const API_PATHS = ['/api/v1/rate', '/api/v1/convert', '/api/v1/history'] as const;

export function registerApiRoutes(app: FastifyInstance, options: ApiRouteOptions): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { book, histories } = options;

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
      const rendered = renderQuote(quote);
      return sendCacheable(request, reply, {
        keyed: true,
        body: rendered.body,
        etag: rendered.etag,
        contentType: JSON_TYPE,
        cacheControl: liveCacheControl(book, options.refreshSeconds),
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
        keyed: true,
        body: renderConversion(conversion),
        contentType: JSON_TYPE,
        cacheControl: liveCacheControl(book, options.refreshSeconds),
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
      const csv = format === 'csv';
      const accepted = request.headers['accept-encoding'];
      const encoding = negotiateEncoding(typeof accepted === 'string' ? accepted : undefined);
      // The form that is sent is the one asked for, and the only one kept.
      const rendered = await histories.render(from, to, range ?? DEFAULT_RANGE, csv, encoding);
      return sendCacheable(request, reply, {
        keyed: true,
        body: rendered.body,
        etag: rendered.plainEtag,
        encoding,
        contentType: csv ? CSV_TYPE : JSON_TYPE,
        cacheControl: `private, max-age=${HISTORY_MAX_AGE}`,
        compressible: true,
        ...(csv ? { extraHeaders: { 'Content-Disposition': `attachment; filename="${rendered.name}"` } } : {}),
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
