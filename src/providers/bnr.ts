/**
 * Banca Naţională a României's reference rates: the leu against about 35 currencies, gold and the
 * SDR, from the average quotations of the banks, published shortly after 13:00 Bucharest time
 * each Romanian banking day, as XML: the day's file (`/nbrfxrates.xml`) and one file per year
 * (`/files/xml/years/nbrfxrates{year}.xml`).
 * Format: https://www.bnr.ro/apage.aspx?pid=7512 (schema https://www.bnr.ro/xsd/nbrfxrates.xsd),
 * which asks readers to keep the rates locally rather than fetch them often.
 *
 * `<DataSet><Body><OrigCurrency>RON</OrigCurrency><Cube date="2026-01-05"><Rate currency="EUR">5.0905</Rate>
 * <Rate currency="HUF" multiplier="100">1.3247</Rate>…`: lei per unit, or per `multiplier` units,
 * stored per one unit as `1/` and that exact number. XAU is a gram of gold, not the troy ounce
 * ISO 4217 counts in, so it is left out.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { centralEuropeanTime } from './bank-time.js';
import { CURRENCY_CODE, isXmlElement, publishedRate, RatesByDay, readXml, spannedSeries, yearsOf } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A whole year is about 330 KB of XML: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'BNR feed';
const BASE = 'RON';

const PROVIDER = 'bnr';

export const BNR_METADATA: ProviderMetadata = {
  name: 'Banca Naţională a României',
  label: 'BNR',
  kind: 'central bank',
  base: BASE,
  quotes: 'the leu reference rates of about 35 currencies and the SDR',
  termsUrl: 'https://www.bnr.ro/apage.aspx?pid=7512',
  schedule: 'Romanian banking days, shortly after 13:00 Bucharest time',
};

const DAY_PATH = '/nbrfxrates.xml';
const yearPath = (year: string) => `/files/xml/years/nbrfxrates${year}.xml`;
/** The first banking day of the oldest yearly file the bank serves (2005). */
const FIRST_DAY = '2005-01-03';
/** A gram of gold: XAU in ISO 4217 is a troy ounce, so this number is no XAU rate. */
const GOLD_GRAM = 'XAU';

/**
 * Parses a day's or a year's file. Strict: a document that is not the reference-rate DataSet in
 * lei, a bad date or a malformed rate rejects the whole document.
 */
export function parseBnrXml(text: string): RateDocument {
  const root = readXml(text, FEED, ['Cube', 'Rate']);
  const dataSet = root['DataSet'];
  const content = isXmlElement(dataSet) ? dataSet['Body'] : undefined;
  if (!isXmlElement(content)) throw new FeedError(`${FEED}: not the BNR's DataSet of rates`);
  if (content['OrigCurrency'] !== BASE) throw new FeedError(`${FEED}: OrigCurrency is ${JSON.stringify(content['OrigCurrency'])}, not ${BASE}`);
  const cubes = content['Cube'] ?? [];
  const collected = new RatesByDay(FEED);
  for (const cube of cubes as unknown[]) {
    if (!isXmlElement(cube)) throw new FeedError(`${FEED}: a Cube without a date`);
    const day = cube['@_date'];
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: Cube date ${JSON.stringify(day)} is not a date YYYY-MM-DD`);
    for (const rate of (cube['Rate'] ?? []) as unknown[]) {
      const currency = isXmlElement(rate) ? rate['@_currency'] : undefined;
      if (!isXmlElement(rate) || typeof currency !== 'string' || !CURRENCY_CODE.test(currency) || currency === BASE) {
        throw new FeedError(`${FEED}: ${day}: a Rate whose currency is ${JSON.stringify(currency)}`);
      }
      if (currency === GOLD_GRAM) continue;
      const where = `${currency} on ${day}`;
      const value = rate['#text'];
      if (typeof value !== 'string') throw new FeedError(`${FEED}: ${where}: the Rate holds no number`);
      const multiplier = rate['@_multiplier'] ?? '1';
      if (typeof multiplier !== 'string') throw new FeedError(`${FEED}: ${where}: multiplier is not text`);
      // Lei per `multiplier` units, made lei per unit exactly and stored as its reciprocal.
      collected.add(day, currency, `1/${perUnit(publishedRate(value, FEED, where), multiplier, FEED, where)}`, where);
    }
  }
  // Published shortly after 13:00 Bucharest time, which is 12:00 Frankfurt time all year.
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => centralEuropeanTime(day, 12)) };
}

export function createBnrProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const get = async (path: string, signal: AbortSignal | undefined): Promise<RateDocument> =>
    parseOffThread('bnr', parseBnrXml, [decodeUtf8(await fetchBytes(`${origin}${path}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal }), FEED)], signal);

  return {
    id: PROVIDER,
    base: BASE,
    firstDay: FIRST_DAY,

    async latest(fetchOptions) {
      const document = await get(DAY_PATH, fetchOptions?.signal);
      const newest = document.days.at(-1);
      if (newest === undefined) throw new FeedError(`${FEED}: the day's file holds no rates`);
      return { ...document, days: [newest] };
    },

    // One file per calendar year.
    series: spannedSeries(
      { id: PROVIDER, base: BASE, spans: yearsOf, upToToday: options.clock, log: options.log, ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }) },
      (span, fetchOptions) => get(yearPath(span.from.slice(0, 4)), fetchOptions?.signal),
    ),
  };
}
