/**
 * Open Exchange Rates: live rates against USD, refreshed hourly or faster depending on the plan.
 * Documentation: https://docs.openexchangerates.org (latest.json, historical/*.json, errors).
 *
 * The app id travels in the query string, so every URL that can reach a message, a log line or an
 * error's fields is written with the app id replaced.
 */
import { FeedError } from '../core/errors.js';
import type { Clock, DailyQuotes, DayRange, DecimalString, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, isDay, utcDay, type Day } from '../core/time.js';
import { decodeUtf8, FeedHttpError, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';

const PROVIDER = 'openexchangerates';
const FEED = 'Open Exchange Rates feed';
const BASE = 'USD';
const CURRENCY_CODE = /^[A-Z]{3}$/;
const DEFAULT_BASE_URL = 'https://openexchangerates.org/api';
/** One request per day: more than a month is a job for a provider with a time series. */
const MAX_SERIES_DAYS = 31;
/** Enough to fetch a month in a few round trips without looking like a burst to the API. */
const SERIES_CONCURRENCY = 4;
/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is a few KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;
const REDACTED = '[redacted]';

export interface OpenExchangeRatesProviderOptions {
  /** Defaults to https://openexchangerates.org/api. */
  baseUrl?: string;
  appId: string;
  timeoutMs: number;
  clock: Clock;
}

/** The text of an OXR error body (`{ "error": true, "status": 401, "message": "invalid_app_id", ... }`), or null. */
function errorBodyText(body: unknown): string | null {
  if (!isJsonObject(body) || body['error'] === undefined || body['error'] === false) return null;
  const message = typeof body['message'] === 'string' ? body['message'] : 'unspecified error';
  const description = typeof body['description'] === 'string' ? body['description'].trim() : '';
  return description ? `${message}: ${description}` : message;
}

/**
 * Parses latest.json and historical/YYYY-MM-DD.json: one day of rates, the day and `asOf` taken
 * from `timestamp` (Unix seconds, the time the rates were published for). Rate numbers keep their
 * literal text. The base's own entry (always 1) is left out.
 */
export function parseOpenExchangeRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  const upstreamError = errorBodyText(body);
  if (upstreamError !== null) throw new FeedError(`${FEED}: the API answered with an error: ${upstreamError}`);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected an object, got ${describeJsonValue(body)}`);

  const timestamp = body['timestamp'];
  if (!(timestamp instanceof JsonNumber) || !/^[1-9]\d{0,11}$/.test(timestamp.text)) {
    throw new FeedError(`${FEED}: "timestamp" is ${timestamp === undefined ? 'missing' : describeJsonValue(timestamp)}, not Unix seconds`);
  }
  const instant = new Date(Number(timestamp.text) * 1000);

  const base = body['base'];
  if (typeof base !== 'string' || !CURRENCY_CODE.test(base)) {
    throw new FeedError(`${FEED}: "base" is ${base === undefined ? 'missing' : describeJsonValue(base)}, not a currency code`);
  }

  const table = body['rates'];
  if (!isJsonObject(table)) {
    throw new FeedError(`${FEED}: "rates" is ${table === undefined ? 'missing' : describeJsonValue(table)}, not an object`);
  }
  const rates: Record<string, DecimalString> = {};
  for (const [code, value] of Object.entries(table)) {
    if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: currency code ${JSON.stringify(code)} is not three upper-case letters`);
    const rate = positiveDecimal(value);
    if (rate === null) throw new FeedError(`${FEED}: rate of ${code} is ${describeJsonValue(value)}, not a positive number`);
    if (code !== base) rates[code] = rate;
  }
  if (Object.keys(rates).length === 0) throw new FeedError(`${FEED}: the document holds no rates`);

  const day: DailyQuotes = { day: utcDay(instant), asOf: instant.toISOString().replace('.000Z', 'Z'), rates };
  return { provider: PROVIDER, base, days: [day] };
}

/** Every day of a range, inclusive. */
function daysOf(range: DayRange): Day[] {
  const days: Day[] = [];
  for (let day = range.from; day <= range.to; day = addDays(day, 1)) days.push(day);
  return days;
}

export function createOpenExchangeRatesProvider(options: OpenExchangeRatesProviderOptions): Provider {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const appId = options.appId;
  if (appId.trim() === '') throw new RangeError('Open Exchange Rates needs an app id');
  const appIdInUrl = encodeURIComponent(appId);

  // Messages may quote URLs or upstream text; neither may carry the app id, in either spelling.
  const redact = (text: string): string => text.split(appIdInUrl).join(REDACTED).split(appId).join(REDACTED);

  /**
   * Keeps the body of an error status: OXR says why it refused a request (invalid_app_id,
   * not_allowed, ...) only there. Every message has the app id redacted, and no error keeps the
   * original as its cause, since undici's errors may quote the URL with the app id.
   */
  const get = async (path: string, signal: AbortSignal | undefined): Promise<RateDocument> => {
    const url = `${baseUrl}${path}?app_id=${appIdInUrl}`;
    const shown = redact(url);
    let bytes: Uint8Array;
    try {
      bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, accept: 'application/json', keepErrorBody: true, redact, signal });
    } catch (error) {
      if (!(error instanceof FeedHttpError) || error.body === undefined) throw error;
      let reason: string | null = null;
      try {
        reason = errorBodyText(parseJsonKeepingNumbers(new TextDecoder().decode(error.body), FEED));
      } catch {
        // Not an OXR error body (a proxy's page, say): the status alone has to do.
      }
      const detail = reason === null ? error.statusText : redact(`${error.statusText}${error.statusText ? ': ' : ''}${reason}`);
      throw new FeedHttpError(shown, error.status, detail);
    }

    try {
      const document = parseOpenExchangeRates(decodeUtf8(bytes, FEED));
      if (document.base !== BASE) throw new FeedError(`${FEED}: rates are quoted against ${document.base}, not ${BASE}`);
      return document;
    } catch (error) {
      if (error instanceof FeedError) throw new FeedError(redact(`${shown}: ${error.message}`));
      throw error;
    }
  };

  return {
    id: PROVIDER,
    base: BASE,

    // One request answers every currency either way, so `currencies` is not passed on.
    latest(fetchOptions?: FetchOptions) {
      return get('/latest.json', fetchOptions?.signal);
    },

    async series(range, fetchOptions) {
      if (!isDay(range.from) || !isDay(range.to) || range.from > range.to) {
        throw new RangeError(`not a day range: ${JSON.stringify(range)}`);
      }
      if (addDays(range.from, MAX_SERIES_DAYS - 1) < range.to) {
        throw new FeedError(
          `${FEED}: ${range.from}..${range.to} is longer than ${MAX_SERIES_DAYS} days; Open Exchange Rates has no time series ` +
            'on the free plan (one request per day), so history comes from other providers',
        );
      }
      // Days after today (UTC) have no historical file yet.
      const today = utcDay(options.clock.now());
      const days = daysOf({ from: range.from, to: range.to < today ? range.to : today });

      const results = new Map<Day, DailyQuotes>();
      const stop = new AbortController();
      const signal = fetchOptions?.signal ? AbortSignal.any([stop.signal, fetchOptions.signal]) : stop.signal;
      let firstError: { error: unknown } | null = null;
      let next = 0;

      const worker = async (): Promise<void> => {
        while (firstError === null && next < days.length) {
          const day = days[next++]!;
          try {
            const document = await get(`/historical/${day}.json`, signal);
            const quotes = document.days[0]!;
            if (quotes.day !== day) {
              throw new FeedError(`${FEED}: historical/${day}.json holds the rates of ${quotes.day}`);
            }
            results.set(day, quotes);
          } catch (error) {
            // The first failure decides; the requests it cancels fail only as a consequence.
            if (firstError === null) {
              firstError = { error: fetchOptions?.signal?.aborted ? fetchOptions.signal.reason : error };
              stop.abort();
            }
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(SERIES_CONCURRENCY, days.length) }, worker));
      if (firstError !== null) throw (firstError as { error: unknown }).error;

      return { provider: PROVIDER, base: BASE, days: days.map((day) => results.get(day)!) };
    },
  };
}
