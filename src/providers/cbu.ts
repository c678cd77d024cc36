/**
 * The Central Bank of Uzbekistan's official rates of the sum: about 75 currencies, set on each
 * Uzbek business day (published in the afternoon Tashkent time) for the next day. Quoted as sums
 * per `Nominal` units (10 IDR, 10 VND…), numbers written as strings.
 * API: https://cbu.uz/en/arkhiv-kursov-valyut/json/ (`/en/arkhiv-kursov-valyut/json/all/{YYYY-MM-DD}/`,
 * every currency in force on one day; there is no range query, so history is a request a day).
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { CURRENCY_CODE, dayByDayProvider, publishedRate, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, parseJsonKeepingNumbers } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { dayFromDotted, perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is 26 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'cbu';
const FEED = 'CBU feed';
const BASE = 'UZS';

export const CBU_METADATA: ProviderMetadata = {
  name: 'Central Bank of the Republic of Uzbekistan',
  label: 'CBU',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official sum rates of about 75 currencies',
  // The bank publishes no terms of reuse for its rate archive; its rates are official and public.
  termsUrl: null,
  schedule: 'Uzbek business days, in the afternoon Tashkent time (about 08:00–10:00 UTC), for the next day',
};

/**
 * Parses a day of `/json/all/{day}/`: an array of `{ Ccy, Nominal, Rate, Date: "DD.MM.YYYY", … }`,
 * `Rate` sums per `Nominal` units as strings, made sums per unit exactly.
 */
export function parseCbuRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of rates, got ${describeJsonValue(body)}`);
  const byDay = new RatesByDay(FEED);
  body.forEach((entry: unknown, index) => {
    let where = `rate #${index}`;
    if (!isJsonObject(entry)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(entry)}, not an object`);
    const code = entry['Ccy'];
    if (typeof code !== 'string' || !CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: Ccy is ${describeJsonValue(code)}`);
    const date = entry['Date'];
    const day = typeof date === 'string' ? dayFromDotted(date) : undefined;
    if (day === undefined) throw new FeedError(`${FEED}: ${where} (${code}): Date is ${describeJsonValue(date)}, not DD.MM.YYYY`);
    where = `${where} (${day} ${code})`;
    const [rate, nominal] = [entry['Rate'], entry['Nominal']];
    if (typeof rate !== 'string') throw new FeedError(`${FEED}: ${where}: Rate is ${describeJsonValue(rate)}, not a string`);
    if (typeof nominal !== 'string') throw new FeedError(`${FEED}: ${where}: Nominal is ${describeJsonValue(nominal)}, not a string`);
    // Sums per unit, as published: stored as the reciprocal of units per sum.
    byDay.add(day, code, `1/${perUnit(publishedRate(rate, FEED, where), nominal, FEED, where)}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

export function createCbuProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return dayByDayProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    clock: options.clock,
    // The archive answers the rates in force on any day asked, so today's is always there.
    lookbackDays: 0,
    // Rates are set on Uzbek business days only.
    skipWeekends: true,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchDay(day, fetchOptions) {
      const bytes = await fetchBytes(`${origin}/en/arkhiv-kursov-valyut/json/all/${day}/`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('cbu', parseCbuRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
