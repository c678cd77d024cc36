/**
 * The National Bank of Kazakhstan's official (market) exchange rates: the tenge against about 40
 * currencies and the SDR, from the bank's RSS-style XML, one document per day
 * (`/rss/get_rates.cfm?fdate=DD.MM.YYYY`).
 * Rates: https://nationalbank.kz/en/exchangerates/ezhednevnye-oficialnye-rynochnye-kursy-valyut;
 * the document names the bank's site as its copyright holder and states no terms of reuse.
 *
 * `<rates><date>01.04.2026</date><item><title>AMD</title><description>12.72</description>
 * <quant>10</quant>…</item>…`: tenge per `quant` units, stored per one unit as `1/` and that
 * exact number, under the document's date.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { CURRENCY_CODE, dayByDayProvider, isXmlElement, publishedRate, RatesByDay, readXml } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { dayFromDotted, dottedDay, perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is 11 KB of XML: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const FEED = 'NBK feed';
const BASE = 'KZT';

const PROVIDER = 'nbk';

export const NBK_METADATA: ProviderMetadata = {
  name: 'National Bank of Kazakhstan',
  label: 'NBK',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official (market) tenge rates of about 40 currencies and the SDR',
  termsUrl: 'https://nationalbank.kz/en/exchangerates/ezhednevnye-oficialnye-rynochnye-kursy-valyut',
  schedule: 'Kazakh working days, in the afternoon Almaty time; the bank answers a rate for any date asked',
};

const DATA_PATH = '/rss/get_rates.cfm';
/** A week back reaches a day with a document across any run of Kazakh holidays. */
const LATEST_LOOKBACK_DAYS = 7;

/** The element's text, or undefined when it has none or is not one element. */
const textOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Parses a day's document. Strict: a document without its date, an item with a bad code,
 * quantity or rate rejects the whole document; a document without items is an empty one.
 */
export function parseNbkRates(text: string): RateDocument {
  const rates = readXml(text, FEED, ['item'])['rates'];
  if (!isXmlElement(rates)) throw new FeedError(`${FEED}: not the bank's rates document`);
  const dateText = textOf(rates['date']);
  const day = dateText === undefined ? undefined : dayFromDotted(dateText);
  if (day === undefined) throw new FeedError(`${FEED}: the document's date ${JSON.stringify(rates['date'])} is not a date DD.MM.YYYY`);
  const collected = new RatesByDay(FEED);
  ((rates['item'] ?? []) as unknown[]).forEach((item, index) => {
    const code = isXmlElement(item) ? textOf(item['title']) : undefined;
    if (!isXmlElement(item) || code === undefined || !CURRENCY_CODE.test(code) || code === BASE) throw new FeedError(`${FEED}: ${day}: item #${index}: title is ${JSON.stringify(code)}, not a currency code`);
    const where = `${code} on ${day}`;
    const value = textOf(item['description']);
    const quantity = textOf(item['quant']);
    if (value === undefined || quantity === undefined) throw new FeedError(`${FEED}: ${where}: the item has no description or quant`);
    // Tenge per `quant` units, made tenge per unit exactly and stored as its reciprocal.
    collected.add(day, code, `1/${perUnit(publishedRate(value, FEED, where), quantity, FEED, where)}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: collected.days((d) => `${d}T00:00:00Z`) };
}

export function createNbkProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return dayByDayProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    lookbackDays: LATEST_LOOKBACK_DAYS,
    async fetchDay(day, fetchOptions) {
      const bytes = await fetchBytes(`${origin}${DATA_PATH}?fdate=${dottedDay(day)}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('nbk', parseNbkRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
