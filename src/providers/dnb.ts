/**
 * Danmarks Nationalbank's exchange rates: indicative krone rates of about 30 currencies (those
 * the ECB fixes), a snapshot of the market at 14:15 published at about 16:00 Copenhagen time each
 * Danish banking day, from table DNVALD of Statistics Denmark's StatBank (`KURTYP` `KBH`: the
 * daily rates), where they appear at 09:00 the next banking day.
 * Rates: https://www.nationalbanken.dk/en/what-we-do/stable-prices-monetary-policy-and-the-danish-economy/exchange-rates;
 * API: https://www.dst.dk/en/Statistik/hjaelp-til-statistikbanken/api (`/v1/data`, a JSON query
 * POSTed, answered as CSV with `format` `BULK`); terms: StatBank data may be reused freely, also
 * commercially, with the source named (CC BY 4.0).
 *
 * The CSV is `VALUTA;TID;…;INDHOLD` lines (`EUR;KBH;2025M07D08;746.0900`), CRLF, in no order of
 * day, every value kroner per 100 units of the currency, `..` where none was set (BGN after it
 * joined the euro). Stored per one unit as `1/` and that exact number.
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { centralEuropeanTime } from './bank-time.js';
import { columns, CURRENCY_CODE, publishedRate, rangeQueryProvider, RatesByDay, readCsv } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { BankProviderOptions, ProviderMetadata } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of every currency is about 220 KB of CSV, so five about 1.1 MB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 16 * 1024 * 1024;

const FEED = 'Danmarks Nationalbank feed';
const BASE = 'DKK';

const PROVIDER = 'dnb';

export const DNB_METADATA: ProviderMetadata = {
  name: 'Danmarks Nationalbank',
  label: 'Danmarks Nationalbank',
  kind: 'central bank',
  base: BASE,
  quotes: 'the indicative krone rates of about 30 currencies (those the ECB fixes)',
  termsUrl: 'https://www.dst.dk/en/Statistik/hjaelp-til-statistikbanken/api',
  schedule: 'Danish banking days, at about 16:00 Copenhagen time; in StatBank, which is read here, at 09:00 the next banking day',
};

const DATA_PATH = '/v1/data';
const TABLE = 'DNVALD';
/** The daily rates; the table holds other kinds of rate too. */
const DAILY_RATES = 'KBH';
const NOT_SET = '..';
/** The currencies asked for, in the order the query names them. */
const CURRENCIES = ['EUR', 'USD', 'GBP', 'SEK', 'NOK', 'CHF', 'CAD', 'JPY', 'AUD', 'NZD', 'PLN', 'CZK', 'HUF', 'HKD', 'SGD', 'ZAR', 'BGN', 'RON', 'TRY', 'KRW', 'THB', 'MYR', 'PHP', 'IDR', 'CNY', 'BRL', 'MXN', 'INR', 'ILS', 'ISK'];
/** Ten days back reach the last banking day across Easter, with the day StatBank lags. */
const LATEST_WINDOW_DAYS = 10;
const STATBANK_DAY = /^(\d{4})M(\d{2})D(\d{2})$/;

/** `2025M07D08` → `2025-07-08`; null for anything else. */
export function parseStatbankDay(text: string): Day | null {
  const match = STATBANK_DAY.exec(text);
  if (!match) return null;
  const day = `${match[1]}-${match[2]}-${match[3]}`;
  return isDay(day) ? day : null;
}

/** The StatBank query for every day from `from` on, as the bank's own recorded query writes it. */
export function dnbQuery(from: Day): string {
  const since = `>=${from.slice(0, 4)}M${from.slice(5, 7)}D${from.slice(8, 10)}`;
  return JSON.stringify({
    table: TABLE,
    format: 'BULK',
    lang: 'en',
    valuePresentation: 'Code',
    variables: [
      { code: 'VALUTA', values: CURRENCIES },
      { code: 'KURTYP', values: [DAILY_RATES] },
      { code: 'Tid', values: [since] },
    ],
  });
}

/**
 * Parses StatBank's BULK CSV of DNVALD. Any malformed line, or a line of another kind of rate,
 * rejects the whole document; `..` (no rate set) is skipped; a header alone is an empty document.
 */
export function parseDnbCsv(text: string): RateDocument {
  const { header, rows } = readCsv(text, FEED, ';');
  const at = columns(header, ['VALUTA', 'KURTYP', 'TID', 'INDHOLD'], FEED);
  const collected = new RatesByDay(FEED);
  for (const { line, fields } of rows) {
    const currency = fields[at.VALUTA]!;
    const value = fields[at.INDHOLD]!;
    const day = parseStatbankDay(fields[at.TID]!);
    const where = `line ${line} (${currency} on ${fields[at.TID]})`;
    if (day === null) throw new FeedError(`${FEED}: line ${line}: TID ${JSON.stringify(fields[at.TID])} is not a day like 2025M07D08`);
    if (fields[at.KURTYP] !== DAILY_RATES) throw new FeedError(`${FEED}: ${where}: KURTYP ${JSON.stringify(fields[at.KURTYP])} is not the daily rate ${DAILY_RATES}`);
    if (!CURRENCY_CODE.test(currency) || currency === BASE) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(currency)} is not a foreign currency code`);
    if (value === NOT_SET) continue;
    // Kroner per 100 units, made kroner per unit exactly and stored as its reciprocal.
    collected.add(day, currency, `1/${perUnit(publishedRate(value, FEED, where), '100', FEED, where)}`, where);
  }
  return { provider: PROVIDER, base: BASE, days: collected.days((day) => centralEuropeanTime(day, 16)) };
}

export function createDnbProvider(options: BankProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${DATA_PATH}`;

  return rangeQueryProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    windowDays: LATEST_WINDOW_DAYS,
    clock: options.clock,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    // The query asks for every day from a date on, as recorded: any range is one request.
    spans: (range) => [range],
    async fetchRange(range, fetchOptions) {
      const bytes = await fetchBytes(url, {
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_BYTES,
        signal: fetchOptions?.signal,
        post: { body: dnbQuery(range.from), contentType: 'application/json' },
      });
      return parseOffThread('dnb', parseDnbCsv, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
