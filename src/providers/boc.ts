/**
 * The Bank of Canada's daily exchange rates: the Canadian dollar against about 25 currencies,
 * daily averages published each Canadian business day by 16:30 Eastern time, through its Valet
 * API, group `FX_RATES_DAILY`.
 * API: https://www.bankofcanada.ca/valet/docs (observations of a group, JSON).
 *
 * Each series is labelled `XXX/CAD` and its values are Canadian dollars per one unit of XXX,
 * written as strings; each is stored as its exact reciprocal, `1/` and the published number. A
 * series labelled the other way (`CAD/XXX`, units of XXX per dollar) is stored as published. A
 * currency missing on a day is simply absent.
 */
import { FeedError } from '../core/errors.js';
import type { DailyQuotes, DayRange, DecimalString, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, isDay, utcDay, type Day } from '../core/time.js';
import { torontoTime } from './bank-time.js';
import { publishedRate, spannedSeries } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, plainDecimalFromNumberText } from './json-number.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of the FX_RATES_DAILY group is under a megabyte of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'Bank of Canada feed';
const BASE = 'CAD';

const PROVIDER = 'boc';

export const BOC_METADATA: ProviderMetadata = {
  name: 'Bank of Canada',
  label: 'Bank of Canada',
  kind: 'central bank',
  base: BASE,
  quotes: 'the daily average Canadian dollar rates of about 25 currencies, indicative',
  termsUrl: 'https://www.bankofcanada.ca/terms/',
  schedule: 'Canadian business days, by 16:30 Eastern time',
};

const GROUP_PATH = '/valet/observations/group/FX_RATES_DAILY/json';
/** A week back reaches the last business day across any run of Canadian holidays. */
const LATEST_WINDOW_DAYS = 7;
const SERIES_LABEL = /^([A-Z]{3})\/([A-Z]{3})$/;

interface SeriesReading {
  currency: string;
  /** True for a `CAD/XXX` series, whose values are XXX per Canadian dollar. */
  perDollar: boolean;
}

function readSeries(detail: unknown): Map<string, SeriesReading> {
  if (!isJsonObject(detail)) throw new FeedError(`${FEED}: "seriesDetail" is ${describeJsonValue(detail)}, not an object`);
  const series = new Map<string, SeriesReading>();
  for (const [name, info] of Object.entries(detail)) {
    const label = isJsonObject(info) ? info['label'] : undefined;
    const match = typeof label === 'string' ? SERIES_LABEL.exec(label) : null;
    if (!match) throw new FeedError(`${FEED}: series ${name} has no label of the form XXX/CAD`);
    const [, from, to] = match as unknown as [string, string, string];
    if (to === BASE && from !== BASE) series.set(name, { currency: from, perDollar: false });
    else if (from === BASE && to !== BASE) series.set(name, { currency: to, perDollar: true });
    else throw new FeedError(`${FEED}: series ${name} (${label as string}) is not quoted against the Canadian dollar`);
  }
  return series;
}

function observedValue(value: unknown, where: string): string | null {
  if (!isJsonObject(value)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(value)}, not an object`);
  const v = value['v'];
  // Valet leaves a currency out on a day it has no rate; an empty or null value means the same.
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') return publishedRate(v, FEED, where);
  if (v instanceof JsonNumber) return publishedRate(plainDecimalFromNumberText(v.text) ?? v.text, FEED, where);
  throw new FeedError(`${FEED}: ${where}: the value is ${describeJsonValue(v)}`);
}

/**
 * Parses a Valet answer for the `FX_RATES_DAILY` group. Strict about shape: an observation of a
 * series the answer does not describe, a repeated day or a malformed value rejects the whole
 * document. An answer with no observations is an empty document (a range may hold no business day).
 */
export function parseBocObservations(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected an object, got ${describeJsonValue(body)}`);
  const series = readSeries(body['seriesDetail']);
  const observations = body['observations'];
  if (!Array.isArray(observations)) throw new FeedError(`${FEED}: "observations" is ${describeJsonValue(observations)}, not an array`);

  const byDay = new Map<Day, Record<string, DecimalString>>();
  observations.forEach((observation: unknown, index) => {
    if (!isJsonObject(observation)) throw new FeedError(`${FEED}: observation #${index} is ${describeJsonValue(observation)}`);
    const day = observation['d'];
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: observation #${index} has no date "d" of the form YYYY-MM-DD`);
    if (byDay.has(day)) throw new FeedError(`${FEED}: ${day} appears twice`);
    const rates: Record<string, DecimalString> = {};
    for (const [name, value] of Object.entries(observation)) {
      if (name === 'd') continue;
      const reading = series.get(name);
      if (!reading) throw new FeedError(`${FEED}: ${day} has a value for ${name}, a series the answer does not describe`);
      const where = `${name} on ${day}`;
      const published = observedValue(value, where);
      if (published === null) continue;
      // Dollars per unit of XXX: stored as the reciprocal of units of XXX per dollar.
      const rate = reading.perDollar ? published : `1/${published}`;
      if (reading.currency in rates) throw new FeedError(`${FEED}: ${where}: ${reading.currency} is quoted twice on ${day}`);
      rates[reading.currency] = rate;
    }
    // A day on which every value is missing (a holiday row) carries nothing to store.
    if (Object.keys(rates).length > 0) byDay.set(day, rates);
  });

  const days: DailyQuotes[] = [...byDay.keys()]
    .sort()
    .map((day) => ({ day, asOf: torontoTime(day, 16, 30), rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: BASE, days };
}

export function createBocProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');

  const get = async (query: string, fetchOptions?: FetchOptions): Promise<RateDocument> => {
    const bytes = await fetchBytes(`${origin}${GROUP_PATH}?${query}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
    return parseOffThread('boc', parseBocObservations, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
  };

  // The group is one fixed set of currencies, so `currencies` is not applied.
  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const today = utcDay(options.clock.now());
      const document = await get(`start_date=${addDays(today, -LATEST_WINDOW_DAYS)}`, fetchOptions);
      const newest = document.days.at(-1);
      if (!newest) throw new FeedError(`${FEED}: nothing published in the ${LATEST_WINDOW_DAYS} days to ${today}`);
      return { ...document, days: [newest] };
    },

    series: spannedSeries({ id: PROVIDER, base: BASE, log: options.log, ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }) }, (range: DayRange, fetchOptions?: FetchOptions) =>
      get(`start_date=${range.from}&end_date=${range.to}`, fetchOptions),
    ),
  };
}
