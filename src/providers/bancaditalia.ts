/**
 * Banca d'Italia's exchange rates against the euro: about 150 currencies, nearly every one in
 * use, one document per Italian business day, published between 16:00 and 18:30 CET. The bank
 * calls them indicative, not a financial benchmark (each document's disclaimer says so).
 * API: https://tassidicambio.bancaditalia.it/terzevalute-wf-web/rest/v1.0 ("Exchange Rates – REST
 * API (Version 1.0)"): `dailyRates` (every currency on one reference date; CSV by the Accept
 * header) and `dailyTimeSeries` (one currency over at most 366 days; JSON).
 *
 * A wide-coverage provider whose day document holds every currency: refreshes read the day's
 * document (one request) and keep all of it, so every currency it publishes is there to compare
 * with the other providers' and to serve; a currency's history loads on the first request that
 * needs it (a few time-series calls).
 */
import { FeedError } from '../core/errors.js';
import { compare, parseRate } from '../core/decimal.js';
import type { DailyQuotes, DayRange, DecimalString, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, frankfurtTime, isDay, utcDay, type Day } from '../core/time.js';
import { decodeUtf8, FeedHttpError, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, plainDecimalFromNumberText } from './json-number.js';
import { checkRange, createGate, MAX_IN_FLIGHT, DEFAULT_PACE_MS, inTurn, spansOf } from './paced.js';
import { CURRENCY_CODE, publishedRate, untilToday } from './central-bank.js';
import type { BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A year of one currency, or a day of every one, is well under a megabyte: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 2 * 1024 * 1024;

const PROVIDER = 'bancaditalia';
const FEED = "Banca d'Italia feed";
const BASE = 'EUR';
const API = '/terzevalute-wf-web/rest/v1.0';
/** The documented limit of one `dailyTimeSeries` call. */
const SERIES_MAX_DAYS = 366;
/** How far back `latest` looks for the newest published day (Easter, Christmas and a weekend fit). */
const LATEST_LOOKBACK_DAYS = 7;
const NOT_AVAILABLE = 'N.A.';

export type Convention = 'per-euro' | 'euro-per-unit';

/**
 * The bank states each row's convention. The code `C` and "Foreign currency amount for 1 Euro" are
 * units per euro (what the service stores); `I` and "Euro amount for 1 unit of foreign currency"
 * the other way round, stored as its exact reciprocal. Anything else is refused rather than guessed.
 */
export function conventionOf(text: string): Convention | undefined {
  const t = text.trim().replace(/\.$/, '').replace(/\s+/g, ' ').toLowerCase();
  if (t === 'c' || t === 'foreign currency amount for 1 euro' || t === 'quantità di valuta estera per 1 euro') return 'per-euro';
  if (t === 'i' || /^euro amount for 1 (unit of )?foreign currency( unit)?$/.test(t) || /^quantità di euro per 1 unità di valuta estera$/.test(t)) {
    return 'euro-per-unit';
  }
  return undefined;
}

/** A row the service does not store: the bank marks the currency `N.A.` (suspended) that day. */
export interface SkippedRate {
  code: string;
  day: Day;
}

export interface BancaDItaliaParse {
  document: RateDocument;
  skipped: SkippedRate[];
}

/** Units per euro from a published value in its convention: euros per unit become their exact reciprocal (ports.ts). */
function perEuro(value: string, convention: Convention): string {
  return convention === 'per-euro' ? value : `1/${value}`;
}

class DayCollector {
  readonly byDay = new Map<Day, Record<string, DecimalString>>();
  readonly skipped: SkippedRate[] = [];

  add(code: string, day: Day, published: string, convention: Convention, where: string): void {
    if (published === NOT_AVAILABLE) {
      this.skipped.push({ code, day });
      return;
    }
    const rate = perEuro(publishedRate(published, FEED, where), convention);
    if (code === BASE) return;
    let rates = this.byDay.get(day);
    if (rates === undefined) {
      rates = {};
      this.byDay.set(day, rates);
    }
    const earlier = rates[code];
    // A currency shared by several countries (XOF, XAF, XCD) has a row for each, with one value.
    if (earlier !== undefined && compare(parseRate(earlier)!, parseRate(rate)!) !== 0) {
      throw new FeedError(`${FEED}: ${code} on ${day} is published as both ${earlier} and ${rate}`);
    }
    rates[code] ??= rate;
  }

  result(): BancaDItaliaParse {
    const days: DailyQuotes[] = [...this.byDay.keys()]
      .sort()
      .map((day) => ({ day, asOf: frankfurtTime(day, 16), rates: this.byDay.get(day)! }));
    return { document: { provider: PROVIDER, base: BASE, days }, skipped: this.skipped };
  }
}

/**
 * One CSV line split into fields (RFC 4180: quoted fields may hold commas and doubled quotes).
 * Written here because the document is small and this is all of CSV it needs.
 */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  if (quoted) throw new FeedError(`${FEED}: a quoted field is not closed: ${JSON.stringify(line.slice(0, 60))}`);
  fields.push(field);
  return fields;
}

/**
 * Parses a `dailyRates` CSV (lang=en): a header naming the columns, a row per country and
 * currency, then a trailer of `#` disclaimer lines. `N.A.` (a suspended currency) is skipped for
 * that day, never stored. Each row is read in the convention it states. A body that is only a
 * header (a day without publication) is an empty document.
 */
export function parseBancaDItaliaDailyRates(text: string): BancaDItaliaParse {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trimStart().startsWith('<')) throw new FeedError(`${FEED}: got an HTML or XML page instead of CSV: ${JSON.stringify(body.trimStart().slice(0, 60))}`);
  const lines = body.split(/\r?\n/);
  const collector = new DayCollector();
  let columns: { code: number; rate: number; convention: number; date: number; count: number } | undefined;
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const fields = csvFields(line);
    if (columns === undefined) {
      const named = (name: string): number => {
        const at = fields.findIndex((f) => f.trim().toLowerCase() === name);
        if (at < 0) throw new FeedError(`${FEED}: the header has no "${name}" column: ${JSON.stringify(line.slice(0, 120))}`);
        return at;
      };
      columns = { code: named('iso code'), rate: named('rate'), convention: named('rate convention'), date: named('reference date (cet)'), count: fields.length };
      continue;
    }
    const where = `line ${index + 1}`;
    if (fields.length !== columns.count) throw new FeedError(`${FEED}: ${where} has ${fields.length} fields, the header ${columns.count}`);
    const code = fields[columns.code]!.trim();
    if (!CURRENCY_CODE.test(code)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(code)} is not a currency code`);
    const day = fields[columns.date]!.trim();
    if (!isDay(day)) throw new FeedError(`${FEED}: ${where}: ${JSON.stringify(day)} is not a date YYYY-MM-DD`);
    const convention = conventionOf(fields[columns.convention]!);
    if (convention === undefined) throw new FeedError(`${FEED}: ${where}: unknown rate convention ${JSON.stringify(fields[columns.convention])}`);
    collector.add(code, day, fields[columns.rate]!.trim(), convention, `${where} (${code})`);
  }
  if (columns === undefined) {
    if (body.trim() === '') return collector.result();
    throw new FeedError(`${FEED}: no header line`);
  }
  return collector.result();
}

/**
 * Parses a `dailyTimeSeries` JSON answer: `resultsInfo` (with the currency's `isoCode` and its
 * `exchangeConventionCode`) and `rates`, each `{ referenceDate, avgRate, exchangeConvention }`.
 * No recording of it exists here, so it is read defensively: the rate may be a string or a
 * number (its text kept either way), the convention comes from the row or else the results
 * info, and a row of another currency, an unknown convention or a value that is not a positive
 * decimal (or `N.A.`) refuses the answer.
 */
export function parseBancaDItaliaTimeSeries(text: string, code: string): BancaDItaliaParse {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected a time-series object, got ${describeJsonValue(body)}`);
  const info = isJsonObject(body['resultsInfo']) ? body['resultsInfo'] : {};
  const infoCode = info['isoCode'];
  if (typeof infoCode === 'string' && infoCode.toUpperCase() !== code) {
    throw new FeedError(`${FEED}: asked for the ${code} series, got ${JSON.stringify(infoCode)}`);
  }
  const rows = body['rates'];
  const collector = new DayCollector();
  if (rows === undefined || rows === null) {
    // No rates in the range: the bank answers with the results info and no list.
    if (info['totalRecords'] instanceof JsonNumber && info['totalRecords'].text === '0') return collector.result();
    throw new FeedError(`${FEED}: the ${code} time series has no "rates"`);
  }
  if (!Array.isArray(rows)) throw new FeedError(`${FEED}: "rates" is ${describeJsonValue(rows)}, not a list`);
  const infoConvention = typeof info['exchangeConventionCode'] === 'string' ? info['exchangeConventionCode'] : undefined;
  rows.forEach((row: unknown, index) => {
    const where = `${code} rate #${index}`;
    if (!isJsonObject(row)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(row)}, not an object`);
    const day = row['referenceDate'];
    if (typeof day !== 'string' || !isDay(day.slice(0, 10))) throw new FeedError(`${FEED}: ${where}: referenceDate is ${describeJsonValue(day)}`);
    const rowConvention = typeof row['exchangeConvention'] === 'string' ? row['exchangeConvention'] : undefined;
    const rowCode = typeof row['exchangeConventionCode'] === 'string' ? row['exchangeConventionCode'] : undefined;
    const stated = rowCode ?? rowConvention ?? infoConvention;
    const convention = stated === undefined ? undefined : conventionOf(stated);
    if (convention === undefined) throw new FeedError(`${FEED}: ${where}: unknown or missing rate convention ${JSON.stringify(stated ?? null)}`);
    const value = row['avgRate'];
    let published: string;
    if (typeof value === 'string') published = value.trim();
    else if (value instanceof JsonNumber) published = plainDecimalFromNumberText(value.text) ?? value.text;
    else throw new FeedError(`${FEED}: ${where}: avgRate is ${describeJsonValue(value)}`);
    collector.add(code, day.slice(0, 10), published, convention, where);
  });
  return collector.result();
}

function isWeekend(day: Day): boolean {
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
  return weekday === 0 || weekday === 6;
}

function weekdays(range: DayRange): Day[] {
  const days: Day[] = [];
  for (let day = range.from; day <= range.to; day = addDays(day, 1)) if (!isWeekend(day)) days.push(day);
  return days;
}

export function createBancaDItaliaProvider(
  options: BankProviderOptions,
): Provider & { listCurrencies(o?: { signal?: AbortSignal }): Promise<string[]>; keepsWholeDays: true } {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const paceMs = options.paceMs ?? DEFAULT_PACE_MS;
  const gate = createGate(MAX_IN_FLIGHT);
  const empty = (): RateDocument => ({ provider: PROVIDER, base: BASE, days: [] });

  const get = async (pathAndQuery: string, accept: string, signal: AbortSignal | undefined): Promise<string | null> => {
    try {
      return decodeUtf8(await fetchBytes(`${origin}${API}${pathAndQuery}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal, accept }), FEED);
    } catch (error) {
      // The bank answers 404 for a date or range without any publication.
      if (error instanceof FeedHttpError && error.status === 404) return null;
      throw error;
    }
  };

  // Codes and days are checked ([A-Z]{3}, YYYY-MM-DD) before they are written here; the query is the one the bank documents.
  const dayDocument = async (day: Day, signal: AbortSignal | undefined): Promise<RateDocument> => {
    const text = await get(`/dailyRates?currencyIsoCode=EUR&lang=en&referenceDate=${day}`, 'text/csv', signal);
    if (text === null) return empty();
    return parseBancaDItaliaDailyRates(text).document;
  };

  const seriesDocument = async (code: string, span: DayRange, signal: AbortSignal | undefined): Promise<RateDocument> => {
    const text = await get(
      `/dailyTimeSeries?startDate=${span.from}&endDate=${span.to}&baseCurrencyIsoCode=${code}&currencyIsoCode=EUR&lang=en`,
      'application/json',
      signal,
    );
    if (text === null) return empty();
    return parseBancaDItaliaTimeSeries(text, code).document;
  };

  /** The newest published day within the look-back, all currencies. */
  const newestDay = async (signal: AbortSignal | undefined): Promise<RateDocument> => {
    const today = utcDay(options.clock.now());
    for (let back = 0; back < LATEST_LOOKBACK_DAYS; back++) {
      const day = addDays(today, -back);
      if (isWeekend(day)) continue;
      const document = await dayDocument(day, signal);
      if (document.days.length > 0) return { ...document, days: [document.days.at(-1)!] };
    }
    throw new FeedError(`${FEED}: no rates published in the ${LATEST_LOOKBACK_DAYS} days to ${today}`);
  };

  const only = (document: RateDocument, codes: ReadonlySet<string> | undefined, range?: DayRange): RateDocument => ({
    ...document,
    days: document.days
      .filter((d) => range === undefined || (d.day >= range.from && d.day <= range.to))
      .map((d) => ({ ...d, rates: codes === undefined ? d.rates : Object.fromEntries(Object.entries(d.rates).filter(([code]) => codes.has(code))) }))
      .filter((d) => Object.keys(d.rates).length > 0),
  });

  const requested = (fetchOptions: FetchOptions | undefined): Set<string> | undefined => {
    if (fetchOptions?.currencies === undefined) return undefined;
    const codes = fetchOptions.currencies.map((c) => c.toUpperCase());
    for (const code of codes) if (!CURRENCY_CODE.test(code)) throw new RangeError(`currency ${JSON.stringify(code)} is not a three-letter code`);
    return new Set(codes.filter((c) => c !== BASE));
  };

  return {
    id: PROVIDER,
    base: BASE,

    keepsWholeDays: true,

    async latest(fetchOptions) {
      // The codes asked for are still checked, but the day's document is kept whole.
      requested(fetchOptions);
      return newestDay(fetchOptions?.signal);
    },

    async series(range, fetchOptions) {
      checkRange(range);
      const codes = requested(fetchOptions);
      const clipped = untilToday(range, options.clock);
      if (clipped === undefined || (codes !== undefined && codes.size === 0)) return empty();
      const days = weekdays(clipped);
      const spans = spansOf(clipped, SERIES_MAX_DAYS);
      // The fewer requests wins: a day's document holds every currency, a series call one currency over up to 366 days.
      const byDay = codes === undefined || days.length <= codes.size * spans.length;
      const requests = byDay
        ? days.map((day) => () => dayDocument(day, fetchOptions?.signal))
        : [...codes].sort().flatMap((code) => spans.map((span) => () => seriesDocument(code, span, fetchOptions?.signal)));
      const describe = byDay ? (i: number) => days[i]! : (i: number) => `${[...codes!].sort()[Math.floor(i / spans.length)]} ${spans[i % spans.length]!.from}..${spans[i % spans.length]!.to}`;
      const parts = await inTurn(requests, { provider: PROVIDER, paceMs, gate, log: options.log, signal: fetchOptions?.signal, describe });
      const merged = new Map<Day, Record<string, DecimalString>>();
      // A day document is kept whole; a series call holds its one currency.
      for (const part of parts) {
        for (const d of only(part, byDay ? undefined : codes, clipped).days) merged.set(d.day, { ...merged.get(d.day), ...d.rates });
      }
      return {
        provider: PROVIDER,
        base: BASE,
        days: [...merged.keys()].sort().map((day) => ({ day, asOf: frankfurtTime(day, 16), rates: merged.get(day)! })),
      };
    },

    async listCurrencies(listOptions) {
      const document = await newestDay(listOptions?.signal);
      return Object.keys(document.days[0]!.rates).sort();
    },
  };
}
