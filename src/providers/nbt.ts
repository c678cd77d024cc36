/**
 * The National Bank of Tajikistan's official rates of the somoni: about 36 currencies, set every
 * day (weekends too) and published in the morning Dushanbe time. Quoted as somoni per `Nominal`
 * units (10 KGS, 100 UZS, 1,000 IRR…), made exact per-unit rates here.
 * Rates: https://www.nbt.tj/en/kurs/ (XML of a day at `/en/kurs/export_xml.php?date=YYYY-MM-DD&export=xmlout`;
 * there is no range query, so history is a request a day).
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { CURRENCY_CODE, dayByDayProvider, publishedRate, RatesByDay, readXml, xmlText, type XmlElement } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is 5 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'nbt';
const FEED = 'NBT feed';
const BASE = 'TJS';

export const NBT_METADATA: ProviderMetadata = {
  name: 'National Bank of Tajikistan',
  label: 'NBT',
  kind: 'central bank',
  base: BASE,
  quotes: 'the official somoni rates of about 36 currencies',
  // The bank publishes no terms of reuse for its rate pages; its rates are official and public.
  termsUrl: null,
  schedule: 'every day, in the morning Dushanbe time (about 04:00–06:00 UTC)',
};

/**
 * Parses a day's XML: `<ValCurs Date="YYYY-MM-DD">` holding a `<Valute ID>` per currency with
 * `CharCode`, `Nominal` and `Value` (somoni per `Nominal` units). A day without `Valute` is an
 * empty document.
 */
export function parseNbtRates(text: string): RateDocument {
  const curs = readXml(text, FEED, ['Valute'])['ValCurs'];
  if (typeof curs !== 'object' || curs === null) throw new FeedError(`${FEED}: the XML is not a ValCurs document`);
  const day = xmlText(curs as XmlElement, '@_Date', FEED, 'ValCurs');
  if (!isDay(day)) throw new FeedError(`${FEED}: ValCurs Date ${JSON.stringify(day)} is not YYYY-MM-DD`);
  const byDay = new RatesByDay(FEED);
  (((curs as XmlElement)['Valute'] ?? []) as XmlElement[]).forEach((valute, index) => {
    let where = `Valute #${index}`;
    const code = xmlText(valute, 'CharCode', FEED, where);
    if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: CharCode ${JSON.stringify(code)} is not a currency code`);
    where = `${where} (${day} ${code})`;
    const rate = perUnit(publishedRate(xmlText(valute, 'Value', FEED, where), FEED, where), xmlText(valute, 'Nominal', FEED, where), FEED, where);
    // Somoni per unit, as published: stored as the reciprocal of units per somoni.
    byDay.add(day, code, `1/${rate}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

export function createNbtProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return dayByDayProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    clock: options.clock,
    // Before the morning's publication today's rates are not out yet: yesterday's are the last.
    lookbackDays: 3,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchDay(day, fetchOptions) {
      const bytes = await fetchBytes(`${origin}/en/kurs/export_xml.php?date=${day}&export=xmlout`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('nbt', parseNbtRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
