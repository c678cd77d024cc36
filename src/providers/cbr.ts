/**
 * The Bank of Russia's official rates of the rouble: about 55 currencies, set on each Russian
 * business day (by about 15:30 Moscow time) for the next day; Saturday's rates hold until Tuesday's
 * are set, so the days of a series are Tuesday to Saturday and holidays are gaps. Quoted as
 * roubles per `Nominal` units (100 AMD, 10,000 IDR…) with a decimal comma, in windows-1251 XML.
 * API: https://www.cbr.ru/development/SXML/ (`/scripts/XML_daily.asp?date_req=DD/MM/YYYY`, the
 * rates in force on a day; `/scripts/XML_dynamic.asp`, one currency by its `ID` over a range).
 */
import { compare, parseDecimal } from '../core/decimal.js';
import { FeedError } from '../core/errors.js';
import type { FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { utcDay, type Day } from '../core/time.js';
import { commaDecimalRate, CURRENCY_CODE, perCurrencySeries, RatesByDay, readXml, xmlText, type XmlElement } from './central-bank.js';
import { decodeLegacy, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { dayFromDotted, perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). The day's rates are 10 KB and a year of one currency about 30 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'cbr';
const FEED = 'Bank of Russia feed';
const BASE = 'RUB';

export const CBR_METADATA: ProviderMetadata = {
  name: 'Bank of Russia',
  label: 'Bank of Russia',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official rouble rates of about 55 currencies',
  termsUrl: 'https://www.cbr.ru/eng/user_agreement/',
  schedule: 'Russian business days, by about 15:30 Moscow time (12:30 UTC), for the next day; Saturday\'s rates hold until Tuesday\'s',
};

/** A currency of the day's rates: the bank's `ID` its series is asked by, and its code. */
export interface CbrCurrency {
  id: string;
  code: string;
}

function root(text: string, name: string): XmlElement {
  const element = readXml(text, FEED, ['Valute', 'Record'])[name];
  if (typeof element !== 'object' || element === null) throw new FeedError(`${FEED}: the XML is not a ${name} document`);
  return element as XmlElement;
}

function dayOf(text: string, where: string): Day {
  const day = dayFromDotted(text);
  if (day === undefined) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(text)} is not a DD.MM.YYYY date`);
  return day;
}

/**
 * Roubles per one unit from an element's `Value` per `Nominal` units, as the stored reciprocal;
 * it must agree with the element's `VunitRate` (the bank's own per-unit figure) where given.
 */
function perUnitRate(element: XmlElement, where: string): string {
  const value = commaDecimalRate(xmlText(element, 'Value', FEED, where), FEED, where);
  const rate = perUnit(value, xmlText(element, 'Nominal', FEED, where), FEED, where);
  // Older records have no VunitRate, or an empty one.
  if (element['VunitRate'] !== undefined && element['VunitRate'] !== '') {
    const stated = commaDecimalRate(xmlText(element, 'VunitRate', FEED, where), FEED, where);
    if (compare(parseDecimal(stated)!, parseDecimal(rate)!) !== 0) throw new FeedError(`${FEED}: ${where}: ${value} per ${String(element['Nominal'])} units is ${rate} per unit, but VunitRate is ${stated}`);
  }
  // Roubles per unit, as published: stored as the reciprocal of units per rouble.
  return `1/${rate}`;
}

function valutes(text: string): { day: Day; valutes: XmlElement[] } {
  const curs = root(text, 'ValCurs');
  const day = dayOf(xmlText(curs, '@_Date', FEED, 'ValCurs'), 'ValCurs Date');
  const list = curs['Valute'] ?? [];
  return { day, valutes: list as XmlElement[] };
}

function valuteCurrency(valute: XmlElement, index: number): CbrCurrency {
  const where = `Valute #${index}`;
  const code = xmlText(valute, 'CharCode', FEED, where);
  if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: CharCode ${JSON.stringify(code)} is not a currency code`);
  return { id: xmlText(valute, '@_ID', FEED, `${where} (${code})`), code };
}

/** The currencies of the day's rates (`XML_daily.asp`), for their series. */
export function cbrCurrencies(text: string): CbrCurrency[] {
  return valutes(text).valutes.map(valuteCurrency);
}

/**
 * Parses `XML_daily.asp`: `<ValCurs Date="DD.MM.YYYY">` holding a `<Valute ID>` per currency with
 * `CharCode`, `Nominal`, `Value` (roubles per `Nominal` units) and `VunitRate` (per unit).
 */
export function parseCbrDaily(text: string): RateDocument {
  const { day, valutes: list } = valutes(text);
  const byDay = new RatesByDay(FEED);
  list.forEach((valute, index) => {
    const { code } = valuteCurrency(valute, index);
    const where = `Valute #${index} (${code})`;
    byDay.add(day, code, perUnitRate(valute, where), where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

/**
 * Parses `XML_dynamic.asp` for one currency: `<ValCurs ID>` holding a `<Record Date Id>` per day
 * with `Nominal`, `Value` and `VunitRate`; the code comes from the day's rates (`currency`). A
 * record of another `Id` is refused; a range without records is an empty document.
 */
export function parseCbrDynamic(text: string, currency: CbrCurrency): RateDocument {
  const curs = root(text, 'ValCurs');
  const byDay = new RatesByDay(FEED);
  ((curs['Record'] ?? []) as XmlElement[]).forEach((record, index) => {
    const where = `${currency.code} Record #${index}`;
    const id = xmlText(record, '@_Id', FEED, where);
    if (id !== currency.id) throw new FeedError(`${FEED}: ${where}: Id ${id} in the series of ${currency.id}`);
    byDay.add(dayOf(xmlText(record, '@_Date', FEED, where), where), currency.code, perUnitRate(record, where), where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

/** `2026-03-05` as the API writes it in a query, `05/03/2026`. */
const slashed = (day: Day): string => `${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)}`;

export function createCbrProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const text = async (path: string, fetchOptions?: FetchOptions): Promise<string> =>
    decodeLegacy(await fetchBytes(`${origin}${path}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal }), 'windows-1251', FEED);
  // The rates in force today (UTC): without a date the bank answers tomorrow's once they are set.
  const dailyPath = () => `/scripts/XML_daily.asp?date_req=${slashed(utcDay(options.clock.now()))}`;

  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const document = await parseOffThread('cbr', parseCbrDaily, [await text(dailyPath(), fetchOptions)], fetchOptions?.signal);
      if (document.days.length === 0) throw new FeedError(`${FEED}: the day's rates are empty`);
      return document;
    },

    series: perCurrencySeries<CbrCurrency>({
      id: PROVIDER,
      base: BASE,
      feed: FEED,
      upToToday: options.clock,
      log: options.log,
      ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
      currencies: async (fetchOptions) => cbrCurrencies(await text(dailyPath(), fetchOptions)),
      fetchCurrencySpan: async (currency, span, fetchOptions) =>
        parseOffThread(
          'cbrDynamic',
          parseCbrDynamic,
          [await text(`/scripts/XML_dynamic.asp?VAL_NM_RQ=${encodeURIComponent(currency.id)}&date_req1=${slashed(span.from)}&date_req2=${slashed(span.to)}`, fetchOptions), currency],
          fetchOptions?.signal,
        ),
      describe: (currency) => currency.code,
    }),
  };
}
