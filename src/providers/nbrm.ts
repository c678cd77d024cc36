/**
 * The National Bank of the Republic of North Macedonia's exchange rate list: middle rates of the
 * denar against about 30 currencies for every calendar day, each set on the working day before
 * the first day it holds (Friday's holds Saturday to Monday), from the bank's exchange-rate
 * service (`/KLServiceNOV/GetExchangeRate?EndDate=DD.MM.YYYY&StartDate=DD.MM.YYYY&format=json`).
 * Rates: https://www.nbrm.mk (exchange rate list); the bank states no terms of reuse for it there.
 *
 * `[{"datum":"2026-03-01T00:00:00","oznaka":"EUR","nomin":1,"sreden":61.6948,"datum_f":"2026-02-27T00:00:00",…}]`:
 * `sreden` denars per `nomin` units on the day `datum` (fixed on `datum_f`), stored per one unit
 * as `1/` and that exact number.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { CURRENCY_CODE, rangeQueryProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, midnightDay, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { dottedDay, perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A quarter of every currency is about 850 KB of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'NBRM feed';
const BASE = 'MKD';

const PROVIDER = 'nbrm';

export const NBRM_METADATA: ProviderMetadata = {
  name: 'Narodna Banka na Republika Severna Makedonija',
  label: 'NBRM',
  kind: 'central bank',
  base: BASE,
  quotes: 'the middle denar rates of about 30 currencies, for every calendar day',
  termsUrl: 'https://www.nbrm.mk',
  schedule: 'North Macedonian working days, for the following days up to the next working day',
};

const DATA_PATH = '/KLServiceNOV/GetExchangeRate';
/** A quarter a request: the answer names every currency on every calendar day, about 850 KB a quarter. */
const SPAN_DAYS = 92;
/** A week back reaches the last day listed across any run of holidays. */
const LATEST_WINDOW_DAYS = 7;

/**
 * Parses the service's JSON list. Strict: a row with a bad day, code, unit or middle rate, or a
 * rate fixed after the day it holds, rejects the whole document; an empty list is an empty document.
 */
export function parseNbrmRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected a list of rates, got ${describeJsonValue(body)}`);
  const collected = new RatesByDay(FEED);
  body.forEach((row: unknown, index) => {
    if (!isJsonObject(row)) throw new FeedError(`${FEED}: rate #${index} is ${describeJsonValue(row)}, not an object`);
    const day = midnightDay(row['datum'], FEED, `rate #${index}: datum`);
    const code = row['oznaka'];
    if (typeof code !== 'string' || !CURRENCY_CODE.test(code) || code === BASE) throw new FeedError(`${FEED}: rate #${index} (${day}): oznaka is ${describeJsonValue(code)}`);
    const where = `${code} on ${day}`;
    if (midnightDay(row['datum_f'], FEED, `${where}: datum_f`) > day) throw new FeedError(`${FEED}: ${where} is fixed on ${String(row['datum_f'])}, after the day it holds`);
    const rate = positiveDecimal(row['sreden']);
    if (rate === null) throw new FeedError(`${FEED}: ${where}: sreden is ${describeJsonValue(row['sreden'])}, not a positive number`);
    const units = row['nomin'];
    if (!(units instanceof JsonNumber)) throw new FeedError(`${FEED}: ${where}: nomin is ${describeJsonValue(units)}`);
    // Denars per `nomin` units, made denars per unit exactly and stored as its reciprocal.
    collected.add(day, code, `1/${perUnit(rate, units.text, FEED, where)}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => `${day}T00:00:00Z`) };
}

export function createNbrmProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    // The list runs ahead to the next working day: nothing after today is asked for or kept.
    upToToday: true,
    spanDays: SPAN_DAYS,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(range, fetchOptions) {
      // The query as the recorded requests write it.
      const url = `${origin}${DATA_PATH}?EndDate=${dottedDay(range.to)}&StartDate=${dottedDay(range.from)}&format=json`;
      const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('nbrm', parseNbrmRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
