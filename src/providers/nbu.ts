/**
 * The National Bank of Ukraine's official hryvnia rates: about 60 currencies and metals, set on
 * each Ukrainian business day for the next day and carried over weekends and holidays, so every
 * calendar day has rates. Quoted as hryvnias per `units` units of the currency (10 for THB, 1,000
 * for VND…), with `rate_per_unit` beside it.
 * API: https://bank.gov.ua/en/open-data/api-dev (`/NBU_Exchange/exchange_site`, a date range in JSON).
 */
import { FeedError } from '../core/errors.js';
import { compare, parseDecimal } from '../core/decimal.js';
import type { Provider, RateDocument } from '../core/ports.js';
import type { Day } from '../core/time.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { CURRENCY_CODE, rangeQueryProvider, RatesByDay } from './central-bank.js';
import { dayFromDotted, perUnit } from './paced.js';
import type { BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A quarter of every currency is about a megabyte of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 16 * 1024 * 1024;

const PROVIDER = 'nbu';
const FEED = 'NBU feed';
const BASE = 'UAH';
/** Days per request of a long range: a quarter's answer is about 1.5 MB. */
const SPAN_DAYS = 92;
/** How far back `latest` asks: the rates of every calendar day are published, so a week is ample. */
const LATEST_LOOKBACK_DAYS = 7;

/**
 * Parses an `exchange_site` (or `statdirectory/exchange`) JSON answer: an array of
 * `{ exchangedate: "DD.MM.YYYY", cc, rate, units?, rate_per_unit? }`. The rate becomes hryvnias per
 * one unit, exactly (`rate` ÷ `units`), and must agree with `rate_per_unit` when that is given.
 * Entries without a three-letter code (the old archive's `___`) are skipped. An empty array is an
 * empty document.
 */
export function parseNbuRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of rates, got ${describeJsonValue(body)}`);
  const byDay = new RatesByDay(FEED);
  body.forEach((item: unknown, index) => {
    const where = `rate #${index}`;
    if (!isJsonObject(item)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(item)}, not an object`);
    const code = item['cc'];
    if (typeof code !== 'string') throw new FeedError(`${FEED}: ${where}: cc is ${describeJsonValue(code)}`);
    if (!CURRENCY_CODE.test(code)) return;
    const date = item['exchangedate'];
    const day = typeof date === 'string' ? dayFromDotted(date) : undefined;
    if (day === undefined) throw new FeedError(`${FEED}: ${where} (${code}): exchangedate is ${describeJsonValue(date)}, not DD.MM.YYYY`);
    const rate = positiveDecimal(item['rate']);
    if (rate === null) throw new FeedError(`${FEED}: ${where} (${day} ${code}): rate is ${describeJsonValue(item['rate'])}, not a positive number`);
    const unitsValue = item['units'] ?? new JsonNumber('1');
    if (!(unitsValue instanceof JsonNumber)) throw new FeedError(`${FEED}: ${where} (${day} ${code}): units is ${describeJsonValue(unitsValue)}`);
    const value = perUnit(rate, unitsValue.text, FEED, `${where} (${day} ${code})`);
    const stated = item['rate_per_unit'];
    if (stated !== undefined && stated !== null) {
      const statedText = positiveDecimal(stated);
      if (statedText === null || compare(parseDecimal(statedText)!, parseDecimal(value)!) !== 0) {
        throw new FeedError(`${FEED}: ${where} (${day} ${code}): ${rate} per ${unitsValue.text} units is ${value} per unit, but rate_per_unit is ${describeJsonValue(stated)}`);
      }
    }
    // Hryvnias per unit, as published: stored as the reciprocal of units per hryvnia.
    byDay.add(day, code, `1/${value}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((day) => `${day}T00:00:00Z`) };
}

const compact = (day: Day): string => day.replaceAll('-', '');

export function createNbuProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_LOOKBACK_DAYS,
    spanDays: SPAN_DAYS,
    // The NBU dates tomorrow's rates today: days after today (UTC) are left for tomorrow.
    upToToday: true,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(range, fetchOptions) {
      const url = `${origin}/NBU_Exchange/exchange_site?end=${compact(range.to)}&json=&order=asc&sort=exchangedate&start=${compact(range.from)}`;
      const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('nbu', parseNbuRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
