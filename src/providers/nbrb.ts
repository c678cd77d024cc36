/**
 * The National Bank of the Republic of Belarus's official rates of the Belarusian rouble: about 30
 * currencies, set on each Belarusian business day (published around midday Minsk time) for the
 * days until the next setting, so every calendar day has rates. Quoted as roubles per `Cur_Scale`
 * units (1,000 AMD, 100,000 VND…), made exact per-unit rates here.
 * API: https://www.nbrb.by/apihelp/exrates (`/exrates/rates?ondate=…&periodicity=0`, the day's
 * table; `/exrates/rates/dynamics/{Cur_ID}`, one currency over at most 365 days).
 *
 * A currency's `Cur_ID` is the bank's internal code of the currency at one scale: when the bank
 * changes the number of units it quotes per, the currency gets a new `Cur_ID`. So the series of a
 * `Cur_ID` is at the scale of the current table, and history is loaded for the current `Cur_ID`s
 * only (days before a change of scale are not in it).
 */
import { FeedError } from '../core/errors.js';
import type { FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { isDay, utcDay, type Day } from '../core/time.js';
import { CURRENCY_CODE, perCurrencySeries, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). The day's table is 5 KB and a year of one currency about 25 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'nbrb';
const FEED = 'NBRB feed';
const BASE = 'BYN';
/** The API's limit of one `dynamics` request. */
const SPAN_DAYS = 365;

export const NBRB_METADATA: ProviderMetadata = {
  name: 'National Bank of the Republic of Belarus',
  label: 'NBRB',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official Belarusian rouble rates of about 30 currencies',
  // The bank publishes no terms of reuse for these pages; its rates are official and public.
  termsUrl: null,
  schedule: "Belarusian business days, around midday Minsk time (about 09:00–11:30 UTC), for the days until the next setting; weekends and holidays carry the last day's rates",
};

/** A currency of the day's table: what its series is asked and read by. */
export interface NbrbCurrency {
  id: string;
  code: string;
  scale: string;
}

/** The `Date` of an entry, `2026-03-17T00:00:00`: a calendar day. */
function dayOf(value: unknown, where: string): Day {
  const text = typeof value === 'string' ? value : '';
  const day = text.slice(0, 10);
  if (text !== `${day}T00:00:00` || !isDay(day)) throw new FeedError(`${FEED}: ${where}: Date is ${describeJsonValue(value)}, not YYYY-MM-DDT00:00:00`);
  return day;
}

function entries(text: string): Array<Record<string, unknown>> {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of rates, got ${describeJsonValue(body)}`);
  return body.map((entry: unknown, index) => {
    if (!isJsonObject(entry)) throw new FeedError(`${FEED}: rate #${index} is ${describeJsonValue(entry)}, not an object`);
    return entry;
  });
}

function curId(entry: Record<string, unknown>, where: string): string {
  const id = entry['Cur_ID'];
  if (!(id instanceof JsonNumber) || !/^\d+$/.test(id.text)) throw new FeedError(`${FEED}: ${where}: Cur_ID is ${describeJsonValue(id)}`);
  return id.text;
}

/** Roubles per one unit from an entry's `Cur_OfficialRate` per `scale` units, as the stored reciprocal. */
function officialRate(entry: Record<string, unknown>, scale: string, where: string): string {
  const rate = positiveDecimal(entry['Cur_OfficialRate']);
  if (rate === null) throw new FeedError(`${FEED}: ${where}: Cur_OfficialRate is ${describeJsonValue(entry['Cur_OfficialRate'])}, not a positive number`);
  // Roubles per unit, as published: stored as the reciprocal of units per rouble.
  return `1/${perUnit(rate, scale, FEED, where)}`;
}

function tableCurrency(entry: Record<string, unknown>, where: string): NbrbCurrency {
  const code = entry['Cur_Abbreviation'];
  if (typeof code !== 'string' || !CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: Cur_Abbreviation is ${describeJsonValue(code)}`);
  const scale = entry['Cur_Scale'];
  if (!(scale instanceof JsonNumber)) throw new FeedError(`${FEED}: ${where} (${code}): Cur_Scale is ${describeJsonValue(scale)}`);
  return { id: curId(entry, `${where} (${code})`), code, scale: scale.text };
}

/** The currencies of a day's table (`/exrates/rates?periodicity=0`), for their series. */
export function nbrbCurrencies(text: string): NbrbCurrency[] {
  return entries(text).map((entry, index) => tableCurrency(entry, `rate #${index}`));
}

/**
 * Parses the day's table: an array of `{ Cur_ID, Date, Cur_Abbreviation, Cur_Scale,
 * Cur_OfficialRate }`, roubles per `Cur_Scale` units, made roubles per unit exactly.
 */
export function parseNbrbRates(text: string): RateDocument {
  const byDay = new RatesByDay(FEED);
  entries(text).forEach((entry, index) => {
    const { code, scale } = tableCurrency(entry, `rate #${index}`);
    const where = `rate #${index} (${code})`;
    byDay.add(dayOf(entry['Date'], where), code, officialRate(entry, scale, where), where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((day) => `${day}T00:00:00Z`) };
}

/**
 * Parses one currency's `dynamics`: an array of `{ Cur_ID, Date, Cur_OfficialRate }` with neither
 * code nor scale, which come from the day's table (`currency`); an entry of another `Cur_ID` is refused.
 */
export function parseNbrbDynamics(text: string, currency: NbrbCurrency): RateDocument {
  const byDay = new RatesByDay(FEED);
  entries(text).forEach((entry, index) => {
    const where = `${currency.code} rate #${index}`;
    const id = curId(entry, where);
    if (id !== currency.id) throw new FeedError(`${FEED}: ${where}: Cur_ID ${id} in the series of Cur_ID ${currency.id}`);
    byDay.add(dayOf(entry['Date'], where), currency.code, officialRate(entry, currency.scale, where), where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((day) => `${day}T00:00:00Z`) };
}

export function createNbrbProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const text = async (path: string, fetchOptions?: FetchOptions): Promise<string> =>
    decodeUtf8(await fetchBytes(`${origin}${path}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal }), FEED);
  // The table of today (UTC): asked by date, as after 21:00 UTC Minsk is already on the next day.
  const tablePath = () => `/exrates/rates?ondate=${utcDay(options.clock.now())}&periodicity=0`;

  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const document = await parseOffThread('nbrb', parseNbrbRates, [await text(tablePath(), fetchOptions)], fetchOptions?.signal);
      if (document.days.length === 0) throw new FeedError(`${FEED}: the day's table is empty`);
      return document;
    },

    series: perCurrencySeries<NbrbCurrency>({
      id: PROVIDER,
      base: BASE,
      feed: FEED,
      spanDays: SPAN_DAYS,
      upToToday: options.clock,
      log: options.log,
      ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
      currencies: async (fetchOptions) => nbrbCurrencies(await text(tablePath(), fetchOptions)),
      fetchCurrencySpan: async (currency, span, fetchOptions) =>
        parseOffThread(
          'nbrbDynamics',
          parseNbrbDynamics,
          [await text(`/exrates/rates/dynamics/${currency.id}?endDate=${span.to}&startDate=${span.from}`, fetchOptions), currency],
          fetchOptions?.signal,
        ),
      describe: (currency) => currency.code,
    }),
  };
}
