/**
 * A typed TypeScript client for the exrates API: the types are generated from the service's
 * OpenAPI document (schema.d.ts, by openapi-typescript), the requests are made by openapi-fetch.
 *
 *   const exrates = createExratesClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.EXRATES_KEY! });
 *   const { result, rate, asOf, stale } = await exrates.convert('GBP', 'JPY', '100');
 *
 * Every method resolves the response body or rejects with an ExratesError carrying the
 * problem+json document; `exrates.api` is the underlying openapi-fetch client, for full control
 * (headers, If-None-Match, the raw Response).
 */
import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from './schema.js';

export type { operations, paths } from './schema.js';

type Json<Op extends keyof operations> = operations[Op]['responses'][200] extends { content: { 'application/json': infer Body } } ? Body : never;

/** Units of `to` per one `from`, as an exact decimal string. */
export type Rate = Json<'getRate'>;
export type Conversion = Json<'convertAmount'>;
export type History = Json<'getHistory'>;
export type Rates = Json<'getRates'>;
export type CurrencyList = Json<'listCurrencies'>;
export type ProviderList = Json<'listProviders'>;
export type Usage = Json<'getUsage'>;
/** An RFC 9457 problem document, as every error is answered. */
export type Problem = operations['getRate']['responses'][400]['content']['application/problem+json'];
export type ProblemCode = Problem['code'];
export type HistoryRange = NonNullable<operations['getHistory']['parameters']['query']['range']>;
export type HistoryGroup = NonNullable<operations['getHistory']['parameters']['query']['group']>;

/** Which history: a range back from today, or from `start` to `end`; daily points or weekly or monthly means; one provider's numbers. */
export interface HistoryOptions {
  /** 1m, 3m, 6m, 1y or 5y back from today (UTC); 1y when neither range nor start is given. Not with start. */
  range?: HistoryRange;
  /** The first day, YYYY-MM-DD, within the retained 5 years. */
  start?: string;
  /** With start: the last day, YYYY-MM-DD; default today. */
  end?: string;
  /** One point per ISO week or calendar month: the mean of its days, with how many it averages. */
  group?: HistoryGroup;
  /** A configured provider id: only its published numbers. */
  source?: string;
}

/** A body the service sent that is not the format asked for: which line, and what it held. */
export class ExratesFormatError extends Error {
  constructor(
    readonly line: number,
    readonly text: string,
    cause: unknown,
  ) {
    super(`NDJSON line ${line} is not JSON: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`, { cause });
    this.name = 'ExratesFormatError';
  }
}

/**
 * A history sent as NDJSON (one point per line, then a line with the other fields and the
 * statistics), read line by line into the History the JSON format gives. A line that is not JSON
 * is an ExratesFormatError naming it (lines count from 1).
 */
export function parseHistoryNdjson(text: string): History {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const values = lines.map((line, index) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      throw new ExratesFormatError(index + 1, line, error);
    }
  });
  const summary = values.pop();
  if (summary === undefined) throw new ExratesFormatError(1, '', new Error('The body is empty: no summary line.'));
  return { ...(summary as Omit<History, 'points'>), points: values as History['points'] };
}

export class ExratesError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${status} ${problem.code}: ${problem.detail}`);
    this.name = 'ExratesError';
  }
}

export interface ExratesClientOptions {
  /** Where the service is, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** Sent in the X-Api-Key header. */
  apiKey: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

export interface ExratesClient {
  /** The generated openapi-fetch client: `api.GET('/api/v1/rate', { params: { query: { from, to } } })`. */
  readonly api: Client<paths>;
  /** With `date` (YYYY-MM-DD): the rate of the latest day on or before it. */
  rate(from: string, to: string, date?: string): Promise<Rate>;
  convert(from: string, to: string, amount: string, date?: string): Promise<Conversion>;
  /** Many targets at once (all listed currencies without `to`); with `amount`, each entry has a `result`. */
  rates(from: string, options?: { to?: readonly string[]; date?: string; amount?: string }): Promise<Rates>;
  currencies(): Promise<CurrencyList>;
  /** The configured providers in order of preference: their state, refreshes and cross-check. */
  providers(): Promise<ProviderList>;
  /** The key's quota today; does not count. */
  usage(): Promise<Usage>;
  /** A range (`'1m'`), or the options: `{ start: '2025-01-01', end: '2025-06-30', group: 'month' }`. */
  history(from: string, to: string, window?: HistoryRange | HistoryOptions): Promise<History>;
  /** RFC 4180 text, header `date,rate` (grouped: `date,rate,days`), CRLF line ends. */
  historyCsv(from: string, to: string, window?: HistoryRange | HistoryOptions): Promise<string>;
  /** The history sent as NDJSON and read line by line: the same History as `history` gives; a line that is not JSON rejects with an ExratesFormatError naming it. */
  historyNdjson(from: string, to: string, window?: HistoryRange | HistoryOptions): Promise<History>;
}

async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined) {
    throw new ExratesError(response.status, (error ?? { type: 'about:blank', title: response.statusText, status: response.status, detail: 'No body.', code: 'internal_error' }) as Problem);
  }
  return data;
}

/** The query parameters of a history request: a bare range is `{ range }`; options not given are not sent. */
function historyQuery(window: HistoryRange | HistoryOptions | undefined): HistoryOptions {
  const options = typeof window === 'string' ? { range: window } : (window ?? {});
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

export function createExratesClient(options: ExratesClientOptions): ExratesClient {
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-Api-Key': options.apiKey },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    api,
    rate: (from, to, date) => unwrap(api.GET('/api/v1/rate', { params: { query: { from, to, ...(date ? { date } : {}) } } })),
    convert: (from, to, amount, date) => unwrap(api.GET('/api/v1/convert', { params: { query: { from, to, amount, ...(date ? { date } : {}) } } })),
    rates: (from, options = {}) =>
      unwrap(
        api.GET('/api/v1/rates', {
          params: {
            query: {
              from,
              ...(options.to ? { to: options.to.join(',') } : {}),
              ...(options.date ? { date: options.date } : {}),
              ...(options.amount ? { amount: options.amount } : {}),
            },
          },
        }),
      ),
    currencies: () => unwrap(api.GET('/api/v1/currencies')),
    providers: () => unwrap(api.GET('/api/v1/providers')),
    usage: () => unwrap(api.GET('/api/v1/usage')),
    history: (from, to, window) =>
      unwrap(api.GET('/api/v1/history', { params: { query: { from, to, ...historyQuery(window), format: 'json' } } })) as Promise<History>,
    historyCsv: (from, to, window) =>
      unwrap(api.GET('/api/v1/history', { params: { query: { from, to, ...historyQuery(window), format: 'csv' } }, parseAs: 'text' })),
    historyNdjson: async (from, to, window) =>
      parseHistoryNdjson(await unwrap(api.GET('/api/v1/history', { params: { query: { from, to, ...historyQuery(window), format: 'ndjson' } }, parseAs: 'text' }))),
  };
}
