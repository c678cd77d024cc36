/**
 * The Bank of England's daily spot exchange rates against sterling, for 26 currencies, as
 * observed by the Bank's foreign exchange desk at about 16:00 London time each UK business day.
 * Read from its Interactive Statistical Database as CSV.
 * Database: https://www.bankofengland.co.uk/boeapps/database/ (help: "Download data from the
 * database"; series codes on https://www.bankofengland.co.uk/boeapps/database/Rates.asp?into=GBP).
 *
 * The CSV has a `DATE` column (`17 Mar 2026`) and one column per series code. Every series asked
 * for is an "into sterling" series (`XUDLUSS`: US dollars per pound), so the values are units of
 * each currency per pound, stored as published. A day
 * without a value for a series has an empty cell.
 */
import { FeedError } from '../core/errors.js';
import type { DailyQuotes, DecimalString, Provider, RateDocument } from '../core/ports.js';
import type { Day } from '../core/time.js';
import { londonTime } from './bank-time.js';
import { publishedRate, rangeQueryProvider, readCsv } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { dayFromMonthName, monthName } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of the series asked for is well under a megabyte of CSV: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 4 * 1024 * 1024;

const FEED = 'Bank of England feed';
const BASE = 'GBP';

const PROVIDER = 'boe';

export const BOE_METADATA: ProviderMetadata = {
  name: 'Bank of England',
  label: 'Bank of England',
  kind: 'central bank',
  base: BASE,
  quotes: 'the sterling spot rates of 26 currencies observed at about 16:00 London time, indicative',
  termsUrl: 'https://www.bankofengland.co.uk/legal',
  schedule: 'UK business days, in the database in the late afternoon London time',
};

/** Each "into sterling" spot series and the currency it quotes per pound. */
const SERIES: Readonly<Record<string, string>> = {
  XUDLUSS: 'USD',
  XUDLERS: 'EUR',
  XUDLJYS: 'JPY',
  XUDLCDS: 'CAD',
  XUDLSFS: 'CHF',
  XUDLADS: 'AUD',
  XUDLNDS: 'NZD',
  XUDLNKS: 'NOK',
  XUDLSKS: 'SEK',
  XUDLDKS: 'DKK',
  XUDLHDS: 'HKD',
  XUDLSGS: 'SGD',
  XUDLSRS: 'SAR',
  XUDLZRS: 'ZAR',
  XUDLTWS: 'TWD',
  XUDLBK25: 'CZK',
  XUDLBK33: 'HUF',
  XUDLBK47: 'PLN',
  XUDLBK78: 'ILS',
  XUDLBK83: 'MYR',
  XUDLBK87: 'THB',
  XUDLBK89: 'CNY',
  XUDLBK93: 'KRW',
  XUDLBK95: 'TRY',
  XUDLBK97: 'INR',
  XUDLZOS4: 'RON',
};

const DATA_PATH = '/boeapps/database/_iadb-fromshowcolumns.asp';
/** Eight days back reach the last business day across Easter and across Christmas. */
const LATEST_WINDOW_DAYS = 8;
const BOE_DATE = /^(\d{1,2}) ([A-Z][a-z]{2}) (\d{4})$/;

/** `17 Mar 2026` → `2026-03-17`; null for anything else. */
export function parseBoeDate(text: string): Day | null {
  const match = BOE_DATE.exec(text);
  return (match && dayFromMonthName(match[1]!, match[2]!, match[3]!)) ?? null;
}

/** A day as the database's query takes it: `17/Mar/2026`. */
function boeQueryDate(day: Day): string {
  return `${day.slice(8, 10)}/${monthName(day)}/${day.slice(0, 4)}`;
}

/**
 * Parses the database's CSV (`CSVF=TN`, series codes as column names). Strict: a column of a
 * series not known here (so of unknown currency and direction), a bad date or a malformed value
 * rejects the whole document; an empty cell is skipped; a header alone is an empty document.
 */
export function parseBoeCsv(text: string): RateDocument {
  const { header, rows } = readCsv(text, FEED);
  if (header[0] !== 'DATE') throw new FeedError(`${FEED}: the CSV header does not start with DATE`);
  const currencies = header.slice(1).map((code) => {
    const currency = SERIES[code];
    if (currency === undefined) throw new FeedError(`${FEED}: the CSV has a column for ${JSON.stringify(code)}, not a known sterling spot series`);
    return currency;
  });
  if (new Set(currencies).size !== currencies.length) throw new FeedError(`${FEED}: the CSV names a series twice`);

  const byDay = new Map<Day, Record<string, DecimalString>>();
  for (const { line, fields } of rows) {
    const day = parseBoeDate(fields[0]!);
    if (day === null) throw new FeedError(`${FEED}: line ${line}: ${JSON.stringify(fields[0])} is not a date like "17 Mar 2026"`);
    if (byDay.has(day)) throw new FeedError(`${FEED}: line ${line} repeats ${day}`);
    const rates: Record<string, DecimalString> = {};
    currencies.forEach((currency, c) => {
      const value = fields[c + 1]!;
      if (value === '') return;
      rates[currency] = publishedRate(value, FEED, `${header[c + 1]} on ${day}`);
    });
    if (Object.keys(rates).length > 0) byDay.set(day, rates);
  }
  const days: DailyQuotes[] = [...byDay.keys()]
    .sort()
    .map((day) => ({ day, asOf: londonTime(day, 16), rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: BASE, days };
}

export function createBoeProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const seriesCodes = Object.keys(SERIES).join(',');

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchRange(range, fetchOptions) {
      // The query as the database's own CSV download link writes it: dates and the code list unencoded.
      const query = `CSVF=TN&Datefrom=${boeQueryDate(range.from)}&Dateto=${boeQueryDate(range.to)}&SeriesCodes=${seriesCodes}&UsingCodes=Y&csv.x=yes`;
      const bytes = await fetchBytes(`${origin}${DATA_PATH}?${query}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('boe', parseBoeCsv, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
