import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import AjvCompiler from '@fastify/ajv-compiler';
import Type, { type TSchema } from 'typebox';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { decimalOfNumber } from '../../core/decimal.js';
import { parseGroup, parseWindow, rangesFor, type History } from '../../core/history.js';
import { historyExtent, keepsDeepHistory, retainedYearsText, type HistoryYears } from '../../core/retention.js';
import type { ManyRates } from '../../core/many-rates.js';
import { parseDate, quoteFor, type Conversion, type RateQuote } from '../../core/rates.js';
import type { ListedCurrency } from '../../core/served-currencies.js';
import { AJV_OPTIONS, validationProblem, type Caller } from '../keyed.js';
import { CORS } from '../headers.js';
import { logProblem, problemFromDomainError, problemOf, sendProblem, toProblem, type Problem } from '../problem.js';
import { renderProviderList } from '../responses.js';
import { ConvertQuery, historyQuery, NoQuery, RateQuery, RatesQuery } from '../schemas.js';
import type { ApiServices } from './api.js';

/**
 * The MCP endpoint (Model Context Protocol, Streamable HTTP transport of the official SDK): the
 * keyed API's answers as tools a model calls. Stateless: every POST gets a server and transport of
 * its own, answered with one JSON body, so any process of any instance answers any request.
 *
 * Keys and quotas are the API's: the key (X-Api-Key, or Authorization: Bearer) is checked before
 * the body is read, and a request without a valid one is the API's 401. Each tools/call counts
 * once against the key's quota, through the same step as an API request; initialize, tools/list
 * and notifications do not count, except in a JSON-RPC batch, where every message counts (see
 * BATCH_PROTOCOL_VERSION). Every answer comes from the same functions as the API's, with
 * the same decimal strings, asOf and stale, and every error is the API's problem, as a tool error.
 */

export const MCP_PATH = '/mcp';
/** A tools/call names at most 200 currencies; the app's 1 KiB body bound is for bodiless GETs. */
export const MCP_BODY_LIMIT = 64 * 1024;
/**
 * JSON-RPC batches exist only in MCP 2025-03-26 (added there, removed in 2025-06-18): a batch is
 * taken only from a client that names that version in MCP-Protocol-Version, and it holds at most
 * this many messages, each counted against the key's quota.
 */
const BATCH_PROTOCOL_VERSION = '2025-03-26';
const MCP_BATCH_LIMIT = 10;
const SERVER_INFO = { name: 'exrates', version: '1.0.0' };
const instructions = (years: HistoryYears) =>
  `Mid-market exchange rates (no bank or transfer margin, no forecasts), exact conversion and ${historyExtent(years)} for ISO 4217 currencies. Amounts, rates and results are decimal strings: quote them as given, do not recompute them. asOf is when the provider says the rate applies; stale true means the latest refresh failed and the last stored rate is served.`;

/**
 * Which web pages may call /mcp: `*` (any origin), or the origins listed (EXRATES_MCP_ORIGINS).
 * The transport asks a server to validate Origin against DNS rebinding (a page whose name is
 * re-pointed at a server on the visitor's machine or network calls it as its own origin): a
 * request whose Origin is not allowed is a 403; one without Origin (no browser) is not judged.
 */
export type McpOrigins = '*' | readonly string[];

/**
 * The CORS policy of /mcp, @fastify/cors's on its routes: POST with the headers MCP
 * clients send, exposing the session and protocol-version headers beside the API's.
 */
export function mcpCorsPolicy(origins: McpOrigins) {
  return {
    origin: origins === '*' ? '*' : [...origins],
    methods: ['POST'],
    allowedHeaders: ['Content-Type', 'Accept', 'Authorization', 'X-Api-Key', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposedHeaders: [...CORS.exposedHeaders, 'Mcp-Session-Id', 'Mcp-Protocol-Version'],
    maxAge: CORS.maxAge,
  };
}

/**
 * The SDK's modules, loaded by the first MCP request: loaded at start they would add much to every
 * cold start (docs/performance.md), for an endpoint many deployments never serve.
 */
async function loadSdk() {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    InvalidParams: types.ErrorCode.InvalidParams,
  };
}

/** A validator compiled by Fastify's Ajv compiler, as the routes' query schemas are. */
type Validator = ReturnType<ReturnType<ReturnType<typeof AjvCompiler>>>;

export interface McpOptions {
  services: ApiServices;
  contactEmail: string;
  origins: McpOrigins;
}

/** A tool: its arguments' schema (the API's own query schema, whose names it keeps), and the answer it computes. */
interface ToolDefinition {
  name: string;
  description: string;
  input: TSchema;
  answer(args: Record<string, string | undefined>, request: FastifyRequest, reply: FastifyReply): Promise<{ structured: Record<string, unknown>; text: string }>;
}

/** The stale note of a text answer. */
const staleNote = (stale: boolean) => (stale ? ' STALE: the provider\'s latest refresh failed; this is the last stored rate.' : '');

function rateText(quote: RateQuote): string {
  return `1 ${quote.from} = ${quote.rate} ${quote.to} (mid-market, as of ${quote.asOf}).${staleNote(quote.stale)}`;
}

function conversionText(conversion: Conversion): string {
  const { from, to, amount, rate, result, asOf, stale } = conversion;
  return `${amount} ${from} = ${result} ${to} at 1 ${from} = ${rate} ${to} (mid-market, as of ${asOf}).${staleNote(stale)}`;
}

function ratesText(many: Omit<ManyRates, 'settled'>): string {
  const lines = many.rates.map((entry) => {
    const value = entry.result === undefined ? `${entry.rate}` : `${entry.result} (rate ${entry.rate})`;
    return `${entry.to} ${value}, as of ${entry.asOf}${entry.stale ? ', STALE' : ''}`;
  });
  const head = `${many.amount ?? '1'} ${many.from} in ${many.rates.length} ${many.rates.length === 1 ? 'currency' : 'currencies'} (mid-market):`;
  return [head, ...lines].join('\n');
}

function historyText(history: History): string {
  const { pair, range, group, count, points, stats } = history;
  const first = points[0]!;
  const last = points.at(-1)!;
  const grouping = group === undefined ? 'daily points' : `${group}ly means`;
  const sign = (value: number) => (value > 0 ? `+${value}` : `${value}`);
  return (
    `${pair} over ${range}: ${count} ${grouping} from ${first.date} (${first.rate}) to ${last.date} (${last.rate}). ` +
    `Best ${stats.best} on ${stats.bestDate}, worst ${stats.worst} on ${stats.worstDate}, average ${stats.average}; ` +
    `change ${sign(stats.changePct)}%, last vs average ${sign(stats.currentVsAveragePct)}%.`
  );
}

function currenciesText(currencies: readonly ListedCurrency[]): string {
  const now = currencies.filter((entry) => !entry.onRequest);
  const later = currencies.filter((entry) => entry.onRequest);
  const listed = (entries: readonly ListedCurrency[]) => entries.map((entry) => `${entry.code} (${entry.name})`).join(', ');
  const text = `${now.length} currencies answered now: ${listed(now)}.`;
  return later.length === 0 ? text : `${text}\n${later.length} more loaded on first request: ${listed(later)}.`;
}

interface ProviderSummary {
  id: string;
  name: string;
  kind: string;
  base: string;
  currencies: string[];
  latestDay: string | null;
  refresh: { failing: boolean };
}

function providersText(providers: readonly ProviderSummary[]): string {
  return providers
    .map(
      (p) =>
        `${p.id}: ${p.name} (${p.kind}), base ${p.base}, ${p.currencies.length} currencies, newest day ${p.latestDay ?? 'none yet'}${p.refresh.failing ? ', latest refresh FAILED' : ''}`,
    )
    .join('\n');
}

/** The API's query schema without the parameters that shape an HTTP answer (expand, format). */
const argumentsOf = (schema: TSchema, httpOnly: string[]) => Type.Omit(schema, httpOnly) as TSchema;

function toolDefinitions(services: ApiServices): ToolDefinition[] {
  const { book } = services;
  const parsed = (body: string) => JSON.parse(body) as Record<string, unknown>;
  return [
    {
      name: 'get_rate',
      description:
        'The mid-market exchange rate of a currency pair: units of `to` per one unit of `from`, as an exact decimal string (8 significant digits). Live by default; with `date` (YYYY-MM-DD), the rate of the latest published day on or before it. The answer gives asOf (when the provider says the rate applies) and stale (true when the latest refresh failed).',
      input: argumentsOf(RateQuery, ['expand']),
      async answer(args) {
        const { quote } = await quoteFor(book, { from: args.from!, to: args.to!, date: args.date, source: args.source });
        return { structured: parsed(services.quotes(quote).body), text: rateText(quote) };
      },
    },
    {
      name: 'convert',
      description:
        'Converts an amount from one currency to another at the mid-market rate: result = amount × rate, exact, rounded half-to-even to the target currency\'s minor units. `amount` is a decimal string such as "100" or "99.95". Live by default, or on a past `date`. Money from a bank or transfer service includes its margin; this is the mid-market value.',
      input: argumentsOf(ConvertQuery, ['expand']),
      async answer(args) {
        const { quote } = await quoteFor(book, { from: args.from!, to: args.to!, date: args.date, source: args.source });
        const conversion = parsed(services.conversions(quote, args.amount!).body);
        return { structured: conversion, text: conversionText(conversion as unknown as Conversion) };
      },
    },
    {
      name: 'get_rates',
      description:
        'One base currency (`from`) against many targets at once: `to` is a comma-separated list of ISO 4217 codes such as "USD,GBP,JPY" (omit it for every currency answered now). With `amount`, each entry also gives the amount converted. Each entry is what get_rate (or convert) answers for its pair, with its own asOf and stale. Optional `date` for a past day.',
      input: argumentsOf(RatesQuery, ['expand']),
      async answer(args) {
        const day = args.date === undefined ? undefined : parseDate(args.date, book.clock);
        const { rendered } = await services.manyRates({
          from: args.from!,
          ...(args.to === undefined ? {} : { to: args.to }),
          ...(day === undefined ? {} : { date: day }),
          ...(args.amount === undefined ? {} : { amount: args.amount }),
          ...(args.source === undefined ? {} : { source: args.source }),
        });
        const many = parsed(rendered.body);
        return { structured: many, text: ratesText(many as unknown as Omit<ManyRates, 'settled'>) };
      },
    },
    {
      name: 'get_history',
      description:
        `Daily reference rates of a pair with statistics (best, worst, average, change in percent). Either \`range\` (${rangesFor(book.historyYears).join(', ')} back from today${keepsDeepHistory(book.historyYears) ? ', max every day kept' : ''}; default 1y) or \`start\` and optional \`end\` (YYYY-MM-DD, within ${retainedYearsText(book.historyYears)}). \`group\` week or month gives weekly or monthly means instead of daily points. Returns the statistics and every point.`,
      input: argumentsOf(historyQuery(book.historyYears), ['format']),
      async answer(args, _request, reply) {
        const window = parseWindow({ range: args.range, start: args.start, end: args.end }, services.calendar.today(book.clock.now()).day, book.historyYears);
        const rendered = await services.histories.render(args.from!, args.to!, window, 'json', 'identity', parseGroup(args.group), args.source);
        // The cache's body is read here and given back once the response is sent.
        const body = rendered.body.toString('utf8');
        const history = JSON.parse(body) as History;
        return { structured: history as unknown as Record<string, unknown>, text: historyText(history) };
      },
    },
    {
      name: 'list_currencies',
      description:
        'Every currency the service answers for: ISO 4217 code, name, minor units, the provider that serves it and every provider that quotes it (each a valid `source`), and its stored days; then those a provider loads on first request (onRequest true).',
      input: NoQuery,
      async answer() {
        const list = parsed((await services.currencyList()).body);
        return { structured: list, text: currenciesText(list.currencies as ListedCurrency[]) };
      },
    },
    {
      name: 'list_providers',
      description:
        'The configured rate providers in order of preference: publisher, kind (central bank, peg, aggregator, commercial, file), base currency, the currencies each quotes, its newest day and whether its latest refresh failed. A provider id (or `peg`, for the legal parities together) is what the other tools take as `source`, to use only that provider\'s published numbers.',
      input: NoQuery,
      async answer() {
        const list = parsed((await renderProviderList(book, services.rates, services.providers)).body);
        return { structured: list, text: providersText(list.providers as ProviderSummary[]) };
      },
    },
  ];
}

/** A tool error: the API's problem, as text a model reads and as structured content. */
function toolError(problem: Problem): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${problem.code}: ${problem.detail}` }], structuredContent: { ...problem } };
}

/** Why a JSON-RPC batch is not taken, or undefined when it is (see BATCH_PROTOCOL_VERSION). */
function batchRefusal(version: string | string[] | undefined, length: number): string | undefined {
  if (version !== BATCH_PROTOCOL_VERSION) {
    const named = typeof version === 'string' ? `MCP ${version.slice(0, 20)}` : 'a request without MCP-Protocol-Version';
    return `a JSON-RPC batch is not taken from ${named}: batches are part of MCP ${BATCH_PROTOCOL_VERSION} only; send each message in a POST of its own.`;
  }
  if (length === 0) return 'an empty batch.';
  if (length > MCP_BATCH_LIMIT) return `a batch holds at most ${MCP_BATCH_LIMIT} messages; this one holds ${length}.`;
  return undefined;
}

/** The id of a JSON-RPC request, which its answer names; a notification has none and gets no answer. */
function requestId(message: unknown): unknown[] {
  const id = (message as { id?: unknown; method?: unknown } | null)?.id;
  return typeof (message as { method?: unknown } | null)?.method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : [];
}

/** The request as the SDK's web-standard transport reads it: its headers; the body Fastify parsed is passed beside it. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'host' || name === 'connection') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://localhost${MCP_PATH}`, { method: request.method, headers });
}

export function registerMcpRoutes(app: FastifyInstance, options: McpOptions): void {
  const { services } = options;
  const keyStep = services.keyStep;
  const tools = toolDefinitions(services);
  // Arguments are validated by the same Ajv setup as the API's query strings, so a bad one is the
  // same problem; JSON arguments are not coerced (an amount sent as a number is taken only when exact).
  // Compiled by the first tool call, as the SDK is loaded by the first request.
  let validators: Map<string, Validator> | undefined;
  const compileValidators = () => {
    const compile = AjvCompiler()({}, { customOptions: { ...AJV_OPTIONS, coerceTypes: false } });
    return new Map(tools.map((tool) => [tool.name, compile({ schema: tool.input, method: 'POST', url: MCP_PATH, httpPart: 'body' })]));
  };
  const listed: Tool[] = tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input as Tool['inputSchema'], annotations: { readOnlyHint: true } }));

  /** A tool call's answer; undefined for a tool that does not exist (a protocol error). */
  async function call(name: string, args: Record<string, unknown>, caller: Caller, request: FastifyRequest, reply: FastifyReply, counted: boolean): Promise<CallToolResult | undefined> {
    try {
      // Every call counts, before its tool or arguments are looked at, as an API request counts
      // before validation and a path that names nothing counts too (a batch's messages are counted
      // before they are read).
      const refused = counted ? undefined : await keyStep.count(request, reply, caller);
      if (refused) return toolError(refused);
      const tool = tools.find((candidate) => candidate.name === name);
      if (tool === undefined) return undefined;
      if (typeof args.amount === 'number') {
        // Models and the MCP Inspector send an amount as a JSON number: taken when no digit can have
        // been lost. A negative one, or one of more than 18 integer digits, is refused whatever was
        // written: the validator's problem, worded as the API's.
        const amount = args.amount < 0 || args.amount >= 1e18 ? String(args.amount) : decimalOfNumber(args.amount);
        if (amount === undefined) {
          return toolError(problemOf('invalid_amount', `amount ${String(args.amount)} as a JSON number may not be the number written; send it as a decimal string, such as "99.95".`, 'amount'));
        }
        args = { ...args, amount };
      }
      const validate = (validators ??= compileValidators()).get(name)!;
      if (!validate(args)) return toolError(problemFromDomainError(validationProblem(validate.errors!, rangesFor(services.book.historyYears))));
      const { structured, text } = await tool.answer(args as Record<string, string | undefined>, request, reply);
      // The JSON as text too, as the protocol asks, for clients that pass only text to the model.
      return { content: [{ type: 'text', text }, { type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (error) {
      const answer = toProblem(error);
      logProblem(request.log, error, answer, { tool: name });
      return toolError(answer.problem);
    }
  }

  let sdk: ReturnType<typeof loadSdk> | undefined;

  function mcpServer(loaded: Awaited<ReturnType<typeof loadSdk>>, caller: Caller, request: FastifyRequest, reply: FastifyReply, counted: boolean): Server {
    const server = new loaded.Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: instructions(services.book.historyYears) });
    server.setRequestHandler(loaded.ListToolsRequestSchema, () => ({ tools: listed }));
    server.setRequestHandler(loaded.CallToolRequestSchema, async (message) => {
      const { name, arguments: args = {} } = message.params;
      const result = await call(name, args, caller, request, reply, counted);
      // Not an McpError, whose message already starts "MCP error -32602:", which a client's own
      // McpError would prefix again: the code and the plain message go to the JSON-RPC error.
      if (result === undefined) throw Object.assign(new Error(`No tool '${name.slice(0, 40)}': tools/list names them.`), { code: loaded.InvalidParams });
      return result;
    });
    return server;
  }

  const { origins } = options;
  /**
   * The Origin check, before the key check: a page of an origin not allowed gets the 403 the
   * transport prescribes (its body a JSON-RPC error without id), with no CORS grant (@fastify/cors
   * grants only a listed origin), and counts nothing.
   */
  const fromAllowedOrigin = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const origin = request.headers.origin;
    if (origins === '*' || origin === undefined || origins.includes(origin)) return done();
    // The allowed origins are not named: they are the operator's to tell.
    const message = `Forbidden: pages of ${origin.slice(0, 100)} may not call this MCP endpoint (EXRATES_MCP_ORIGINS lists those that may).`;
    return void reply.code(403).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
  };

  /** The key check, before the body is read: without a valid key, the API's 401 and nothing else. */
  const keyed = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await keyStep.authenticate(request, reply, 'mcp');
    if (caller === undefined) return reply;
    request.caller = caller;
    return undefined;
  };

  app.post(MCP_PATH, { bodyLimit: MCP_BODY_LIMIT, onRequest: [fromAllowedOrigin, keyed], schema: { hide: true } }, async (request, reply) => {
    const caller = request.caller!;
    let messages: unknown = request.body;
    let refused: { ids: unknown[]; problem: Problem } | undefined;
    if (Array.isArray(messages)) {
      const refusal = batchRefusal(request.headers['mcp-protocol-version'], messages.length);
      if (refusal) return reply.code(400).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${refusal}` } }));
      // Each message counts, in order, before any is read; those past the quota are not answered
      // but refused, each with the API's 429 problem, and not counted. None left: the 429 itself.
      let allowed = 0;
      for (; allowed < messages.length; allowed += 1) {
        const problem = await keyStep.count(request, reply, caller);
        if (problem === undefined) continue;
        if (allowed === 0) return sendProblem(reply, problem);
        refused = { ids: messages.slice(allowed).flatMap((message) => requestId(message)), problem };
        break;
      }
      messages = messages.slice(0, allowed);
    }
    // Loaded once a request is to be answered. A failed load is not kept: the next request tries again.
    const loaded = await (sdk ??= loadSdk().catch((error: unknown) => {
      sdk = undefined;
      throw error;
    }));
    const server = mcpServer(loaded, caller, request, reply, Array.isArray(messages));
    const transport = new loaded.Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequest(request), { parsedBody: messages });
      response.headers.forEach((value, name) => reply.header(name, value));
      const text = await response.text();
      if (refused === undefined || (response.status !== 200 && response.status !== 202)) return reply.code(response.status).send(text);
      const answered = text === '' ? [] : (JSON.parse(text) as unknown[]);
      const errors = refused.ids.map((id) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: `${refused.problem.code}: ${refused.problem.detail}`, data: refused.problem } }));
      return reply.code(200).type('application/json').send(JSON.stringify([...answered, ...errors]));
    } finally {
      await server.close();
    }
  });

  // Stateless: no stream to open with GET, no session to end with DELETE (the transport's 405);
  // nothing to put or patch either.
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: MCP_PATH,
    onRequest: [fromAllowedOrigin, keyed],
    schema: { hide: true },
    handler: (request, reply) => {
      reply.header('allow', 'POST');
      return sendProblem(reply, problemOf('method_not_allowed', `${request.method} is not allowed here: this MCP endpoint is stateless; POST each JSON-RPC message.`));
    },
  });
}
