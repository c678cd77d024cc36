/**
 * The Frankfurter v2 API: daily rates for about 160 currencies gathered from many central banks,
 * used here for the currencies ECB does not quote.
 * Documentation: https://frankfurter.dev (v2 endpoints `/v2/rates` and `/v2/currencies`).
 *
 * Every request names the base explicitly (EUR unless configured otherwise), so the rates line up
 * with ECB's without a conversion step. Frankfurter publishes dates only, with no time of day, so
 * each day's `asOf` is its midnight UTC. Each central bank publishes on its own calendar, so one
 * answer may hold different days for different currencies: a day of the resulting document holds
 * only the currencies published on it.
 */
import { FeedError } from '../core/errors.js';
import type { Clock, DailyQuotes, DayRange, DecimalString, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, isDay, utcDay, type Day } from '../core/time.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). Five years of a few currencies, or a year of many, is a few megabytes of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 16 * 1024 * 1024;

const PROVIDER = 'frankfurter';
const FEED = 'Frankfurter feed';
const CURRENCY_CODE = /^[A-Z]{3}$/;

export interface FrankfurterProviderOptions {
  /** Where the API lives, e.g. `https://api.frankfurter.dev`; the `/v2/...` paths are appended. */
  baseUrl: string;
  timeoutMs: number;
  clock: Clock;
  /** The currency every request is quoted against; EUR by default, to match ECB. */
  base?: string;
}

export type FrankfurterProvider = Provider & {
  /** Every currency Frankfurter knows, upper-case, sorted, each once. */
  listCurrencies(options?: { signal?: AbortSignal }): Promise<string[]>;
};

function requireString(item: Record<string, unknown>, field: string, where: string): string {
  const value = item[field];
  if (value === undefined) throw new FeedError(`${FEED}: ${where} has no "${field}"`);
  if (typeof value !== 'string') {
    throw new FeedError(`${FEED}: ${where}: "${field}" is ${describeJsonValue(value)}, not a string`);
  }
  return value;
}

/**
 * Parses the answer of `/v2/rates`: an array of `{ date, base, quote, rate }` with the rate a
 * JSON number, whose literal text is kept. Strict, since a body of another shape is more likely an
 * error page or a changed API than data to be read generously. An empty array is an empty
 * document: a range may hold no publication at all.
 */
export function parseFrankfurterRates(text: string, expectedBase: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of rates, got ${describeJsonValue(body)}`);

  const byDay = new Map<Day, Record<string, DecimalString>>();
  body.forEach((item: unknown, index) => {
    const where = `rate #${index}`;
    if (!isJsonObject(item)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(item)}, not an object`);

    const date = requireString(item, 'date', where);
    if (!isDay(date)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(date)} is not a calendar date YYYY-MM-DD`);
    const base = requireString(item, 'base', where);
    if (base !== expectedBase) {
      throw new FeedError(`${FEED}: ${where} is quoted against ${JSON.stringify(base)}, not the requested ${expectedBase}`);
    }
    const quote = requireString(item, 'quote', where);
    if (!CURRENCY_CODE.test(quote)) {
      throw new FeedError(`${FEED}: ${where}: currency code ${JSON.stringify(quote)} is not three upper-case letters`);
    }
    if (item['rate'] === undefined) throw new FeedError(`${FEED}: ${where} (${date} ${quote}) has no "rate"`);
    const rate = positiveDecimal(item['rate']);
    if (rate === null) {
      throw new FeedError(`${FEED}: ${where} (${date} ${quote}): rate is ${describeJsonValue(item['rate'])}, not a positive number`);
    }

    // The base against itself is 1 by definition and says nothing.
    if (quote === base) return;
    let rates = byDay.get(date);
    if (rates === undefined) {
      rates = {};
      byDay.set(date, rates);
    }
    if (rates[quote] !== undefined) throw new FeedError(`${FEED}: ${quote} appears twice on ${date}`);
    rates[quote] = rate;
  });

  const days: DailyQuotes[] = [...byDay.keys()]
    .sort()
    .map((day) => ({ day, asOf: `${day}T00:00:00Z`, rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: expectedBase, days };
}

/**
 * Parses the answer of `/v2/currencies`: an array of objects whose `iso_code` is the only field
 * used (the others may be null). Returns the codes upper-case, sorted and each once.
 */
export function parseFrankfurterCurrencies(text: string): string[] {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of currencies, got ${describeJsonValue(body)}`);
  const codes = new Set<string>();
  body.forEach((item: unknown, index) => {
    const where = `currency #${index}`;
    if (!isJsonObject(item)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(item)}, not an object`);
    const code = requireString(item, 'iso_code', where).toUpperCase();
    if (!CURRENCY_CODE.test(code)) {
      throw new FeedError(`${FEED}: ${where}: iso_code ${JSON.stringify(item['iso_code'])} is not a three-letter code`);
    }
    codes.add(code);
  });
  // An empty list would make every currency look unsupported: treat it as a broken answer.
  if (codes.size === 0) throw new FeedError(`${FEED}: the currency list is empty`);
  return [...codes].sort();
}

function normalizeCode(code: string, what: string): string {
  const upper = code.toUpperCase();
  if (!CURRENCY_CODE.test(upper)) throw new RangeError(`${what} ${JSON.stringify(code)} is not a three-letter currency code`);
  return upper;
}

export function createFrankfurterProvider(options: FrankfurterProviderOptions): FrankfurterProvider {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const base = normalizeCode(options.base ?? 'EUR', 'base');
  const empty = (): RateDocument => ({ provider: PROVIDER, base, days: [] });

  const get = async (pathAndQuery: string, signal: AbortSignal | undefined): Promise<string> => {
    const bytes = await fetchBytes(`${baseUrl}${pathAndQuery}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal });
    return decodeUtf8(bytes, FEED);
  };

  /**
   * Frankfurter answers every currency when `quotes` is left out, which is both large and not
   * what this provider is for: it only tracks the currencies it is asked for, so no currencies
   * means nothing to fetch.
   */
  const quotesFor = (fetchOptions: FetchOptions | undefined): string[] => {
    const codes = (fetchOptions?.currencies ?? []).map((code) => normalizeCode(code, 'currency'));
    return [...new Set(codes)].filter((code) => code !== base);
  };

  // Codes are checked against [A-Z]{3} and days against YYYY-MM-DD, so nothing here needs escaping.
  const ratesQuery = (quotes: string[], range?: DayRange): string =>
    `/v2/rates?base=${base}&quotes=${quotes.join(',')}${range ? `&from=${range.from}&to=${range.to}` : ''}`;

  return {
    id: PROVIDER,
    base,

    async latest(fetchOptions) {
      const quotes = quotesFor(fetchOptions);
      if (quotes.length === 0) return empty();
      return parseOffThread('frankfurter', parseFrankfurterRates, [await get(ratesQuery(quotes), fetchOptions?.signal), base], fetchOptions?.signal);
    },

    async series(range, fetchOptions) {
      if (!isDay(range.from) || !isDay(range.to) || range.from > range.to) {
        throw new RangeError(`not a day range: ${JSON.stringify(range)}`);
      }
      const quotes = quotesFor(fetchOptions);
      // A day after tomorrow (UTC) cannot have been published anywhere yet.
      if (quotes.length === 0 || range.from > addDays(utcDay(options.clock.now()), 1)) return empty();
      const document = await parseOffThread('frankfurter', parseFrankfurterRates, [await get(ratesQuery(quotes, range), fetchOptions?.signal), base], fetchOptions?.signal);
      // A range starting on a day without publication may come back with the publication before it.
      return { ...document, days: document.days.filter((d) => d.day >= range.from && d.day <= range.to) };
    },

    async listCurrencies(listOptions) {
      return parseFrankfurterCurrencies(await get('/v2/currencies', listOptions?.signal));
    },
  };
}
