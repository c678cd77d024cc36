/**
 * Bank Negara Malaysia's exchange rates: the ringgit against 27 currencies and the SDR, the
 * interbank rates of the 09:00 session each Malaysian business day, from the bank's open API
 * (`Accept: application/vnd.BNM.API.v1+json`): every currency's newest rate
 * (`/public/exchange-rate?session=0900`) and a currency's rates of a month
 * (`/public/exchange-rate/{code}/year/{year}/month/{month}?session=0900`), kept since 2021.
 * API: https://apikijangportal.bnm.gov.my/ (OpenAPI, exchange rate); the portal states no terms of
 * reuse for the rates.
 *
 * `{"data":[{"currency_code":"JPY","unit":100,"rate":{"date":"2026-03-19","middle_rate":2.9747…}}],
 * "meta":{"quote":"rm","session":"0900",…}}` (a month: `data` one currency, `rate` a list): ringgit
 * per `unit` units (`quote` `rm`), the middle rate stored per one unit as `1/` and that exact
 * number. The API prints every number as a double with 17 digits (`4.2199999999999998` for the
 * bank's 4.2200), so each is read as the decimal of at most 15 digits it stands for
 * (json-number.ts, `floatPrintedDecimal`). The SDR is stored as XDR.
 */
import { FeedError } from '../core/errors.js';
import type { DayRange, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { CURRENCY_CODE, monthsOf, RatesByDay, spannedSeries } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, floatPrintedDecimal, isJsonObject, JsonNumber, parseJsonKeepingNumbers } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { DEFAULT_PACE_MS, inTurn, perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). Every currency's newest rate is 5 KB, a month of one currency 3 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const FEED = 'BNM feed';
const BASE = 'MYR';

const PROVIDER = 'bnm';

export const BNM_METADATA: ProviderMetadata = {
  name: 'Bank Negara Malaysia',
  label: 'BNM',
  kind: 'central bank',
  base: BASE,
  quotes: 'the ringgit middle rates of 27 currencies and the SDR at the 09:00 session',
  termsUrl: 'https://apikijangportal.bnm.gov.my/',
  schedule: 'Malaysian business days, the 09:00 Kuala Lumpur session',
};

const DATA_PATH = '/public/exchange-rate';
const SESSION = '0900';
/** The first day the API serves rates of. */
const FIRST_DAY = '2021-01-04';
const ACCEPT = 'application/vnd.BNM.API.v1+json';
/** Ringgit per unit: the API's `quote` for rates in ringgit. */
const IN_RINGGIT = 'rm';
/** The currencies whose history is asked for, as the API names them (SDR for XDR). */
export const BNM_CURRENCIES = ['AED', 'AUD', 'BND', 'CAD', 'CHF', 'CNY', 'EGP', 'EUR', 'GBP', 'HKD', 'IDR', 'INR', 'JPY', 'KHR', 'KRW', 'MMK', 'NPR', 'NZD', 'PHP', 'PKR', 'SAR', 'SDR', 'SGD', 'THB', 'TWD', 'USD', 'VND'];
/** The API's name for the IMF's special drawing right; ISO 4217 writes XDR. */
const API_CODES: Readonly<Record<string, string>> = { SDR: 'XDR' };

/** 09:00 in Kuala Lumpur, which keeps UTC+8 all year. */
const atNine = (day: string) => `${day}T01:00:00Z`;

/**
 * Parses either answer: every currency's newest rate (`data` a list) or one currency's month
 * (`data` one currency, `rate` a list). Strict: rates not in ringgit, a bad code, unit, date or
 * middle rate rejects the whole document; a rate without a middle rate is skipped.
 */
export function parseBnmRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected an object with data, got ${describeJsonValue(body)}`);
  const meta = body['meta'];
  const quote = isJsonObject(meta) ? meta['quote'] : undefined;
  if (quote !== IN_RINGGIT) throw new FeedError(`${FEED}: meta.quote is ${describeJsonValue(quote)}, not ${JSON.stringify(IN_RINGGIT)} (ringgit per unit)`);
  const data = body['data'];
  const currencies = Array.isArray(data) ? data : [data];
  const collected = new RatesByDay(FEED);
  currencies.forEach((item: unknown, index) => {
    if (!isJsonObject(item)) throw new FeedError(`${FEED}: data #${index} is ${describeJsonValue(item)}, not an object`);
    const apiCode = item['currency_code'];
    const code = typeof apiCode === 'string' ? (API_CODES[apiCode] ?? apiCode) : apiCode;
    if (typeof code !== 'string' || !CURRENCY_CODE.test(code) || code === BASE) throw new FeedError(`${FEED}: data #${index}: currency_code is ${describeJsonValue(apiCode)}`);
    const unit = item['unit'];
    if (!(unit instanceof JsonNumber)) throw new FeedError(`${FEED}: ${code}: unit is ${describeJsonValue(unit)}`);
    const rates = Array.isArray(item['rate']) ? item['rate'] : [item['rate']];
    rates.forEach((rate: unknown) => {
      const day = isJsonObject(rate) ? rate['date'] : undefined;
      if (!isJsonObject(rate) || typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: ${code}: a rate dated ${describeJsonValue(day)}`);
      const where = `${code} on ${day}`;
      if (rate['middle_rate'] === null) return;
      const middle = floatPrintedDecimal(rate['middle_rate']);
      if (middle === null) throw new FeedError(`${FEED}: ${where}: middle_rate is ${describeJsonValue(rate['middle_rate'])}, not a positive number`);
      // Ringgit per `unit` units, made ringgit per unit exactly and stored as its reciprocal.
      collected.add(day, code, `1/${perUnit(middle, unit.text, FEED, where)}`, where);
    });
  });
  return { provider: PROVIDER, base: BASE, days: collected.days(atNine) };
}

export function createBnmProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const paceMs = options.paceMs ?? DEFAULT_PACE_MS;
  const get = async (path: string, fetchOptions?: FetchOptions): Promise<RateDocument> => {
    const bytes = await fetchBytes(`${origin}${DATA_PATH}${path}?session=${SESSION}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, accept: ACCEPT, signal: fetchOptions?.signal });
    return parseOffThread('bnm', parseBnmRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
  };
  // A month of every currency: a request per currency, in turn, with the same pause as the months.
  const month = async (span: DayRange, fetchOptions?: FetchOptions): Promise<RateDocument> => {
    const path = `/year/${span.from.slice(0, 4)}/month/${Number(span.from.slice(5, 7))}`;
    const documents = await inTurn(
      BNM_CURRENCIES.map((code) => () => get(`/${code}${path}`, fetchOptions)),
      { provider: PROVIDER, paceMs, signal: fetchOptions?.signal },
    );
    const collected = new RatesByDay(FEED);
    for (const document of documents) collected.addDays(document.days);
    return { provider: PROVIDER, base: BASE, days: collected.days(atNine) };
  };

  return {
    id: PROVIDER,
    base: BASE,
    firstDay: FIRST_DAY,

    async latest(fetchOptions) {
      const document = await get('', fetchOptions);
      const newest = document.days.at(-1);
      if (newest === undefined) throw new FeedError(`${FEED}: the newest rates are empty`);
      return { ...document, days: [newest] };
    },

    series: spannedSeries({ id: PROVIDER, base: BASE, spans: monthsOf, upToToday: options.clock, log: options.log, paceMs }, month),
  };
}
