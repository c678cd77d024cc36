/**
 * The Czech National Bank's exchange rate fixing: about 30 currencies in koruna, one fixing per
 * Czech business day, published after 14:30 Prague time. Quoted per `amount` units (100 for HUF,
 * JPY, INR…, 1,000 for IDR), made exact per-unit rates here.
 * API: https://api.cnb.cz/cnbapi/swagger-ui.html (`/cnbapi/exrates/daily`, `/cnbapi/exrates/daily-year`).
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { CURRENCY_CODE, RatesByDay, spannedSeries, yearsOf } from './central-bank.js';
import { perUnit } from './paced.js';
import type { BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of daily tables is under a megabyte of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const PROVIDER = 'cnb';
const FEED = 'CNB feed';
const BASE = 'CZK';

/**
 * Parses `/cnbapi/exrates/daily` or `/daily-year`: `{ rates: [{ validFor, currencyCode, amount,
 * rate, … }] }`, `rate` koruna per `amount` units, made koruna per one unit exactly.
 */
export function parseCnbRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected an object with rates, got ${describeJsonValue(body)}`);
  const rows = body['rates'];
  if (!Array.isArray(rows)) throw new FeedError(`${FEED}: rates is ${describeJsonValue(rows)}, not a list`);
  const byDay = new RatesByDay(FEED);
  rows.forEach((row: unknown, index) => {
    const where = `rate #${index}`;
    if (!isJsonObject(row)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(row)}, not an object`);
    const code = row['currencyCode'];
    if (typeof code !== 'string' || !CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: currencyCode is ${describeJsonValue(code)}`);
    const day = row['validFor'];
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: ${where} (${code}): validFor is ${describeJsonValue(day)}`);
    const rate = positiveDecimal(row['rate']);
    if (rate === null) throw new FeedError(`${FEED}: ${where} (${day} ${code}): rate is ${describeJsonValue(row['rate'])}, not a positive number`);
    const amount = row['amount'];
    if (!(amount instanceof JsonNumber)) throw new FeedError(`${FEED}: ${where} (${day} ${code}): amount is ${describeJsonValue(amount)}`);
    // Koruna per unit: stored as the reciprocal of units per koruna.
    byDay.add(day, code, `1/${perUnit(rate, amount.text, FEED, `${where} (${day} ${code})`)}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((day) => `${day}T00:00:00Z`) };
}

export function createCnbProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const get = async (path: string, signal: AbortSignal | undefined): Promise<RateDocument> =>
    parseOffThread('cnb', parseCnbRates, [decodeUtf8(await fetchBytes(`${origin}${path}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal }), FEED)], signal);

  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const document = await get('/cnbapi/exrates/daily?lang=EN', fetchOptions?.signal);
      const newest = document.days.at(-1);
      if (newest === undefined) throw new FeedError(`${FEED}: the current fixing is empty`);
      return { ...document, days: [newest] };
    },

    // One document per calendar year.
    series: spannedSeries(
      { id: PROVIDER, base: BASE, spans: yearsOf, upToToday: options.clock, log: options.log, ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }) },
      (span, fetchOptions) => get(`/cnbapi/exrates/daily-year?lang=EN&year=${span.from.slice(0, 4)}`, fetchOptions?.signal),
    ),
  };
}
