/**
 * The Reserve Bank of Australia's exchange rates: the Australian dollar against about 20
 * currencies, indicative rates observed at 16:00 Sydney time each Australian business day, from
 * statistical table F11.1 as CSV (`/statistics/tables/csv/f11.1-data.csv`).
 * Table and notes: https://www.rba.gov.au/statistics/tables/#exchange-rates (F11.1); terms:
 * https://www.rba.gov.au/copyright/ (CC BY 4.0, attribution to the Reserve Bank of Australia).
 *
 * The file is one document from 3 January 2023 to the newest day: a title line, metadata lines
 * (`Title` `A$1=USD`, `Units` `USD`, `Series ID` `FXRUSD`…), the data lines (`03-Jan-2023,0.6828,…`)
 * and a long tail of empty lines. Every value is units of the currency per Australian dollar, stored
 * as published. The trade-weighted index is no currency and is left out; the SDR column is XDR.
 * Earlier years are published only as spreadsheets, which are not read: the history reaches
 * back to 2023.
 */
import { FeedError } from '../core/errors.js';
import type { DecimalString, Provider, RateDocument } from '../core/ports.js';
import type { Day } from '../core/time.js';
import { sydneyTime } from './bank-time.js';
import { CURRENCY_CODE, publishedRate, rangeQueryProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { dayFromMonthName } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). The file grows by about 40 KB a year (120 KB in March 2026): the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 4 * 1024 * 1024;

const FEED = 'Reserve Bank of Australia feed';
const BASE = 'AUD';

const PROVIDER = 'rba';

export const RBA_METADATA: ProviderMetadata = {
  name: 'Reserve Bank of Australia',
  label: 'RBA',
  kind: 'central bank',
  base: BASE,
  quotes: 'the Australian dollar rates of about 20 currencies observed at 16:00 Sydney time, indicative',
  termsUrl: 'https://www.rba.gov.au/copyright/',
  schedule: 'Australian business days, observed at 16:00 Sydney time, in the table shortly after',
};

const DATA_PATH = '/statistics/tables/csv/f11.1-data.csv';
/** The CSV's first day; the years before it are published as spreadsheets only. */
const FIRST_DAY = '2023-01-03';
/** Eight days back reach the last business day across Easter and across Christmas. */
const LATEST_WINDOW_DAYS = 8;
const RBA_DATE = /^(\d{2})-([A-Z][a-z]{2})-(\d{4})$/;
/** The trade-weighted index's unit: no currency. */
const INDEX_UNIT = 'Index';
/** The RBA writes the IMF's special drawing right as SDR; its ISO 4217 code is XDR. */
const UNIT_CODES: Readonly<Record<string, string>> = { SDR: 'XDR' };

/** `03-Jan-2023` → `2023-01-03`; null for anything else. */
export function parseRbaDate(text: string): Day | null {
  const match = RBA_DATE.exec(text);
  return (match && dayFromMonthName(match[1]!, match[2]!, match[3]!)) ?? null;
}

/**
 * Parses table F11.1's CSV. The `Title` line must say `A$1=` and the `Units` line names each
 * column's currency; the data lines follow `Series ID`. Strict: a column quoted the other way,
 * an unknown unit, a bad date or a malformed value rejects the whole document; an empty cell (a
 * series discontinued, or no value that day) is skipped.
 */
export function parseRbaCsv(text: string): RateDocument {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new FeedError(`${FEED}: the CSV is empty`);
  if (body.trimStart().startsWith('<')) throw new FeedError(`${FEED}: got an HTML or XML page instead of CSV: ${JSON.stringify(body.trimStart().slice(0, 60))}`);
  if (body.includes('"')) throw new FeedError(`${FEED}: the CSV quotes a field, which this table never does`);
  const lines = body.split(/\r?\n/);
  const labelled = (label: string): { index: number; fields: string[] } => {
    const index = lines.findIndex((line) => line.startsWith(`${label},`));
    if (index < 0) throw new FeedError(`${FEED}: the CSV has no ${label} line`);
    return { index, fields: lines[index]!.split(',') };
  };
  const titles = labelled('Title').fields;
  const units = labelled('Units').fields;
  const seriesLine = labelled('Series ID');
  const width = seriesLine.fields.length;
  if (titles.length !== width || units.length !== width) throw new FeedError(`${FEED}: the Title, Units and Series ID lines differ in width`);

  // Each column's currency, or null for the index.
  const currencies = units.slice(1).map((unit, c) => {
    if (unit === INDEX_UNIT) return null;
    const code = UNIT_CODES[unit] ?? unit;
    if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: column ${c + 2}: unit ${JSON.stringify(unit)} is not a currency code`);
    if (titles[c + 1] !== `A$1=${unit}`) throw new FeedError(`${FEED}: column ${c + 2} (${unit}) is titled ${JSON.stringify(titles[c + 1])}, not A$1=${unit}`);
    return code;
  });
  const named = currencies.filter((code) => code !== null);
  if (new Set(named).size !== named.length) throw new FeedError(`${FEED}: the CSV names a currency twice`);

  const collected = new RatesByDay(FEED);
  for (let i = seriesLine.index + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const fields = line.split(',');
    if (fields.length !== width) throw new FeedError(`${FEED}: CSV line ${i + 1} has ${fields.length} fields, the header has ${width}`);
    const day = parseRbaDate(fields[0]!);
    if (day === null) throw new FeedError(`${FEED}: line ${i + 1}: ${JSON.stringify(fields[0]!.slice(0, 40))} is not a date like "03-Jan-2023"`);
    currencies.forEach((currency, c) => {
      const value = fields[c + 1]!;
      if (currency === null || value === '') return;
      const rate: DecimalString = publishedRate(value, FEED, `line ${i + 1} (${currency} on ${day})`);
      collected.add(day, currency, rate, `line ${i + 1}`);
    });
  }
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => sydneyTime(day, 16)) };
}

export function createRbaProvider(options: BankProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${DATA_PATH}`;

  const provider = rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    // One file holds every day the bank serves as CSV: any range is one request of it.
    spans: (range) => [range],
    async fetchRange(_range, fetchOptions) {
      const bytes = await fetchBytes(url, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('rba', parseRbaCsv, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
  return { ...provider, firstDay: FIRST_DAY, seriesInOneDocument: true };
}
