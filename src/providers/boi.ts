/**
 * The Bank of Israel's representative exchange rates: the shekel against 14 currencies, set once
 * each foreign-currency business day and published at about 15:30 Israel time (12:30 on Fridays).
 * Read from its SDMX statistics service (dataflow `BOI.STATISTICS/EXR/1.0`, data type `OF00`,
 * the representative rate) as CSV.
 * Rates and their notes: https://www.boi.org.il/en/economic-roles/statistics/foreign-exchange-market/exchange-rates/
 * (the bank's series database serves them over SDMX REST at edge.boi.gov.il).
 *
 * Each row names its pair (`BASE_CURRENCY` = USD, `COUNTER_CURRENCY` = ILS: shekels per dollar)
 * and a unit (`UNIT_MULT` = 2: shekels per 100 yen; 1: per 10 Lebanese pounds), so a value is
 * shekels per 10^UNIT_MULT units, stored per one unit as `1/` and that exact number.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { jerusalemTime } from './bank-time.js';
import { columns, CURRENCY_CODE, publishedRate, rangeQueryProvider, RatesByDay, readCsv } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of the exchange-rate series is under a megabyte of CSV: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 4 * 1024 * 1024;

const FEED = 'Bank of Israel feed';
const BASE = 'ILS';

const PROVIDER = 'boi';

export const BOI_METADATA: ProviderMetadata = {
  name: 'Bank of Israel',
  label: 'Bank of Israel',
  kind: 'central bank',
  base: BASE,
  quotes: 'the representative shekel rates of 14 currencies',
  termsUrl: 'https://www.boi.org.il/en/terms-of-use',
  schedule:
    "foreign-currency business days in Israel (none on Israeli holidays, Christmas Day, New Year's Day and Easter), at about 15:30 Israel time, 12:30 on Fridays; the time is not fixed",
};

const DATA_PATH = '/FusionEdgeServer/sdmx/v2/data/dataflow/BOI.STATISTICS/EXR/1.0/';
/** The representative rate; the dataflow holds other data types too. */
const REPRESENTATIVE_RATE = 'OF00';
/** Ten days back reach the last business day across Passover and the autumn holidays. */
const LATEST_WINDOW_DAYS = 10;
const UNIT_MULT = /^\d$/;
const FRIDAY = 5;

function publicationTime(day: Day): string {
  const friday = new Date(`${day}T00:00:00Z`).getUTCDay() === FRIDAY;
  return friday ? jerusalemTime(day, 12, 30) : jerusalemTime(day, 15, 30);
}

/**
 * Parses the SDMX CSV of the EXR dataflow. Any malformed row, or a row of another data type,
 * rejects the whole document; an empty value is skipped; a header alone is an empty document.
 */
export function parseBoiCsv(text: string): RateDocument {
  const { header, rows } = readCsv(text, FEED);
  const at = columns(header, ['BASE_CURRENCY', 'COUNTER_CURRENCY', 'UNIT_MEASURE', 'DATA_TYPE', 'UNIT_MULT', 'TIME_PERIOD', 'OBS_VALUE'], FEED);
  const collected = new RatesByDay(FEED);
  for (const { line, fields } of rows) {
    const from = fields[at.BASE_CURRENCY]!;
    const to = fields[at.COUNTER_CURRENCY]!;
    const day = fields[at.TIME_PERIOD]!;
    const value = fields[at.OBS_VALUE]!;
    const unit = fields[at.UNIT_MULT]!;
    const where = `line ${line} (${from}/${to} on ${day})`;
    if (!isDay(day)) throw new FeedError(`${FEED}: line ${line}: TIME_PERIOD ${JSON.stringify(day)} is not a date YYYY-MM-DD`);
    if (fields[at.DATA_TYPE] !== REPRESENTATIVE_RATE) {
      throw new FeedError(`${FEED}: ${where}: data type ${JSON.stringify(fields[at.DATA_TYPE])} is not the representative rate ${REPRESENTATIVE_RATE}`);
    }
    if (fields[at.UNIT_MEASURE] !== to) throw new FeedError(`${FEED}: ${where}: the value is in ${JSON.stringify(fields[at.UNIT_MEASURE])}, not in ${to}`);
    if (!UNIT_MULT.test(unit)) throw new FeedError(`${FEED}: ${where}: UNIT_MULT ${JSON.stringify(unit)} is not a power of ten from 0 to 9`);
    const perShekel = from === BASE;
    const currency = perShekel ? to : from;
    if ((perShekel ? from : to) !== BASE || currency === BASE) throw new FeedError(`${FEED}: ${where} is not quoted against the shekel`);
    if (!CURRENCY_CODE.test(currency)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(currency)} is not a currency code`);
    if (value === '' || value === 'NaN') continue;
    // A value per 10^UNIT_MULT units, made per one unit exactly. Shekels per unit of the currency
    // is stored as the reciprocal of units per shekel; a row quoted per shekel is stored as it reads.
    const rate = perUnit(publishedRate(value, FEED, where), String(10 ** Number(unit)), FEED, where);
    const stored = perShekel ? rate : `1/${rate}`;
    collected.add(day, currency, stored, where);
  }
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => publicationTime(day)) };
}

export function createBoiProvider(options: BankProviderOptions): Provider {
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
      // The query as the bank's own series database writes it, `c[DATA_TYPE]` percent-encoded.
      const url = `${origin}${DATA_PATH}?c%5BDATA_TYPE%5D=${REPRESENTATIVE_RATE}&endperiod=${range.to}&format=csv&startperiod=${range.from}`;
      const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('boi', parseBoiCsv, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
