/**
 * The template the national central banks' adapters are made from (with paced.ts, which paces
 * and gates their requests): the strict reading of a published number (with a point or a decimal
 * comma), strict readers for the banks' plain CSV files and their XML, and the ways a bank's
 * history is fetched and its newest day found: in ranges (spannedSeries, rangeQueryProvider), a
 * currency at a time (perCurrencySeries) or a day at a time (dayByDayProvider). README "Adding a
 * bank" says how a new bank uses it.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { FeedError } from '../core/errors.js';
import type { Clock, DailyQuotes, DayRange, DecimalString, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, subtractMonths, utcDay, type Day } from '../core/time.js';
import { plainDecimalFromNumberText } from './json-number.js';
import { checkRange, createGate, DEFAULT_PACE_MS, inTurn, MAX_IN_FLIGHT, spansOf } from './paced.js';
import type { ProviderLog } from './types.js';

// Deliberately narrower than what Number() accepts: no sign, exponent, comma or surrounding space.
const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
export const CURRENCY_CODE = /^[A-Z]{3}$/;

/** A published rate as its exact text: a positive plain decimal, or a FeedError naming where it stood. */
export function publishedRate(text: string, feed: string, where: string): DecimalString {
  if (!PLAIN_DECIMAL.test(text)) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(text.slice(0, 40))} is not a plain decimal`);
  if (!/[1-9]/.test(text)) throw new FeedError(`${feed}: ${where}: the rate is zero`);
  return text;
}

/**
 * A published rate written with a decimal comma (`53,8359`, or with an exponent as the Bank of
 * Russia writes its smallest per-unit figures, `5,39256E-05`), as its exact plain text with a
 * point; a FeedError otherwise.
 */
export function commaDecimalRate(text: string, feed: string, where: string): DecimalString {
  const plain = /^\d+(,\d+)?([eE][+-]?\d{1,3})?$/.test(text) ? plainDecimalFromNumberText(text.replace(',', '.')) : null;
  if (plain === null) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(text.slice(0, 40))} is not a decimal with a comma`);
  return publishedRate(plain, feed, where);
}

/** An element of a parsed XML document: attributes as `@_name`, child elements by name, text as `#text`. */
export type XmlElement = Record<string, unknown>;

/**
 * Reads a bank's XML into elements, every attribute and text kept as written (a rate parsed as a
 * number would lose its digits), the elements named in `repeated` always as lists. Validated
 * first: the parser alone is forgiving about unclosed elements, and a cut-off answer must fail
 * instead of reading as a shorter document.
 */
export function readXml(text: string, feed: string, repeated: readonly string[]): XmlElement {
  const body = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).trimStart();
  if (body === '') throw new FeedError(`${feed}: the XML is empty`);
  if (/^<!doctype html|^<html/i.test(body)) throw new FeedError(`${feed}: got an HTML page instead of XML: ${JSON.stringify(body.slice(0, 60))}`);
  const valid = XMLValidator.validate(body);
  if (valid !== true) throw new FeedError(`${feed}: the XML is not well-formed (line ${valid.err.line}, column ${valid.err.col}): ${valid.err.msg}`);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    removeNSPrefix: true,
    isArray: (name, _path, _isLeaf, isAttribute) => !isAttribute && repeated.includes(name),
  });
  return parser.parse(body) as XmlElement;
}

/** Whether a parsed XML value is an element (an object), not text or a list. */
export const isXmlElement = (value: unknown): value is XmlElement => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text of a child element or attribute (`@_name`) of an XML element; a FeedError naming it when it is missing or not text. */
export function xmlText(element: XmlElement, name: string, feed: string, where: string): string {
  const value = element[name];
  if (typeof value !== 'string') throw new FeedError(`${feed}: ${where}: ${name.startsWith('@_') ? `attribute ${name.slice(2)}` : `<${name}>`} is ${value === undefined ? 'missing' : 'not text'}`);
  return value;
}

export interface CsvTable {
  header: string[];
  /** Data rows with their 1-based line numbers, for messages. */
  rows: Array<{ line: number; fields: string[] }>;
}

/**
 * Reads a bank's CSV: a header line and data lines, LF or CRLF, one optional final line end.
 * Written by hand rather than with a CSV library: these files never quote a field, and a quote
 * character, a blank line or a line of another width means the layout changed or the body is an
 * error page, so it is refused here instead of being read generously.
 */
export function readCsv(text: string, feed: string, delimiter = ','): CsvTable {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new FeedError(`${feed}: the CSV is empty`);
  if (body.trimStart().startsWith('<')) {
    throw new FeedError(`${feed}: got an HTML or XML page instead of CSV: ${JSON.stringify(body.trimStart().slice(0, 60))}`);
  }
  if (body.includes('"')) throw new FeedError(`${feed}: the CSV quotes a field, which this layout never does`);
  const lines = body.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const header = lines[0]!.split(delimiter);
  const rows: CsvTable['rows'] = [];
  for (let i = 1; i < lines.length; i++) {
    const fields = lines[i]!.split(delimiter);
    if (fields.length !== header.length) {
      throw new FeedError(`${feed}: CSV line ${i + 1} has ${fields.length} fields, the header has ${header.length}`);
    }
    rows.push({ line: i + 1, fields });
  }
  return { header, rows };
}

/** The index of each named column in a CSV header; a FeedError naming the first one missing. */
export function columns<const N extends string>(header: readonly string[], names: readonly N[], feed: string): Record<N, number> {
  const found = {} as Record<N, number>;
  for (const name of names) {
    const index = header.indexOf(name);
    if (index < 0) throw new FeedError(`${feed}: the CSV header has no ${name} column`);
    if (header.indexOf(name, index + 1) >= 0) throw new FeedError(`${feed}: the CSV header names ${name} twice`);
    found[name] = index;
  }
  return found;
}

/** How a bank's history is fetched: what `series` needs besides the fetch of one span. */
export interface SeriesBank {
  id: string;
  base: string;
  /** Days one request asks for at most (HISTORY_SPAN_DAYS unless the bank documents less). */
  spanDays?: number;
  /** How a range is cut into requests, when not into spans of `spanDays` (CNB: calendar years). */
  spans?: (range: DayRange) => DayRange[];
  /**
   * Given for a bank that dates rates ahead (the NBU sets tomorrow's today) or answers a range
   * into the future with an error: the range is cut at today (UTC), so no request asks for days
   * to come and none comes back.
   */
  upToToday?: Clock;
  paceMs?: number;
  log?: ProviderLog | undefined;
}

/**
 * Days of history one request asks for when a bank documents no limit: a year, as Banca d'Italia's
 * series allow, so a first load of five years is six modest answers in turn rather than one
 * large one.
 */
export const HISTORY_SPAN_DAYS = 366;

/** The range cut at today (UTC), or undefined when it lies wholly after today. */
export function untilToday(range: DayRange, clock: Clock): DayRange | undefined {
  const today = utcDay(clock.now());
  const to = range.to < today ? range.to : today;
  return range.from > to ? undefined : { from: range.from, to };
}

/** The calendar years a range touches, each cut to the range: for banks that publish a year per document. */
export function yearsOf(range: DayRange): DayRange[] {
  const spans: DayRange[] = [];
  for (let year = Number(range.from.slice(0, 4)); year <= Number(range.to.slice(0, 4)); year++) {
    const first = `${year}-01-01`;
    const last = `${year}-12-31`;
    spans.push({ from: first > range.from ? first : range.from, to: last < range.to ? last : range.to });
  }
  return spans;
}

/** The calendar months a range touches, each cut to the range: for banks that answer a month per request. */
export function monthsOf(range: DayRange): DayRange[] {
  const spans: DayRange[] = [];
  for (let first = `${range.from.slice(0, 7)}-01`; first <= range.to; first = subtractMonths(first, -1)) {
    const last = addDays(subtractMonths(first, -1), -1);
    spans.push({ from: first > range.from ? first : range.from, to: last < range.to ? last : range.to });
  }
  return spans;
}

/** The range checked (a RangeError for one that is not two real days in order), cut at today when the bank asks for it, and cut into the bank's spans. */
function spansToFetch(bank: SeriesBank, asked: DayRange): DayRange[] {
  checkRange(asked);
  const range = bank.upToToday ? untilToday(asked, bank.upToToday) : asked;
  if (range === undefined) return [];
  return bank.spans ? bank.spans(range) : spansOf(range, bank.spanDays ?? HISTORY_SPAN_DAYS);
}

/**
 * The `series` of every bank whose history comes in ranges: the range checked (a RangeError for
 * one that is not two real days in order), cut at today when the bank asks for it, fetched in
 * spans (of at most `spanDays` days, or as `spans` cuts it) one request after another with a pause
 * between them and progress lines for a long load (paced.ts); the days inside each span,
 * ascending. A refresh of the last days is one request.
 */
export function spannedSeries(
  bank: SeriesBank,
  fetchSpan: (span: DayRange, options?: FetchOptions) => Promise<RateDocument>,
): (range: DayRange, options?: FetchOptions) => Promise<RateDocument> {
  const gate = createGate(MAX_IN_FLIGHT);
  return async (asked, options) => {
    const spans = spansToFetch(bank, asked);
    if (spans.length === 0) return { provider: bank.id, base: bank.base, days: [] };
    const parts = await inTurn(
      spans.map((span) => () => fetchSpan(span, options)),
      {
        provider: bank.id,
        paceMs: bank.paceMs ?? DEFAULT_PACE_MS,
        gate,
        log: bank.log,
        signal: options?.signal,
        describe: (i) => `${spans[i]!.from}..${spans[i]!.to}`,
      },
    );
    const days = parts.flatMap((part, i) => part.days.filter((d) => d.day >= spans[i]!.from && d.day <= spans[i]!.to));
    return { provider: bank.id, base: bank.base, days };
  };
}

export interface PerCurrencyBank<C> extends SeriesBank {
  feed: string;
  /** The currencies whose series are loaded: those of the bank's current table (one request). */
  currencies(options?: FetchOptions): Promise<C[]>;
  /** Fetches and parses one currency's series over one span. */
  fetchCurrencySpan(currency: C, span: DayRange, options?: FetchOptions): Promise<RateDocument>;
  /** The currency in progress lines and messages. */
  describe(currency: C): string;
}

/**
 * The `series` of a bank whose history comes one currency at a time (the NBRB, the Bank of
 * Russia; the CBA, whose range call takes a list of currencies, with its whole list as one): the
 * currencies of its current table, then each currency's series span by span, every
 * request in turn and paced as in spannedSeries, gathered into days; the days inside each span,
 * ascending. A currency the bank no longer quotes has no history here.
 */
export function perCurrencySeries<C>(bank: PerCurrencyBank<C>): (range: DayRange, options?: FetchOptions) => Promise<RateDocument> {
  const gate = createGate(MAX_IN_FLIGHT);
  return async (asked, options) => {
    const spans = spansToFetch(bank, asked);
    if (spans.length === 0) return { provider: bank.id, base: bank.base, days: [] };
    const currencies = await gate(() => bank.currencies(options));
    const requests = spans.flatMap((span) => currencies.map((currency) => ({ span, currency })));
    const parts = await inTurn(
      requests.map(({ span, currency }) => () => bank.fetchCurrencySpan(currency, span, options)),
      {
        provider: bank.id,
        paceMs: bank.paceMs ?? DEFAULT_PACE_MS,
        gate,
        log: bank.log,
        signal: options?.signal,
        describe: (i) => `${requests[i]!.span.from}..${requests[i]!.span.to} of ${bank.describe(requests[i]!.currency)}`,
      },
    );
    const byDay = new RatesByDay(bank.feed);
    const asOf = new Map<Day, string>();
    parts.forEach((part, i) => {
      const { span, currency } = requests[i]!;
      for (const day of part.days) {
        if (day.day < span.from || day.day > span.to) continue;
        asOf.set(day.day, day.asOf);
        for (const [code, rate] of Object.entries(day.rates)) byDay.add(day.day, code, rate, bank.describe(currency));
      }
    });
    return { provider: bank.id, base: bank.base, days: byDay.days((day) => asOf.get(day)!) };
  };
}

export interface RangeQueryBank extends Omit<SeriesBank, 'upToToday'> {
  feed: string;
  /** How many days back `latest` asks for, to reach past weekends and holidays. */
  windowDays: number;
  clock: Clock;
  /** Cut every range at today (SeriesBank.upToToday, with `clock`). */
  upToToday?: boolean;
  /** Fetches and parses the bank's document for a range (it may hold days outside it). */
  fetchRange(range: DayRange, options?: FetchOptions): Promise<RateDocument>;
}

/**
 * A provider over a bank's range query, which answers for every currency at once (so
 * `currencies` is not applied): `series` fetches the range in paced spans (spannedSeries) and
 * keeps the days inside it, `latest` asks for the last `windowDays` days and keeps the newest.
 */
export function rangeQueryProvider(bank: RangeQueryBank): Provider {
  const { upToToday, ...rest } = bank;
  const get = async (range: DayRange, options?: FetchOptions): Promise<RateDocument> => {
    const document = await bank.fetchRange(range, options);
    return { ...document, days: document.days.filter((d) => d.day >= range.from && d.day <= range.to) };
  };
  const series = spannedSeries(upToToday ? { ...rest, upToToday: bank.clock } : rest, bank.fetchRange);
  return {
    id: bank.id,
    base: bank.base,
    async latest(options) {
      const today = utcDay(bank.clock.now());
      const document = await get({ from: addDays(today, -bank.windowDays), to: today }, options);
      const newest = document.days.at(-1);
      if (!newest) throw new FeedError(`${bank.feed}: nothing published in the ${bank.windowDays} days to ${today}`);
      return { ...document, days: [newest] };
    },
    series,
  };
}

export interface DayByDayBank {
  id: string;
  base: string;
  feed: string;
  clock: Clock;
  /** How many days before today `latest` goes back, a day a request, to find a day with rates. */
  lookbackDays: number;
  /** True for a bank that never publishes on Saturdays and Sundays: its history asks for weekdays only. */
  skipWeekends?: boolean;
  log?: ProviderLog | undefined;
  paceMs?: number;
  /** Fetches and parses the bank's document of one day (it may be dated another day: the rates then in force). */
  fetchDay(day: Day, options?: FetchOptions): Promise<RateDocument>;
}

/**
 * A provider over a bank that answers one day at a time and offers no range (the CBU, the BCRA):
 * `latest` asks for today (UTC) and, when that holds nothing, a day back at a time; `series` is a
 * paced request a day up to today (spannedSeries), each answer kept only for the day it was asked
 * for, so that an answer dated another day (the rates in force since) is not stored twice.
 */
export function dayByDayProvider(bank: DayByDayBank): Provider {
  const { fetchDay, lookbackDays, skipWeekends, clock, feed, ...rest } = bank;
  const weekdays = (range: DayRange): DayRange[] => spansOf(range, 1).filter((span) => ![0, 6].includes(new Date(`${span.from}T00:00:00Z`).getUTCDay()));
  return {
    id: bank.id,
    base: bank.base,
    async latest(options) {
      const today = utcDay(clock.now());
      for (let back = 0; back <= lookbackDays; back++) {
        const day = addDays(today, -back);
        const newest = (await fetchDay(day, options)).days.filter((d) => d.day <= day).at(-1);
        if (newest !== undefined) return { provider: bank.id, base: bank.base, days: [newest] };
      }
      throw new FeedError(`${feed}: nothing published in the ${lookbackDays + 1} days to ${today}`);
    },
    series: spannedSeries({ ...rest, spanDays: 1, ...(skipWeekends ? { spans: weekdays } : {}), upToToday: clock }, (span, options) => fetchDay(span.from, options)),
  };
}

/** A bank's rates gathered row by row into days, ascending; a currency quoted twice on a day is refused. */
export class RatesByDay {
  private readonly byDay = new Map<Day, Record<string, DecimalString>>();

  constructor(private readonly feed: string) {}

  add(day: Day, currency: string, rate: DecimalString, where: string): void {
    let rates = this.byDay.get(day);
    if (!rates) this.byDay.set(day, (rates = {}));
    if (currency in rates) throw new FeedError(`${this.feed}: ${where}: ${currency} is quoted twice on ${day}`);
    rates[currency] = rate;
  }

  /** Every rate of days already gathered elsewhere (one document per series or currency of a bank). */
  addDays(days: readonly DailyQuotes[]): void {
    for (const day of days) for (const [currency, rate] of Object.entries(day.rates)) this.add(day.day, currency, rate, `${currency} on ${day.day}`);
  }

  days(asOf: (day: Day) => string): DailyQuotes[] {
    return [...this.byDay.keys()].sort().map((day) => ({ day, asOf: asOf(day), rates: this.byDay.get(day)! }));
  }
}
