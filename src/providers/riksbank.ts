/**
 * Sveriges Riksbank's exchange rates: the Swedish krona against about 30 currencies, the fixing
 * that Nasdaq Stockholm sets at 10:05 from the Swedish banks' mid-prices, available from the
 * Riksbank at about 12:10 Stockholm time each Swedish bank day. Read from its SWEA REST API,
 * group 130 ("currencies against Swedish kronor").
 * API: https://developer.api.riksbank.se/ (SWEA: `/swea/v1/Observations/ByGroup/{group}/{from}/{to}`).
 *
 * Each observation is `{ seriesId: "SEKUSDPMI", date, value }`, the value a JSON number of kronor
 * per one unit of the currency (the database pages show some currencies per 100 units; this API
 * answers per unit for all of them: SEKJPYPMI is about 0.06), each stored as its exact
 * reciprocal, `1/` and the published number. `SEKETT` is the krona against itself (always 1) and says nothing.
 */
import { FeedError } from '../core/errors.js';
import type { DailyQuotes, DecimalString, Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { centralEuropeanTime } from './bank-time.js';
import { publishedRate, rangeQueryProvider } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, plainDecimalFromNumberText } from './json-number.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of the currency group is under a megabyte of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'Riksbank feed';
const BASE = 'SEK';

const PROVIDER = 'riksbank';

export const RIKSBANK_METADATA: ProviderMetadata = {
  name: 'Sveriges Riksbank',
  label: 'Riksbank',
  kind: 'central bank',
  base: BASE,
  quotes: 'the krona fixing of about 30 currencies (Nasdaq Stockholm, 10:05), indicative',
  termsUrl: 'https://www.riksbank.se/en-gb/about-the-website/terms-of-use/',
  schedule: 'Swedish bank days, at about 12:10 Stockholm time',
};

const GROUP_PATH = '/swea/v1/Observations/ByGroup/130';
/** Eight days back reach the last bank day across Easter and across Christmas. */
const LATEST_WINDOW_DAYS = 8;
const SERIES_ID = /^SEK([A-Z]{3})PMI$/;
const KRONA_ITSELF = 'SEKETT';

function field(item: Record<string, unknown>, name: string, where: string): unknown {
  if (!(name in item)) throw new FeedError(`${FEED}: ${where} has no "${name}"`);
  return item[name];
}

/**
 * Parses a SWEA observations answer for group 130. Strict: an observation of an unknown series,
 * a repeated one or a malformed value rejects the whole document; a null value (no rate that day)
 * is skipped; an empty array is an empty document.
 */
export function parseRiksbankObservations(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of observations, got ${describeJsonValue(body)}`);
  const byDay = new Map<Day, Record<string, DecimalString>>();
  body.forEach((item: unknown, index) => {
    const where = `observation #${index}`;
    if (!isJsonObject(item)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(item)}, not an object`);
    const seriesId = field(item, 'seriesId', where);
    const day = field(item, 'date', where);
    const value = field(item, 'value', where);
    if (typeof seriesId !== 'string') throw new FeedError(`${FEED}: ${where}: "seriesId" is ${describeJsonValue(seriesId)}`);
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: ${where} (${seriesId}): "date" is ${describeJsonValue(day)}, not a date YYYY-MM-DD`);
    if (seriesId === KRONA_ITSELF) return;
    const match = SERIES_ID.exec(seriesId);
    if (!match) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(seriesId)} is not a series of a currency against the krona`);
    const currency = match[1]!;
    if (value === null) return;
    const at = `${seriesId} on ${day}`;
    if (!(value instanceof JsonNumber)) throw new FeedError(`${FEED}: ${at}: the value is ${describeJsonValue(value)}, not a number`);
    const rate = publishedRate(plainDecimalFromNumberText(value.text) ?? value.text, FEED, at);
    let rates = byDay.get(day);
    if (!rates) {
      rates = {};
      byDay.set(day, rates);
    }
    if (currency in rates) throw new FeedError(`${FEED}: ${at}: ${currency} is quoted twice on ${day}`);
    // Kronor per unit of the currency: stored as the reciprocal of units per krona.
    rates[currency] = `1/${rate}`;
  });
  const days: DailyQuotes[] = [...byDay.keys()]
    .sort()
    .map((day) => ({ day, asOf: centralEuropeanTime(day, 12, 10), rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: BASE, days };
}

export function createRiksbankProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(range, fetchOptions) {
      const bytes = await fetchBytes(`${origin}${GROUP_PATH}/${range.from}/${range.to}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('riksbank', parseRiksbankObservations, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
