/**
 * Parsers for the ECB euro reference-rate files: eurofxref-hist.csv (also inside eurofxref-hist.zip)
 * and the gesmes XML of eurofxref-daily.xml, eurofxref-hist-90d.xml and eurofxref-hist.xml.
 * Format description: https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html
 *
 * Parsers are strict about structure and leave plausibility (zero rates, future days) to the caller:
 * a file that does not have the expected shape is more likely a broken download or an error page
 * than a feed to be read generously.
 */
import { unzipSync } from 'fflate';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { FeedError } from '../core/errors.js';
import type { DailyQuotes, DayRange, DecimalString, RateDocument } from '../core/ports.js';
import { ecbReferenceTime, isDay, type Day } from '../core/time.js';
import { CURRENCY_CODE, publishedRate } from './central-bank.js';
import { decodeUtf8, sizeText } from './fetch-bytes.js';

/**
 * The most bytes the whole history may hold, sent and inflated: ECB's since 1999 in one file, as
 * eurofxref-hist.zip (its CSV), eurofxref-hist.xml or an operator's copy (the file provider,
 * `import`), with a wide margin for the years to come (docs/operations.md).
 */
export const ECB_HISTORY_MAX_BYTES = 32 * 1024 * 1024;

const PROVIDER = 'ecb';
const FEED = 'ECB feed';
const BASE = 'EUR';
const MISSING = 'N/A';

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function checkCurrency(code: string, where: string): string {
  if (!CURRENCY_CODE.test(code)) {
    throw new FeedError(`ECB feed: ${where}: currency code ${JSON.stringify(code)} is not three upper-case letters`);
  }
  return code;
}

function checkDay(text: string, where: string): Day {
  if (!isDay(text)) throw new FeedError(`ECB feed: ${where}: ${JSON.stringify(text)} is not a calendar date YYYY-MM-DD`);
  return text;
}

function toDocument(byDay: Map<Day, Record<string, DecimalString>>): RateDocument {
  if (byDay.size === 0) throw new FeedError('ECB feed: the document holds no days');
  const days: DailyQuotes[] = [...byDay.keys()]
    .sort()
    .map((day) => ({ day, asOf: ecbReferenceTime(day), rates: byDay.get(day)! }));
  return { provider: PROVIDER, base: BASE, days };
}

/**
 * Parses the layout of eurofxref-hist.csv: `Date,USD,JPY,...,` with a trailing comma on every line
 * (so one nameless empty column), `N/A` for a missing value, newest day first.
 */
export function parseEcbCsv(text: string): RateDocument {
  const body = stripBom(text);
  if (body.trim() === '') throw new FeedError('ECB feed: the CSV is empty');

  const lines = body.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();

  const header = lines[0]!.split(',');
  if (header[0] !== 'Date') {
    throw new FeedError(`ECB feed: the CSV header does not start with "Date": ${JSON.stringify(lines[0]!.slice(0, 80))}`);
  }
  // The trailing comma ECB writes on every line yields one unnamed last column that must stay empty.
  const trailingEmpty = header.length > 1 && header[header.length - 1] === '';
  const currencies = header.slice(1, trailingEmpty ? -1 : undefined);
  if (currencies.length === 0) throw new FeedError('ECB feed: the CSV header names no currencies');
  const seenCurrencies = new Set<string>();
  for (const code of currencies) {
    checkCurrency(code, 'CSV header');
    if (seenCurrencies.has(code)) throw new FeedError(`ECB feed: CSV header names ${code} twice`);
    seenCurrencies.add(code);
  }

  const byDay = new Map<Day, Record<string, DecimalString>>();
  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1;
    const fields = lines[i]!.split(',');
    if (fields.length !== header.length) {
      throw new FeedError(`ECB feed: CSV line ${lineNo} has ${fields.length} fields, the header has ${header.length}`);
    }
    if (trailingEmpty && fields[fields.length - 1] !== '') {
      throw new FeedError(`ECB feed: CSV line ${lineNo} has a value in the unnamed last column`);
    }
    const day = checkDay(fields[0]!, `CSV line ${lineNo}`);
    if (byDay.has(day)) throw new FeedError(`ECB feed: CSV line ${lineNo} repeats the date ${day}`);
    const rates: Record<string, DecimalString> = {};
    for (let c = 0; c < currencies.length; c++) {
      const token = fields[c + 1]!;
      if (token === MISSING || token === '') continue;
      rates[currencies[c]!] = publishedRate(token, FEED, `CSV line ${lineNo}, ${currencies[c]}`);
    }
    if (Object.keys(rates).length === 0) throw new FeedError(`ECB feed: CSV line ${lineNo} (${day}) holds no rate`);
    byDay.set(day, rates);
  }
  return toDocument(byDay);
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // Rates must stay text: parsing them as numbers would lose trailing zeros and exactness.
  parseAttributeValue: false,
  parseTagValue: false,
  // Untrimmed, so that a padded rate such as " 1.19" is rejected rather than quietly cleaned up.
  trimValues: false,
  removeNSPrefix: true,
  isArray: (tagName, _path, _isLeaf, isAttribute) => !isAttribute && tagName === 'Cube',
});

type XmlNode = Record<string, unknown>;

function attribute(node: XmlNode, name: string, where: string): string | undefined {
  const value = node[`@_${name}`];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new FeedError(`ECB feed: ${where}: attribute ${name} is not text`);
  return value;
}

function cubeChildren(node: XmlNode): unknown[] {
  const children = node['Cube'];
  return Array.isArray(children) ? children : [];
}

function collectXmlDays(cubes: unknown[], byDay: Map<Day, Record<string, DecimalString>>): void {
  for (const cube of cubes) {
    // An empty `<Cube/>` without attributes is parsed as an empty string.
    if (typeof cube !== 'object' || cube === null) continue;
    const node = cube as XmlNode;
    const time = attribute(node, 'time', 'XML Cube');
    if (time === undefined) {
      if (attribute(node, 'currency', 'XML Cube') !== undefined || attribute(node, 'rate', 'XML Cube') !== undefined) {
        throw new FeedError('ECB feed: XML has a rate outside a dated Cube');
      }
      collectXmlDays(cubeChildren(node), byDay);
      continue;
    }
    const day = checkDay(time, 'XML Cube time');
    if (byDay.has(day)) throw new FeedError(`ECB feed: XML repeats the date ${day}`);
    const rates: Record<string, DecimalString> = {};
    for (const child of cubeChildren(node)) {
      if (typeof child !== 'object' || child === null) {
        throw new FeedError(`ECB feed: XML day ${day} has a Cube without currency and rate`);
      }
      const where = `XML day ${day}`;
      const currency = attribute(child as XmlNode, 'currency', where);
      const rate = attribute(child as XmlNode, 'rate', where);
      if (currency === undefined || rate === undefined) {
        throw new FeedError(`ECB feed: ${where} has a Cube without currency and rate`);
      }
      checkCurrency(currency, where);
      if (currency in rates) throw new FeedError(`ECB feed: ${where} quotes ${currency} twice`);
      rates[currency] = publishedRate(rate, FEED, `${where}, ${currency}`);
    }
    if (Object.keys(rates).length === 0) throw new FeedError(`ECB feed: XML day ${day} holds no rate`);
    byDay.set(day, rates);
  }
}

/** Parses ECB's gesmes XML: the daily, 90-day and full-history files share one structure. */
export function parseEcbXml(text: string): RateDocument {
  // Whitespace before the XML declaration is not well-formed, but it says nothing about the data.
  const body = stripBom(text).trimStart();
  if (body === '') throw new FeedError('ECB feed: the XML is empty');
  // The parser itself is forgiving about unclosed elements; validating first is what turns a
  // truncated download into an error instead of a silently shorter series.
  const valid = XMLValidator.validate(body);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new FeedError(`ECB feed: the XML is not well-formed (line ${line}, column ${col}): ${msg}`);
  }
  let parsed: unknown;
  try {
    parsed = xmlParser.parse(body);
  } catch (error) {
    throw new FeedError(`ECB feed: the XML could not be parsed: ${(error as Error).message}`, { cause: error });
  }
  const envelope = (parsed as XmlNode | null)?.['Envelope'];
  if (typeof envelope !== 'object' || envelope === null) {
    throw new FeedError('ECB feed: the XML is not a gesmes:Envelope');
  }
  const byDay = new Map<Day, Record<string, DecimalString>>();
  collectXmlDays(cubeChildren(envelope as XmlNode), byDay);
  if (byDay.size === 0) throw new FeedError('ECB feed: the XML has no dated Cube');
  return toDocument(byDay);
}

function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

const DATA_ENTRY = /\.(csv|xml)$/i;

function unzipSingleEntry(bytes: Uint8Array, maxBytes: number): Uint8Array {
  let entries: Record<string, Uint8Array>;
  let oversized: { name: string; size: number } | undefined;
  try {
    // Only the data entry is inflated; anything else in the archive is skipped unread. fflate
    // inflates an entry into a buffer of the size its header declares and no further, so a limit
    // on the declared size is a limit on what is inflated.
    entries = unzipSync(bytes, {
      filter: (file) => {
        if (!DATA_ENTRY.test(file.name) || file.name.startsWith('__MACOSX/')) return false;
        if (file.originalSize > maxBytes) oversized ??= { name: file.name, size: file.originalSize };
        return file.originalSize <= maxBytes;
      },
    });
  } catch (error) {
    throw new FeedError(`ECB feed: the ZIP archive is damaged: ${(error as Error).message}`, { cause: error });
  }
  if (oversized) throw new FeedError(`ECB feed: the ZIP entry ${oversized.name} inflates to ${oversized.size} bytes, over this feed's limit of ${sizeText(maxBytes)}; not inflated`);
  const names = Object.keys(entries);
  if (names.length !== 1) {
    throw new FeedError(`ECB feed: the ZIP archive should hold one .csv or .xml file, it holds ${names.length}`);
  }
  return entries[names[0]!]!;
}

/**
 * Parses whatever ECB layout the bytes hold: eurofxref-hist.zip, one of the XML files, or the CSV.
 * A ZIP's entry is inflated only up to `maxBytes` (by default, as much as the archive itself holds
 * at most: what a read of the history file allows).
 */
export function parseEcbDocument(bytes: Uint8Array, maxBytes: number = ECB_HISTORY_MAX_BYTES): RateDocument {
  if (bytes.length === 0) throw new FeedError('ECB feed: the document is empty');
  const data = isZip(bytes) ? unzipSingleEntry(bytes, maxBytes) : bytes;
  const text = stripBom(decodeUtf8(data, 'ECB feed'));
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) throw new FeedError('ECB feed: the document is empty');
  return first === '<' ? parseEcbXml(text) : parseEcbCsv(text);
}

/** The days of a document within a range, both ends inclusive. */
export function withinRange(document: RateDocument, range: DayRange): RateDocument {
  return { ...document, days: document.days.filter((d) => d.day >= range.from && d.day <= range.to) };
}
