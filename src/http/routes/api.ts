import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseGroup, parseWindow } from '../../core/history.js';
import { retainedYearsText } from '../../core/retention.js';
import type { Provider, RateStore } from '../../core/ports.js';
import type { QuotaCalendar } from '../../core/quota.js';
import { parseDate, quoteFor, type RateBook, type RateQuote } from '../../core/rates.js';
import { sendConditional, type HttpCaches } from '../caching.js';
import { addVary } from '../headers.js';
import type { KeyStep } from '../keyed.js';
import { createTypeChooser, notAcceptable, preferredType } from '../accept.js';
import { PROBLEMS, problemOf, sendProblem } from '../problem.js';
import {
  CSV_TYPE,
  HISTORY_MAX_AGE,
  JSON_TYPE,
  NDJSON_TYPE,
  SETTLED_CACHE_CONTROL,
  renderProviderList,
  renderUsage,
  type HistoryBodies,
  type HistoryFormat,
  type ManyRatesQuery,
  type RenderedBody,
  type RenderedManyRates,
} from '../responses.js';
import {
  badRequest,
  CONDITIONAL_HEADERS,
  ConvertQuery,
  historyQuery,
  historyTextQuery,
  type HistoryParams,
  KEYED_ERRORS,
  NOT_ACCEPTABLE,
  NoQuery,
  notFoundProblem,
  QUOTA_HEADERS,
  RateQuery,
  RatesQuery,
  ref,
  SHARED_SCHEMAS,
  type SharedSchemaId,
} from '../schemas.js';

const CACHE_HEADERS = {
  ETag: { type: 'string', description: 'Strong validator of this representation (a compressed body has its own).' },
  'Last-Modified': { type: 'string', description: 'HTTP date of asOf (for a list, the newest; absent for /currencies and /providers).' },
  'Cache-Control': {
    type: 'string',
    description: 'private, max-age=<seconds until the next refresh, at most 600>; history private, max-age=3600; a settled past date private, max-age=31536000, immutable.',
  },
  Vary: { type: 'string', description: 'X-Api-Key, Authorization; the JSON-only routes also Accept (an Accept that admits no JSON is a 406); history also Accept-Encoding, and Accept when no format is given.' },
};

/** A 200 with a named JSON shape and the headers every cacheable answer carries. */
function json(description: string, id: SharedSchemaId) {
  return { description, headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS }, content: { 'application/json': { schema: ref(id) } } };
}

/** Not an error: the client's copy is current. No body. */
const NOT_MODIFIED = {
  description:
    'Not modified: If-None-Match matched the ETag, or, when no If-None-Match is sent, If-Modified-Since is at or after Last-Modified. No body; counts against the quota.',
  headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS },
  type: 'null',
};

/**
 * What the keyed routes answer from: the rates and the bodies rendered from them, each cache made
 * by buildApp with its bound.
 */
export interface ApiServices {
  book: RateBook;
  /** Where each provider's refresh state is kept. */
  rates: RateStore;
  providers: readonly Provider[];
  keyStep: KeyStep;
  caches: HttpCaches;
  quotes: (quote: RateQuote, provenance?: boolean) => RenderedBody;
  conversions: (quote: RateQuote, amount: string, provenance?: boolean) => RenderedBody;
  histories: HistoryBodies;
  manyRates: (query: ManyRatesQuery) => Promise<RenderedManyRates>;
  currencyList: () => Promise<RenderedBody>;
  /** Cache-Control of a live answer: until the next refresh. */
  liveCacheControl: () => string;
  /** Today's UTC date, worked out once a day (Deps.quotaCalendar). */
  calendar: QuotaCalendar;
}

/** Every keyed route answers GET and HEAD alike (a HEAD gets the headers of the GET, and no body). */
const GET_HEAD: ['GET', 'HEAD'] = ['GET', 'HEAD'];
const COUNTED = { keyed: 'counted' as const };
const HISTORY_CACHE_CONTROL = `private, max-age=${HISTORY_MAX_AGE}`;

/** What /history sends, in the order it prefers them when Accept ranks them equally. */
const HISTORY_MEDIA: readonly (readonly [string, HistoryFormat])[] = [
  ['application/json', 'json'],
  ['application/x-ndjson', 'ndjson'],
  ['text/csv', 'csv'],
];
const HISTORY_OFFERED = HISTORY_MEDIA.map(([type]) => type);

/**
 * The format a /history request gets: `format` when given, else the type the Accept header
 * prefers (JSON when it ranks them equally, or is absent); undefined when Accept admits none.
 */
export function historyFormat(format: HistoryFormat | undefined, accept: string | undefined): HistoryFormat | undefined {
  if (format !== undefined) return format;
  const chosen = preferredType(accept, HISTORY_OFFERED);
  return HISTORY_MEDIA.find(([type]) => type === chosen)?.[1];
}

const JSON_MEDIA = ['application/json'];

const HISTORY_TYPES: Record<HistoryFormat, string> = { json: JSON_TYPE, csv: CSV_TYPE, ndjson: NDJSON_TYPE };

/**
 * The keyed API: ordinary routes, each one schema (validation, types and the OpenAPI document)
 * and one handler. The key and quota step (src/http/keyed.ts) runs before validation for every
 * route whose config says `keyed`; CORS, security headers, errors, logs and metrics are the app's.
 */
export function registerApiRoutes(parent: FastifyInstance, services: ApiServices): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { book, caches } = services;
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  /** The JSON routes send nothing else: an Accept that admits no JSON is a 406, so their answers vary on Accept. */
  const jsonAccepted = createTypeChooser(JSON_MEDIA);
  const acceptsJson = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    addVary(reply, 'Accept');
    done(jsonAccepted(request.headers.accept) === undefined ? notAcceptable(JSON_MEDIA) : undefined);
  };

  /** A JSON answer: its ETag and Last-Modified, or a 304. */
  const sendJson = (request: FastifyRequest, reply: FastifyReply, rendered: RenderedBody, cacheControl: string): void =>
    void sendConditional(request, reply, {
      body: rendered.body,
      length: rendered.length,
      etag: rendered.etag,
      cacheControl,
      lastModified: rendered.lastModified,
      contentType: JSON_TYPE,
    });

  /** A rate or conversion: live, or on a past date (which never changes once a later day is published). */
  const quoted = async (
    request: FastifyRequest,
    reply: FastifyReply,
    query: { from: string; to: string; date?: string | undefined; source?: string | undefined },
    render: (quote: RateQuote) => RenderedBody,
  ): Promise<void> => {
    const dated = await quoteFor(book, query);
    sendJson(request, reply, render(dated.quote), dated.settled ? SETTLED_CACHE_CONTROL : services.liveCacheControl());
  };

  app.route({
    method: GET_HEAD,
    url: '/api/v1/rate',
    config: COUNTED,
    preHandler: acceptsJson,
    schema: {
      operationId: 'getRate',
      summary: 'Live mid-market rate for a currency pair',
      description:
        'Units of `to` per one unit of `from`, derived exactly through the provider base and rounded once. Refreshed every 10 minutes; when the feed is down the last stored rate is served with `stale: true`.',
      tags: ['rates'],
      querystring: RateQuery,
      headers: CONDITIONAL_HEADERS,
      response: {
        200: json('The rate.', 'Rate'),
        304: NOT_MODIFIED,
        400: badRequest('`invalid_currency`, `unsupported_currency`, `unsupported_source`, `invalid_date`, `invalid_format` (expand), `missing_parameter`'),
        404: notFoundProblem('`no_history`: with `date`, no rate for the pair on or before it.'),
        ...NOT_ACCEPTABLE,
        ...KEYED_ERRORS,
      },
    },
    handler: (request, reply) => {
      const provenance = request.query.expand === 'provenance';
      return quoted(request, reply, request.query, (quote) => services.quotes(quote, provenance));
    },
  });

  app.route({
    method: GET_HEAD,
    url: '/api/v1/convert',
    config: COUNTED,
    preHandler: acceptsJson,
    schema: {
      operationId: 'convertAmount',
      summary: 'Convert an amount at the live mid-market rate',
      description:
        'result = amount × rate, with the rate exactly as returned in the same response, rounded half-to-even to the target currency minor units. Integer-exact arithmetic throughout.',
      tags: ['rates'],
      querystring: ConvertQuery,
      headers: CONDITIONAL_HEADERS,
      response: {
        200: json('The conversion.', 'Conversion'),
        304: NOT_MODIFIED,
        400: badRequest('`invalid_currency`, `unsupported_currency`, `unsupported_source`, `invalid_amount`, `invalid_date`, `invalid_format` (expand), `missing_parameter`'),
        404: notFoundProblem('`no_history`: with `date`, no rate for the pair on or before it.'),
        ...NOT_ACCEPTABLE,
        ...KEYED_ERRORS,
      },
    },
    handler: (request, reply) => {
      const provenance = request.query.expand === 'provenance';
      return quoted(request, reply, request.query, (quote) => services.conversions(quote, request.query.amount, provenance));
    },
  });

  /**
   * A history in the format `choose` picks (undefined: none the Accept header admits, a 406 naming
   * `offered`), after the window and grouping are checked; `vary`: what chose it, besides the key.
   */
  const sendHistory = async (
    request: FastifyRequest,
    reply: FastifyReply,
    query: HistoryParams,
    choose: () => HistoryFormat | undefined,
    offered: readonly string[],
    vary: string,
  ): Promise<void> => {
    const { from, to, range, start, end, group, source } = query;
    const window = parseWindow({ range, start, end }, services.calendar.today(book.clock.now()).day, book.historyYears);
    const grouping = parseGroup(group);
    const chosen = choose();
    if (chosen === undefined) {
      addVary(reply, 'Accept');
      throw notAcceptable(offered);
    }
    const encoding = caches.negotiateEncoding(request.headers['accept-encoding']);
    // The form that is sent is the one asked for, and the only one kept.
    const rendered = await services.histories.render(from, to, window, chosen, encoding, grouping, source);
    sendConditional(request, reply, {
      body: rendered.body,
      etag: rendered.etag,
      vary,
      cacheControl: HISTORY_CACHE_CONTROL,
      lastModified: rendered.lastModified,
      ...(chosen === 'csv' ? { disposition: `attachment; filename="${rendered.name}"` } : {}),
      contentType: HISTORY_TYPES[chosen],
      ...(encoding === 'identity' ? {} : { encoding }),
    });
  };

  const historyErrors = (formatCode: string) => ({
    304: NOT_MODIFIED,
    400: badRequest(
      '`invalid_currency`, `unsupported_currency`, `unsupported_source`, `invalid_range` (also `range` with `start`, and an unknown `group`), `invalid_date` (`start` or `end` malformed, in the future, start after end, or before ' +
        `${retainedYearsText(book.historyYears)})${formatCode}, \`missing_parameter\` (\`end\` without \`start\`)`,
    ),
    404: notFoundProblem('`no_history`: no rates stored for the pair in the range.'),
    ...NOT_ACCEPTABLE,
    ...KEYED_ERRORS,
  });
  const HISTORY_DESCRIPTION =
    'Daily reference rates from the start of the range (counted back from today, UTC) to today, or from start to end, on dates where both currencies have a published rate; with group, weekly or monthly means. gzip and br when accepted.';

  app.route({
    method: GET_HEAD,
    url: '/api/v1/history',
    config: COUNTED,
    schema: {
      operationId: 'getHistory',
      summary: 'Daily history of a pair, with statistics',
      description: `${HISTORY_DESCRIPTION} As JSON; the same history as CSV or NDJSON is /api/v1/history.csv or /api/v1/history.ndjson.`,
      tags: ['history'],
      querystring: historyQuery(book.historyYears),
      headers: CONDITIONAL_HEADERS,
      response: {
        200: { description: 'The history.', headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS }, content: { 'application/json': { schema: ref('History') } } },
        ...historyErrors(', `invalid_format`'),
      },
    },
    // Without format, the Accept header chooses among JSON, NDJSON and CSV (the key step named the key headers).
    handler: (request, reply) =>
      sendHistory(
        request,
        reply,
        request.query,
        () => historyFormat(request.query.format, request.headers.accept),
        HISTORY_OFFERED,
        request.query.format === undefined ? 'Accept, Accept-Encoding' : 'Accept-Encoding',
      ),
  });

  /** /history in one text format, as an operation of its own: its 200 is text, for generated clients. */
  const textHistory = (format: 'csv' | 'ndjson', operationId: string, content: Record<string, { schema: { type: 'string'; description: string } }>, headers: object) => {
    const offered = Object.keys(content);
    app.route({
      method: GET_HEAD,
      url: `/api/v1/history.${format}`,
      config: COUNTED,
      schema: {
        operationId,
        summary: `Daily history of a pair, with statistics, as ${format === 'csv' ? 'CSV' : 'NDJSON'}`,
        description: `${HISTORY_DESCRIPTION} What /api/v1/history answers with format=${format}.`,
        tags: ['history'],
        querystring: historyTextQuery(book.historyYears),
        headers: CONDITIONAL_HEADERS,
        response: { 200: { description: 'The history.', headers: { ...QUOTA_HEADERS, ...CACHE_HEADERS, ...headers }, content }, ...historyErrors('') },
      },
      handler: (request, reply) =>
        sendHistory(request, reply, request.query, () => (preferredType(request.headers.accept, offered) === undefined ? undefined : format), offered, 'Accept, Accept-Encoding'),
    });
  };
  textHistory(
    'csv',
    'getHistoryCsv',
    { 'text/csv': { schema: { type: 'string', description: 'RFC 4180, CRLF line ends, header `date,rate` (grouped: `date,rate,days`), one row per point, ascending.' } } },
    {
      'Content-Disposition': {
        type: 'string',
        description: 'attachment; filename="<PAIR>_<range>.csv" (dates: <PAIR>_<start>_<end>.csv; grouped: _week or _month before .csv).',
      },
    },
  );
  textHistory(
    'ndjson',
    'getHistoryNdjson',
    {
      'application/x-ndjson': {
        schema: {
          type: 'string',
          description:
            'One JSON point per line ({"date","rate"}, grouped also "days"), ascending, then one line with pair, range, group when grouped, count and stats; each line ends with \\n.',
        },
      },
    },
    {},
  );

  app.route({
    method: GET_HEAD,
    url: '/api/v1/rates',
    config: COUNTED,
    preHandler: acceptsJson,
    schema: {
      operationId: 'getRates',
      summary: 'One rate or amount in many currencies',
      description:
        'Each entry is exactly what /rate (with `amount`: /convert) answers for its pair at that moment, sorted by `to`. A bad or repeated code in `to` is a 400 with `param: "to"` naming it; an exotic code is backfilled as /rate would. One call counts once.',
      tags: ['rates'],
      querystring: RatesQuery,
      headers: CONDITIONAL_HEADERS,
      response: {
        200: json('The rates, or the amount converted, per target.', 'Rates'),
        304: NOT_MODIFIED,
        400: badRequest('`invalid_currency`, `unsupported_currency`, `unsupported_source`, `invalid_amount`, `invalid_date`, `invalid_format` (expand), `missing_parameter`'),
        404: notFoundProblem('`no_history`: with `date`, a currency named in `to` has no rate on or before it.'),
        ...NOT_ACCEPTABLE,
        ...KEYED_ERRORS,
      },
    },
    handler: async (request, reply) => {
      const { from, to, date, amount, source, expand } = request.query;
      const day = date === undefined ? undefined : parseDate(date, book.clock);
      const { rendered, settled } = await services.manyRates({
        from,
        ...(to === undefined ? {} : { to }),
        ...(day === undefined ? {} : { date: day }),
        ...(amount === undefined ? {} : { amount }),
        ...(source === undefined ? {} : { source }),
        ...(expand === 'provenance' ? { provenance: true } : {}),
      });
      sendJson(request, reply, rendered, settled ? SETTLED_CACHE_CONTROL : services.liveCacheControl());
    },
  });

  app.route({
    method: GET_HEAD,
    url: '/api/v1/currencies',
    config: COUNTED,
    preHandler: acceptsJson,
    schema: {
      operationId: 'listCurrencies',
      summary: 'The currencies the service answers for',
      description:
        'Every currency /rate answers now (onRequest false), with the provider that serves it (servedBy: its own central bank where one is configured, else the first provider in order of preference that quotes it), every provider that quotes it and its stored days; each currency replaced at a legal ratio whose successor is answered (replacedBy); then those a wide-coverage provider may quote on first request (onRequest true). Sorted by code; names and minor units from ISO 4217. Cacheable until the next refresh; counts once.',
      tags: ['rates'],
      querystring: NoQuery,
      headers: CONDITIONAL_HEADERS,
      response: {
        200: json('The currencies.', 'CurrencyList'),
        304: NOT_MODIFIED,
        ...NOT_ACCEPTABLE,
        ...KEYED_ERRORS,
      },
    },
    // Changes only with the rates: cacheable until the next refresh.
    handler: async (request, reply) => sendJson(request, reply, await services.currencyList(), services.liveCacheControl()),
  });

  app.route({
    method: GET_HEAD,
    url: '/api/v1/providers',
    config: COUNTED,
    preHandler: acceptsJson,
    schema: {
      operationId: 'listProviders',
      summary: 'The configured rate providers and their state',
      description:
        'Each configured provider in order of preference: who publishes it and what kind of source it is, its terms of use and publication schedule, its base currency, the currencies it quotes now, its newest stored day, the outcome of its refreshes and how its numbers compare with those of the other providers (crossCheck). Cacheable until the next refresh; counts once.',
      tags: ['rates'],
      querystring: NoQuery,
      headers: CONDITIONAL_HEADERS,
      response: {
        200: json('The providers.', 'ProviderList'),
        304: NOT_MODIFIED,
        ...NOT_ACCEPTABLE,
        ...KEYED_ERRORS,
      },
    },
    handler: async (request, reply) => {
      sendJson(request, reply, await renderProviderList(book, services.rates, services.providers), services.liveCacheControl());
    },
  });

  app.route({
    method: GET_HEAD,
    url: '/api/v1/usage',
    config: { keyed: 'read' },
    preHandler: acceptsJson,
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
        ...NOT_ACCEPTABLE,
        503: KEYED_ERRORS[503],
      },
    },
    // Never stored: it is one key's, and changes with every request. Its Vary is the key step's.
    handler: async (request, reply) => {
      const { tier, usage } = await services.keyStep.usage(request, reply);
      reply.header('cache-control', 'no-store').header('content-type', JSON_TYPE);
      reply.send(renderUsage(tier, usage));
    },
  });

  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    const entry = (PROBLEMS as Record<string, { status: number; title: string; description: string }>)[code];
    if (!entry) return sendProblem(reply, problemOf('not_found', `No problem type '${code.slice(0, 40)}'.`));
    return reply.type('application/json; charset=utf-8').send({ code, ...entry });
  });
}
