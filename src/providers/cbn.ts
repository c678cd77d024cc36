/**
 * The Central Bank of Nigeria's official exchange rates: the naira against 12 currencies and the
 * SDR, buying, central and selling rates, published on Nigerian business days in the afternoon
 * Lagos time; the central rate is stored. The rates page's JSON names each currency in words
 * ("POUNDS STERLING", "YUAN/RENMINBI"), mapped to its code here, and answers the last week or so:
 * there is no range query, so history goes back only as far as that answer.
 * Rates: https://www.cbn.gov.ng/rates/exchratebycurrency.asp (JSON at `/api/GetAllExchangeRates`).
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { publishedRate, rangeQueryProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, parseJsonKeepingNumbers } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). The answer is 10 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'cbn';
const FEED = 'CBN feed';
const BASE = 'NGN';
/** How far back `latest` looks: across a week of holidays. */
const LATEST_WINDOW_DAYS = 7;

export const CBN_METADATA: ProviderMetadata = {
  name: 'Central Bank of Nigeria',
  label: 'CBN',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official naira rates (central rate) of 12 currencies and the SDR',
  termsUrl: 'https://www.cbn.gov.ng/Legal.html',
  schedule: 'Nigerian business days, in the afternoon Lagos time (about 15:00–17:00 UTC)',
};

/**
 * The currencies by the names the bank writes. "CFA" is the West African CFA franc (about 2.4
 * naira, the franc of Nigeria's neighbours; the Central African one is at the same parity) and
 * "RIYAL" the Saudi riyal (3.75 to the dollar in the recorded days).
 */
const CURRENCY_BY_NAME: Readonly<Record<string, string>> = {
  CFA: 'XOF',
  'DANISH KRONA': 'DKK',
  EURO: 'EUR',
  'POUNDS STERLING': 'GBP',
  RIYAL: 'SAR',
  SDR: 'XDR',
  'SOUTH AFRICAN RAND': 'ZAR',
  'SWISS FRANC': 'CHF',
  'UAE DIRHAM': 'AED',
  'US DOLLAR': 'USD',
  YEN: 'JPY',
  'YUAN/RENMINBI': 'CNY',
};

/**
 * Parses `GetAllExchangeRates`: an array of `{ currency, ratedate: "YYYY-MM-DD", buyingrate,
 * centralrate, sellingrate }`, rates in naira per unit as strings; `centralrate` is stored. A name
 * not mapped here is not stored: WAUA, the West African unit of account, which is no currency, and
 * any name the bank adds later, until it is mapped (its code would otherwise be a guess).
 */
export function parseCbnRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of rates, got ${describeJsonValue(body)}`);
  const byDay = new RatesByDay(FEED);
  body.forEach((entry: unknown, index) => {
    let where = `rate #${index}`;
    if (!isJsonObject(entry)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(entry)}, not an object`);
    const name = entry['currency'];
    if (typeof name !== 'string') throw new FeedError(`${FEED}: ${where}: currency is ${describeJsonValue(name)}`);
    const day = entry['ratedate'];
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: ${where} (${name}): ratedate is ${describeJsonValue(day)}, not YYYY-MM-DD`);
    where = `${where} (${day} ${name})`;
    const central = entry['centralrate'];
    if (typeof central !== 'string') throw new FeedError(`${FEED}: ${where}: centralrate is ${describeJsonValue(central)}, not a string`);
    const rate = publishedRate(central, FEED, where);
    const code = CURRENCY_BY_NAME[name];
    if (code === undefined) return;
    // Naira per unit, as published: stored as the reciprocal of units per naira.
    byDay.add(day, code, `1/${rate}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

export function createCbnProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    // One answer holds every day there is: a range of any length is one request, cut to the range.
    spans: (range) => [range],
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(_range, fetchOptions) {
      const bytes = await fetchBytes(`${origin}/api/GetAllExchangeRates`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('cbn', parseCbnRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
