/**
 * Norges Bank's exchange rates: middle rates of the Norwegian krone against about 40 currencies,
 * published on Norwegian business days at about 16:00 Oslo time, from its SDMX data API
 * (dataflow `EXR`, key `B..NOK.SP`: business-day spot rates of every currency against NOK).
 * API: https://www.norges-bank.no/en/topics/Statistics/open-data/ (SDMX REST, SDMX-CSV with `format=csvdata`).
 *
 * Each row names its pair (`BASE_CUR` = USD, `QUOTE_CUR` = NOK: kroner per dollar) and a unit
 * (`UNIT_MULT` = 2: kroner per 100 units), so a value is kroner per 10^UNIT_MULT units of the
 * row's currency, stored per one unit as `1/` and that exact number. The file also carries
 * two krone indices (I44, TWI), which are no currencies and are left out.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay } from '../core/time.js';
import { centralEuropeanTime } from './bank-time.js';
import { columns, CURRENCY_CODE, publishedRate, rangeQueryProvider, RatesByDay, readCsv } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of every currency is under a megabyte of CSV: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 8 * 1024 * 1024;

const FEED = 'Norges Bank feed';
const BASE = 'NOK';

const PROVIDER = 'norgesbank';

export const NORGES_BANK_METADATA: ProviderMetadata = {
  name: 'Norges Bank',
  label: 'Norges Bank',
  kind: 'central bank',
  base: BASE,
  quotes: 'the krone middle rates of about 40 currencies, indicative',
  termsUrl: 'https://www.norges-bank.no/en/topics/Statistics/disclaimer/',
  schedule: 'Norwegian business days, at about 16:00 Oslo time (none on Christmas Eve)',
};

const DATA_PATH = '/api/data/EXR/B..NOK.SP';
/** Eight days back reach the last business day across Easter (Maundy Thursday to Easter Monday). */
const LATEST_WINDOW_DAYS = 8;
/** Norges Bank's krone indices: the import-weighted I-44 and the trade-weighted TWI. */
const INDICES = new Set(['I44', 'TWI']);
const UNIT_MULT = /^\d$/;

/**
 * Parses the SDMX-CSV answer for `EXR/B..NOK.SP`. Any malformed row rejects the whole document;
 * an empty value (no rate that day) is skipped. A header without rows is an empty document.
 */
export function parseNorgesBankCsv(text: string): RateDocument {
  const { header, rows } = readCsv(text, FEED);
  const at = columns(header, ['BASE_CUR', 'QUOTE_CUR', 'UNIT_MULT', 'TIME_PERIOD', 'OBS_VALUE'], FEED);
  const collected = new RatesByDay(FEED);
  for (const { line, fields } of rows) {
    const from = fields[at.BASE_CUR]!;
    const to = fields[at.QUOTE_CUR]!;
    const day = fields[at.TIME_PERIOD]!;
    const value = fields[at.OBS_VALUE]!;
    const unit = fields[at.UNIT_MULT]!;
    const where = `line ${line} (${from}/${to} on ${day})`;
    if (!isDay(day)) throw new FeedError(`${FEED}: line ${line}: TIME_PERIOD ${JSON.stringify(day)} is not a date YYYY-MM-DD`);
    if (!UNIT_MULT.test(unit)) throw new FeedError(`${FEED}: ${where}: UNIT_MULT ${JSON.stringify(unit)} is not a power of ten from 0 to 9`);
    const perKrone = from === BASE;
    const currency = perKrone ? to : from;
    if ((perKrone ? from : to) !== BASE || currency === BASE) throw new FeedError(`${FEED}: ${where} is not quoted against the krone`);
    if (INDICES.has(currency)) continue;
    if (!CURRENCY_CODE.test(currency)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(currency)} is not a currency code`);
    // SDMX writes no value, or NaN, for a day without a rate.
    if (value === '' || value === 'NaN') continue;
    // A value per 10^UNIT_MULT units, made per one unit exactly. Kroner per unit of the currency
    // is stored as the reciprocal of units per krone; a row quoted per krone is stored as it reads.
    const rate = perUnit(publishedRate(value, FEED, where), String(10 ** Number(unit)), FEED, where);
    const stored = perKrone ? rate : `1/${rate}`;
    collected.add(day, currency, stored, where);
  }
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => centralEuropeanTime(day, 16)) };
}

export function createNorgesBankProvider(options: BankProviderOptions): Provider {
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
      // The query as Norges Bank documents and its own query builder writes it.
      const url = `${origin}${DATA_PATH}?endPeriod=${range.to}&format=csvdata&startPeriod=${range.from}`;
      const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('norgesbank', parseNorgesBankCsv, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
