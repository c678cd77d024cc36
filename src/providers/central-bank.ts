/**
 * What the national central banks' adapters share: how a provider describes itself, the strict
 * reading of a published number, the exact per-unit scaling and inversion of a quotation, and a
 * strict reader for the banks' plain CSV files.
 */
import { divide, ONE, parseDecimal, toPlainString } from '../core/decimal.js';
import { FeedError } from '../core/errors.js';
import type { DecimalString } from '../core/ports.js';

/** How a first-hand provider describes itself to the people who rely on its numbers. */
export interface ProviderInfo {
  readonly id: string;
  readonly name: string;
  readonly kind: 'central-bank';
  /** The bank's own currency, against which it publishes every rate. */
  readonly base: string;
  /** The bank's page on the use of its data. */
  readonly termsUrl: string;
  /** When the bank publishes, in words. */
  readonly schedule: string;
}

// Deliberately narrower than what Number() accepts: no sign, exponent, comma or surrounding space.
const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
export const CURRENCY_CODE = /^[A-Z]{3}$/;

/** A published rate as its exact text: a positive plain decimal, or a FeedError naming where it stood. */
export function publishedRate(text: string, feed: string, where: string): DecimalString {
  if (!PLAIN_DECIMAL.test(text)) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(text.slice(0, 40))} is not a plain decimal`);
  if (!/[1-9]/.test(text)) throw new FeedError(`${feed}: ${where}: the rate is zero`);
  return text;
}

/** The largest unit a bank quotes per (10^9); anything beyond is a misread column, not a unit. */
const MAX_UNIT_EXPONENT = 9;

/**
 * A rate quoted per 10^exponent units as the exact rate per one unit: the decimal point moves
 * `exponent` places to the left and every published digit is kept (`1.971` per 100 → `0.01971`,
 * `149.20` per 100 → `1.4920`).
 */
export function perUnit(rate: DecimalString, exponent: number): DecimalString {
  if (!Number.isInteger(exponent) || exponent < 0 || exponent > MAX_UNIT_EXPONENT) {
    throw new RangeError(`a unit of 10^${exponent} is not a quotation unit`);
  }
  if (!PLAIN_DECIMAL.test(rate)) throw new RangeError(`${JSON.stringify(rate)} is not a plain decimal`);
  if (exponent === 0) return rate;
  const [whole, fraction = ''] = rate.split('.') as [string, string?];
  const digits = whole + fraction;
  const point = whole.length - exponent;
  let integer = point <= 0 ? '0' : digits.slice(0, point);
  const decimals = point <= 0 ? '0'.repeat(-point) + digits : digits.slice(point);
  integer = integer.replace(/^0+(?=\d)/, '');
  return decimals === '' ? integer : `${integer}.${decimals}`;
}

/**
 * 1 / rate as a plain decimal when that is a finite decimal (`0.8` → `1.25`, `0.0005` → `2000`),
 * else null: a quotation published the other way round is turned only when nothing is lost.
 */
export function invertExactly(rate: DecimalString): DecimalString | null {
  const value = parseDecimal(rate);
  if (value === null || value.num === 0n) return null;
  const inverse = divide(ONE, value);
  // A reduced fraction is a finite decimal exactly when its denominator is 2^a × 5^b; it then
  // has max(a, b) decimals.
  let den = inverse.den;
  let twos = 0;
  let fives = 0;
  while (den % 2n === 0n) {
    den /= 2n;
    twos += 1;
  }
  while (den % 5n === 0n) {
    den /= 5n;
    fives += 1;
  }
  if (den !== 1n) return null;
  return toPlainString(inverse, Math.max(twos, fives));
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
