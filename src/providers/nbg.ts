/**
 * The National Bank of Georgia's official exchange rates: the lari against about 40 currencies,
 * set each Georgian working day at about 17:00 Tbilisi time and valid from the next day until the
 * next rate (a rate set on Friday holds Saturday to Monday), from the bank's JSON API: one
 * request per day (`/gw/api/ct/monetarypolicy/currencies/?date=YYYY-MM-DD`), answered with the
 * rate valid on that day.
 * Rates: https://nbg.gov.ge/en/monetary-policy/currency; the bank's site states no terms of reuse
 * for them (official rates published for public use).
 *
 * `[{"date":"2026-02-28T00:00:00.000Z","currencies":[{"code":"AMD","quantity":1000,"rate":7.0960,
 * "date":"2026-02-27T17:01:00.093Z","validFromDate":"2026-02-28T00:00:00.000Z",…}]}]`: lari per
 * `quantity` units, stored per one unit as `1/` and that exact number, under the day the rate is
 * valid from. So, like the NBU's, a day's rates are known the evening before.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { CURRENCY_CODE, dayByDayProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, midnightDay, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is 10 KB of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const FEED = 'NBG feed';
const BASE = 'GEL';

const PROVIDER = 'nbg';

export const NBG_METADATA: ProviderMetadata = {
  name: 'National Bank of Georgia',
  label: 'NBG',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official lari rates of about 40 currencies',
  termsUrl: 'https://nbg.gov.ge/en/monetary-policy/currency',
  schedule: 'Georgian working days at about 17:00 Tbilisi time (13:00 UTC), valid from the next day until the next rate',
};

const DATA_PATH = '/gw/api/ct/monetarypolicy/currencies/';
/** A week back reaches a day with a rate valid on it across any run of Georgian holidays. */
const LATEST_LOOKBACK_DAYS = 7;

/**
 * Parses the API's answer for a day: a list of days (one, or none before the series begins),
 * each with its currencies. Strict: a currency valid from another day than its entry, a bad code,
 * quantity or rate rejects the whole document.
 */
export function parseNbgRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected a list of days, got ${describeJsonValue(body)}`);
  const collected = new RatesByDay(FEED);
  body.forEach((entry: unknown, index) => {
    if (!isJsonObject(entry)) throw new FeedError(`${FEED}: day #${index} is ${describeJsonValue(entry)}, not an object`);
    const day = midnightDay(entry['date'], FEED, `day #${index}: date`);
    const currencies = entry['currencies'];
    if (!Array.isArray(currencies)) throw new FeedError(`${FEED}: ${day}: currencies is ${describeJsonValue(currencies)}, not a list`);
    currencies.forEach((item: unknown, c) => {
      if (!isJsonObject(item)) throw new FeedError(`${FEED}: ${day}: currency #${c} is ${describeJsonValue(item)}, not an object`);
      const code = item['code'];
      if (typeof code !== 'string' || !CURRENCY_CODE.test(code) || code === BASE) throw new FeedError(`${FEED}: ${day}: currency #${c}: code is ${describeJsonValue(code)}`);
      const where = `${code} on ${day}`;
      if (midnightDay(item['validFromDate'], FEED, `${where}: validFromDate`) !== day) throw new FeedError(`${FEED}: ${where} is valid from ${String(item['validFromDate'])}, not from the day it is listed under`);
      const rate = positiveDecimal(item['rate']);
      if (rate === null) throw new FeedError(`${FEED}: ${where}: rate is ${describeJsonValue(item['rate'])}, not a positive number`);
      const quantity = item['quantity'];
      if (!(quantity instanceof JsonNumber)) throw new FeedError(`${FEED}: ${where}: quantity is ${describeJsonValue(quantity)}`);
      // Lari per `quantity` units, made lari per unit exactly and stored as its reciprocal.
      collected.add(day, code, `1/${perUnit(rate, quantity.text, FEED, where)}`, where);
    });
  });
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => `${day}T00:00:00Z`) };
}

export function createNbgProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return dayByDayProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    lookbackDays: LATEST_LOOKBACK_DAYS,
    async fetchDay(day, fetchOptions) {
      const bytes = await fetchBytes(`${origin}${DATA_PATH}?date=${day}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('nbg', parseNbgRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
