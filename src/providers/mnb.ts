/**
 * Magyar Nemzeti Bank's official exchange rates: the forint against about 30 currencies, fixed at
 * 11:00 Budapest time each Hungarian working day and published about noon, from the bank's SOAP
 * web service (`/arfolyamok.asmx`, operation GetExchangeRates for a range of days and a list of
 * currencies). WSDL: https://www.mnb.hu/arfolyamok.asmx?WSDL; fixing and terms:
 * https://www.mnb.hu/en/statistics/statistical-data-and-information/statistical-time-series/exchange-rates/fixing-and-publication-of-the-official-exchange-rates
 * ("reproduction of the official exchange rates is permitted").
 *
 * The answer carries the rates as XML escaped inside the SOAP result:
 * `<MNBExchangeRates><Day date="2025-03-28"><Rate unit="1" curr="EUR">402,61</Rate>…`, forints
 * per `unit` units (100 for JPY, KRW, IDR) with a decimal comma, newest day first. The comma is
 * read as the decimal point (the digits are kept as published) and each rate stored per one unit
 * as `1/` and that exact number.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { centralEuropeanTime } from './bank-time.js';
import { commaDecimalRate, CURRENCY_CODE, isXmlElement, rangeQueryProvider, RatesByDay, readXml, type XmlElement } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A week of every currency is 9 KB, a year about 450 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'MNB feed';
const BASE = 'HUF';

const PROVIDER = 'mnb';

export const MNB_METADATA: ProviderMetadata = {
  name: 'Magyar Nemzeti Bank',
  label: 'MNB',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official forint rates of about 30 currencies',
  termsUrl: 'https://www.mnb.hu/en/statistics/statistical-data-and-information/statistical-time-series/exchange-rates/fixing-and-publication-of-the-official-exchange-rates',
  schedule: 'Hungarian working days, fixed at 11:00 Budapest time and published about noon',
};

const SERVICE_PATH = '/arfolyamok.asmx';
const SOAP_ACTION = 'http://www.mnb.hu/webservices/MNBArfolyamServiceSoap/GetExchangeRates';
/** The currencies asked for (the service answers only those named), in the order the query names them. */
const CURRENCIES = 'AUD,BRL,CAD,CHF,CNY,CZK,DKK,EUR,GBP,HKD,IDR,ILS,INR,ISK,JPY,KRW,MXN,MYR,NOK,NZD,PHP,PLN,RON,RSD,RUB,SEK,SGD,THB,TRY,UAH,USD,ZAR';
/** Eight days back reach the last working day across Easter and across Christmas. */
const LATEST_WINDOW_DAYS = 8;

/** The SOAP envelope asking for every currency from `from` to `to`, as the recorded request writes it. */
export function mnbRequest(from: string, to: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"
               xmlns:web="http://www.mnb.hu/webservices/">
  <soap:Body>
    <web:GetExchangeRates>
      <web:startDate>${from}</web:startDate>
<web:endDate>${to}</web:endDate>
<web:currencyNames>${CURRENCIES}</web:currencyNames>
    </web:GetExchangeRates>
  </soap:Body>
</soap:Envelope>
`;
}

/** The element at `path` below `node`, or undefined. */
function at(node: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((current, name) => (isXmlElement(current) ? current[name] : undefined), node);
}

/**
 * Parses the SOAP answer of GetExchangeRates. Strict: a fault, an answer without the result, a
 * bad date, unit or rate rejects the whole document; a result without days is an empty document.
 */
export function parseMnbResponse(text: string): RateDocument {
  const envelope = readXml(text, FEED, []);
  const fault = at(envelope, ['Envelope', 'Body', 'Fault', 'faultstring']);
  if (fault !== undefined) throw new FeedError(`${FEED}: the service answered a fault: ${JSON.stringify(String(isXmlElement(fault) ? fault['#text'] : fault).slice(0, 200))}`);
  const result = at(envelope, ['Envelope', 'Body', 'GetExchangeRatesResponse', 'GetExchangeRatesResult']);
  if (typeof result !== 'string') throw new FeedError(`${FEED}: the answer holds no GetExchangeRatesResult`);
  const rates = readXml(result, FEED, ['Day', 'Rate'])['MNBExchangeRates'];
  // An empty result element (no day in the range) is read as an empty string.
  if (rates !== '' && !isXmlElement(rates)) throw new FeedError(`${FEED}: the result is not MNBExchangeRates`);
  const collected = new RatesByDay(FEED);
  for (const day of ((rates as XmlElement)['Day'] ?? []) as unknown[]) {
    const date = isXmlElement(day) ? day['@_date'] : undefined;
    if (typeof date !== 'string' || !isDay(date)) throw new FeedError(`${FEED}: Day date ${JSON.stringify(date)} is not a date YYYY-MM-DD`);
    for (const rate of ((day as XmlElement)['Rate'] ?? []) as unknown[]) {
      const currency = isXmlElement(rate) ? rate['@_curr'] : undefined;
      if (!isXmlElement(rate) || typeof currency !== 'string' || !CURRENCY_CODE.test(currency) || currency === BASE) {
        throw new FeedError(`${FEED}: ${date}: a Rate whose currency is ${JSON.stringify(currency)}`);
      }
      const where = `${currency} on ${date}`;
      const value = rate['#text'];
      if (typeof value !== 'string') throw new FeedError(`${FEED}: ${where}: the Rate holds no number`);
      const unit = rate['@_unit'];
      if (typeof unit !== 'string') throw new FeedError(`${FEED}: ${where}: the Rate has no unit`);
      // Forints per `unit` units, made forints per unit exactly and stored as its reciprocal.
      collected.add(date, currency, `1/${perUnit(commaDecimalRate(value, FEED, where), unit, FEED, where)}`, where);
    }
  }
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => centralEuropeanTime(day, 12)) };
}

export function createMnbProvider(options: BankProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${SERVICE_PATH}`;

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(range, fetchOptions) {
      const bytes = await fetchBytes(url, {
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_BYTES,
        signal: fetchOptions?.signal,
        // A SOAP 1.1 service dispatches on SOAPAction.
        post: { body: mnbRequest(range.from, range.to), contentType: 'text/xml; charset=utf-8', headers: { soapaction: SOAP_ACTION } },
      });
      return parseOffThread('mnb', parseMnbResponse, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
