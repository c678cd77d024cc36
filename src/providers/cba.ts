/**
 * The Central Bank of Armenia's exchange rates of the dram: about 28 currencies and the SDR, the
 * average market rates it publishes each Armenian business day in the afternoon Yerevan time.
 * Quoted as drams per `Amount` units (10 JPY, 10 KZT, 100 IRR…), made exact per-unit rates here.
 * Gold and silver are quoted per gram and are not stored (XAU and XAG are troy ounces).
 * API: https://api.cba.am/exchangerates.asmx (SOAP 1.1: `ExchangeRatesLatest`, the newest day;
 * `ExchangeRatesByDateRangeByISO`, the days of a range for the currencies named).
 */
import { FeedError } from '../core/errors.js';
import type { FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { CURRENCY_CODE, perCurrencySeries, publishedRate, RatesByDay, readXml, xmlText, type XmlElement } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). Three weeks of every currency are 90 KB, so a year about 1.5 MB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 16 * 1024 * 1024;

const PROVIDER = 'cba';
const FEED = 'CBA feed';
const BASE = 'AMD';
const SERVICE_PATH = '/exchangerates.asmx';
const NAMESPACE = 'http://www.cba.am/';
/** Quoted per gram, while their codes mean a troy ounce. */
const PER_GRAM = new Set(['XAU', 'XAG']);

export const CBA_METADATA: ProviderMetadata = {
  name: 'Central Bank of Armenia',
  label: 'CBA',
  kind: 'central bank',
  base: BASE,
  quotes: 'the average market dram rates of about 28 currencies and the SDR',
  // The bank publishes no terms of reuse for this service; its rates are official and public.
  termsUrl: null,
  schedule: 'Armenian business days, in the afternoon Yerevan time (about 12:00–14:00 UTC)',
};

/** A day of a `…T00:00:00` date or dateTime (`2026-03-02T00:00:00+04:00`, Yerevan's day). */
function dayOf(text: string, where: string): Day {
  const day = text.slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}T00:00:00([+-]\d{2}:\d{2})?$/.test(text) || !isDay(day)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(text)} is not a date`);
  return day;
}

function soapResult(text: string, method: string): XmlElement {
  const body = (readXml(text, FEED, ['ExchangeRate', 'ExchangeRatesByRange'])['Envelope'] as XmlElement | undefined)?.['Body'] as XmlElement | undefined;
  const fault = body?.['Fault'] as XmlElement | undefined;
  if (fault) throw new FeedError(`${FEED}: the service answered a fault: ${JSON.stringify(String(fault['faultstring'] ?? '').slice(0, 120))}`);
  const result = (body?.[`${method}Response`] as XmlElement | undefined)?.[`${method}Result`];
  if (typeof result !== 'object' || result === null) throw new FeedError(`${FEED}: the answer has no ${method}Result`);
  return result as XmlElement;
}

/** Adds a row (`ISO`, `Amount`, `Rate`) of a day: drams per `Amount` units, stored as the reciprocal of the exact per-unit rate. */
function addRate(byDay: RatesByDay, day: Day, row: XmlElement, where: string): void {
  const code = xmlText(row, 'ISO', FEED, where);
  if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: ISO ${JSON.stringify(code)} is not a currency code`);
  const at = `${where} (${day} ${code})`;
  const rate = perUnit(publishedRate(xmlText(row, 'Rate', FEED, at), FEED, at), xmlText(row, 'Amount', FEED, at), FEED, at);
  if (PER_GRAM.has(code)) return;
  // Drams per unit, as published: stored as the reciprocal of units per dram.
  byDay.add(day, code, `1/${rate}`, at);
}

/** The currencies of `ExchangeRatesLatest`, in its order: what a range is asked for. */
export function cbaCurrencies(text: string): string[] {
  const rates = (soapResult(text, 'ExchangeRatesLatest')['Rates'] as XmlElement | undefined)?.['ExchangeRate'];
  return ((rates ?? []) as XmlElement[]).map((row, i) => xmlText(row, 'ISO', FEED, `ExchangeRate #${i}`));
}

/** Parses `ExchangeRatesLatest`: `CurrentDate` and its `Rates`, an `ExchangeRate` (`ISO`, `Amount`, `Rate`) each. */
export function parseCbaLatest(text: string): RateDocument {
  const result = soapResult(text, 'ExchangeRatesLatest');
  const day = dayOf(xmlText(result, 'CurrentDate', FEED, 'ExchangeRatesLatestResult'), 'CurrentDate');
  const byDay = new RatesByDay(FEED);
  const rows = ((result['Rates'] as XmlElement | undefined)?.['ExchangeRate'] ?? []) as XmlElement[];
  rows.forEach((row, i) => addRate(byDay, day, row, `ExchangeRate #${i}`));
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

/**
 * Parses `ExchangeRatesByDateRangeByISO`: a .NET DataSet (an inline schema, then a diffgram) whose
 * rows `ExchangeRatesByRange` carry `Rate`, `Amount`, `ISO` and `RateDate`; days without rates
 * (weekends, holidays) have no rows. A range without rows has no `DocumentElement`: an empty document.
 */
export function parseCbaRange(text: string): RateDocument {
  const result = soapResult(text, 'ExchangeRatesByDateRangeByISO');
  const diffgram = result['diffgram'];
  if (diffgram === undefined) throw new FeedError(`${FEED}: the range answer has no diffgram`);
  const rows = (((diffgram as XmlElement)['DocumentElement'] as XmlElement | undefined)?.['ExchangeRatesByRange'] ?? []) as XmlElement[];
  const byDay = new RatesByDay(FEED);
  rows.forEach((row, i) => {
    const where = `ExchangeRatesByRange #${i}`;
    addRate(byDay, dayOf(xmlText(row, 'RateDate', FEED, where), where), row, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

/** A SOAP 1.1 envelope around one call, as the service's help page writes it. */
function envelope(call: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
               xmlns:xsd="http://www.w3.org/2001/XMLSchema"
               xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">
  <soap:Body>
    ${call}
  </soap:Body>
</soap:Envelope>
`;
}

export function createCbaProvider(options: BankProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${SERVICE_PATH}`;
  const call = async (method: string, call: string, fetchOptions?: FetchOptions): Promise<string> =>
    decodeUtf8(
      await fetchBytes(url, {
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_BYTES,
        signal: fetchOptions?.signal,
        post: { body: envelope(call), contentType: 'text/xml; charset=utf-8', headers: { soapaction: `"${NAMESPACE}${method}"` } },
      }),
      FEED,
    );
  const latestText = (fetchOptions?: FetchOptions) => call('ExchangeRatesLatest', `<ExchangeRatesLatest xmlns="${NAMESPACE}" />`, fetchOptions);

  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const document = await parseOffThread('cbaLatest', parseCbaLatest, [await latestText(fetchOptions)], fetchOptions?.signal);
      if (document.days.length === 0) throw new FeedError(`${FEED}: the newest day holds no rate`);
      return document;
    },

    // One range request names every currency of the newest day: the series is of that list as a whole.
    series: perCurrencySeries<string[]>({
      id: PROVIDER,
      base: BASE,
      feed: FEED,
      upToToday: options.clock,
      log: options.log,
      ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
      currencies: async (fetchOptions) => [cbaCurrencies(await latestText(fetchOptions))],
      fetchCurrencySpan: async (codes, span, fetchOptions) => {
        const request = `<ExchangeRatesByDateRangeByISO xmlns="${NAMESPACE}">
  <ISOCodes>${codes.join(',')}</ISOCodes>
  <DateFrom>${span.from}</DateFrom>
  <DateTo>${span.to}</DateTo>
</ExchangeRatesByDateRangeByISO>`;
        return parseOffThread('cbaRange', parseCbaRange, [await call('ExchangeRatesByDateRangeByISO', request, fetchOptions)], fetchOptions?.signal);
      },
      describe: () => 'every currency',
    }),
  };
}
