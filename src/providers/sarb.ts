/**
 * The South African Reserve Bank's daily exchange rates: the rand against 23 currencies, the
 * weighted average of the banks' rates at about 10:30 Johannesburg time each South African
 * business day, one time series per currency from the bank's web API
 * (`/SarbWebApi/WebIndicators/Shared/GetTimeseriesObservations/{series}/{from}T00:00:00/{to}T00:00:00`).
 * Rates: https://custom.resbank.co.za/SarbWebApi/WebIndicators/HistoricalExchangeRatesDaily; the
 * bank states no terms of reuse for them there.
 *
 * Each series answers `[{"Period":"2026-03-27T00:00:00","Timeseries":"Rand per US Dollar","Value":17.1302,…}]`,
 * newest first. Three series are rands per unit (the dollar, the pound, the euro), stored as `1/`
 * and the published number; the other twenty are units per rand (`Japan: Yen per Rand`), stored
 * as published. The series name must say the direction the table below expects.
 */
import { FeedError } from '../core/errors.js';
import type { DayRange, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { CURRENCY_CODE, rangeQueryProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, midnightDay, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { DEFAULT_PACE_MS, inTurn } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of one series is about 60 KB of JSON: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 2 * 1024 * 1024;

const FEED = 'SARB feed';
const BASE = 'ZAR';

const PROVIDER = 'sarb';

export const SARB_METADATA: ProviderMetadata = {
  name: 'South African Reserve Bank',
  label: 'SARB',
  kind: 'central bank',
  base: BASE,
  quotes: "the rand rates of 23 currencies, weighted averages of the banks' rates at about 10:30",
  termsUrl: 'https://custom.resbank.co.za/SarbWebApi/WebIndicators/HistoricalExchangeRatesDaily',
  schedule: 'South African business days, the rates of about 10:30 Johannesburg time, published later that day',
};

const DATA_PATH = '/SarbWebApi/WebIndicators/Shared/GetTimeseriesObservations';
/** Eight days back reach the last business day across Easter (Good Friday to Family Day). */
const LATEST_WINDOW_DAYS = 8;

interface SarbSeries {
  currency: string;
  /** True for a series of units of the currency per rand; false for rands per unit. */
  perRand: boolean;
}

/** Each series the bank publishes daily against the rand, with its currency and direction. */
export const SARB_SERIES: Readonly<Record<string, SarbSeries>> = {
  EXCX135D: { currency: 'USD', perRand: false },
  EXCZ001D: { currency: 'GBP', perRand: false },
  EXCZ002D: { currency: 'EUR', perRand: false },
  EXCB080D: { currency: 'AUD', perRand: true },
  EXCB051D: { currency: 'BWP', perRand: true },
  EXCB036D: { currency: 'BRL', perRand: true },
  EXCB031D: { currency: 'CAD', perRand: true },
  EXCB121D: { currency: 'CNY', perRand: true },
  EXCB003D: { currency: 'DKK', perRand: true },
  EXCB122D: { currency: 'HKD', perRand: true },
  EXCB123D: { currency: 'INR', perRand: true },
  EXCB094D: { currency: 'ILS', perRand: true },
  EXCB120D: { currency: 'JPY', perRand: true },
  EXCB059D: { currency: 'KES', perRand: true },
  EXCB063D: { currency: 'MWK', perRand: true },
  EXCB081D: { currency: 'NZD', perRand: true },
  EXCB013D: { currency: 'NOK', perRand: true },
  EXCB015D: { currency: 'SEK', perRand: true },
  EXCB016D: { currency: 'CHF', perRand: true },
  EXCB126D: { currency: 'TWD', perRand: true },
  EXCB115D: { currency: 'THB', perRand: true },
  EXCB071D: { currency: 'ZMW', perRand: true },
  EXCB118D: { currency: 'KRW', perRand: true },
};

/**
 * Parses one series' answer (`code`, a key of SARB_SERIES). Strict: an unknown series, a name
 * that says the other direction, a bad period or value rejects the whole document; an empty list
 * is an empty document.
 */
export function parseSarbSeries(text: string, code: string): RateDocument {
  const series = SARB_SERIES[code];
  if (series === undefined || !CURRENCY_CODE.test(series.currency)) throw new FeedError(`${FEED}: ${JSON.stringify(code)} is not a series read here`);
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: ${code}: expected a list of observations, got ${describeJsonValue(body)}`);
  const collected = new RatesByDay(FEED);
  body.forEach((observation: unknown, index) => {
    if (!isJsonObject(observation)) throw new FeedError(`${FEED}: ${code}: observation #${index} is ${describeJsonValue(observation)}, not an object`);
    const day = midnightDay(observation['Period'], FEED, `${code}: observation #${index}: Period`);
    const where = `${code} (${series.currency}) on ${day}`;
    const name = observation['Timeseries'];
    const saysPerRand = typeof name === 'string' && name.endsWith(' per Rand');
    const saysRandPer = typeof name === 'string' && name.startsWith('Rand per ');
    if (series.perRand ? !saysPerRand : !saysRandPer) throw new FeedError(`${FEED}: ${where}: the series is named ${describeJsonValue(name)}, not ${series.perRand ? '"… per Rand"' : '"Rand per …"'}`);
    const value = positiveDecimal(observation['Value']);
    if (value === null) throw new FeedError(`${FEED}: ${where}: Value is ${describeJsonValue(observation['Value'])}, not a positive number`);
    collected.add(day, series.currency, series.perRand ? value : `1/${value}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: collected.days(atHalfPastTen) };
}

/** 10:30 in Johannesburg, which keeps UTC+2 all year. */
function atHalfPastTen(day: string): string {
  return `${day}T08:30:00Z`;
}

/** The series' documents of one range, as one document: each currency from its series. */
export function mergeSarbSeries(documents: readonly RateDocument[]): RateDocument {
  const collected = new RatesByDay(FEED);
  for (const document of documents) collected.addDays(document.days);
  return { provider: PROVIDER, base: BASE, days: collected.days(atHalfPastTen) };
}

export function createSarbProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const paceMs = options.paceMs ?? DEFAULT_PACE_MS;
  const fetchSeries = async (code: string, range: DayRange, fetchOptions?: FetchOptions): Promise<RateDocument> => {
    const url = `${origin}${DATA_PATH}/${code}/${range.from}T00:00:00/${range.to}T00:00:00`;
    const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
    return parseOffThread('sarb', parseSarbSeries, [decodeUtf8(bytes, FEED), code], fetchOptions?.signal);
  };

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    paceMs,
    // A range is a request per series, one after another with the same pause as the spans.
    async fetchRange(range, fetchOptions) {
      const codes = Object.keys(SARB_SERIES);
      const documents = await inTurn(
        codes.map((code) => () => fetchSeries(code, range, fetchOptions)),
        { provider: PROVIDER, paceMs, signal: fetchOptions?.signal },
      );
      return mergeSarbSeries(documents);
    },
  });
}
