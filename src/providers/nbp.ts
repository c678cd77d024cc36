/**
 * Narodowy Bank Polski's table A: the average zloty rates of about 32 currencies, one table per
 * Polish business day, published around noon Warsaw time. `mid` is zlotys per one unit (already
 * per unit: HUF 0.011155, JPY 0.023…).
 * API: https://api.nbp.pl/en.html (`/api/exchangerates/tables/A/…`, at most 93 days a request; 404
 * when a range holds no table).
 */
import { FeedError } from '../core/errors.js';
import type { DailyQuotes, DecimalString, Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { decodeUtf8, FeedHttpError, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';
import { describeJsonValue, isJsonObject, parseJsonKeepingNumbers, positiveDecimal } from './json-number.js';
import { spannedSeries } from './central-bank.js';
import type { BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A quarter's tables (the longest span asked for) are a few hundred KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 4 * 1024 * 1024;

const PROVIDER = 'nbp';
const FEED = 'NBP feed';
const BASE = 'PLN';
/** The API's documented limit of one request. */
const SPAN_DAYS = 93;

/**
 * Parses an answer of `/api/exchangerates/tables/A/…`: an array of tables
 * `{ table: "A", no, effectiveDate, rates: [{ currency, code, mid }] }`. A table of another kind
 * (B, C) is refused: its rates are of another kind or schedule.
 */
export function parseNbpTables(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!Array.isArray(body)) throw new FeedError(`${FEED}: expected an array of tables, got ${describeJsonValue(body)}`);
  const byDay = new Map<Day, Record<string, DecimalString>>();
  body.forEach((table: unknown, index) => {
    if (!isJsonObject(table)) throw new FeedError(`${FEED}: table #${index} is ${describeJsonValue(table)}, not an object`);
    if (table['table'] !== 'A') throw new FeedError(`${FEED}: table #${index} is table ${describeJsonValue(table['table'])}, not A`);
    const day = table['effectiveDate'];
    if (typeof day !== 'string' || !isDay(day)) throw new FeedError(`${FEED}: table #${index}: effectiveDate is ${describeJsonValue(day)}`);
    if (byDay.has(day)) throw new FeedError(`${FEED}: two tables for ${day}`);
    const rows = table['rates'];
    if (!Array.isArray(rows)) throw new FeedError(`${FEED}: table ${day}: rates is ${describeJsonValue(rows)}, not a list`);
    const rates: Record<string, DecimalString> = {};
    rows.forEach((row: unknown, r) => {
      const where = `table ${day} rate #${r}`;
      if (!isJsonObject(row)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(row)}, not an object`);
      const code = row['code'];
      if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code)) throw new FeedError(`${FEED}: ${where}: code is ${describeJsonValue(code)}`);
      const mid = positiveDecimal(row['mid']);
      if (mid === null) throw new FeedError(`${FEED}: ${where} (${code}): mid is ${describeJsonValue(row['mid'])}, not a positive number`);
      if (rates[code] !== undefined) throw new FeedError(`${FEED}: ${code} appears twice on ${day}`);
      // Zlotys per unit, as published: stored as the reciprocal of units per zloty.
      rates[code] = `1/${mid}`;
    });
    byDay.set(day, rates);
  });
  const days: DailyQuotes[] = [...byDay.keys()].sort().map((day) => ({ day, asOf: `${day}T00:00:00Z`, rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: BASE, days };
}

export function createNbpProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const empty = (): RateDocument => ({ provider: PROVIDER, base: BASE, days: [] });

  const get = async (path: string, signal: AbortSignal | undefined): Promise<RateDocument | null> => {
    try {
      return await parseOffThread('nbp', parseNbpTables, [decodeUtf8(await fetchBytes(`${origin}${path}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal }), FEED)], signal);
    } catch (error) {
      // "404 NotFound - Brak danych": no table in the range (weekends, holidays).
      if (error instanceof FeedHttpError && error.status === 404) return null;
      throw error;
    }
  };

  return {
    id: PROVIDER,
    base: BASE,

    async latest(fetchOptions) {
      const document = await get('/api/exchangerates/tables/A/?format=json', fetchOptions?.signal);
      const newest = document?.days.at(-1);
      if (newest === undefined) throw new FeedError(`${FEED}: the current table A is missing`);
      return { ...document!, days: [newest] };
    },

    series: spannedSeries(
      { id: PROVIDER, base: BASE, spanDays: SPAN_DAYS, upToToday: options.clock, log: options.log, ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }) },
      async (span, fetchOptions) => (await get(`/api/exchangerates/tables/A/${span.from}/${span.to}/?format=json`, fetchOptions?.signal)) ?? empty(),
    ),
  };
}
