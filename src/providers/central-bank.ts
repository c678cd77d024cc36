/**
 * What the national central banks' adapters share besides paced.ts: the strict reading of a
 * published number and a strict reader for the banks' plain CSV files.
 */
import { FeedError } from '../core/errors.js';
import type { DecimalString } from '../core/ports.js';

// Deliberately narrower than what Number() accepts: no sign, exponent, comma or surrounding space.
const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
export const CURRENCY_CODE = /^[A-Z]{3}$/;

/** A published rate as its exact text: a positive plain decimal, or a FeedError naming where it stood. */
export function publishedRate(text: string, feed: string, where: string): DecimalString {
  if (!PLAIN_DECIMAL.test(text)) throw new FeedError(`${feed}: ${where}: ${JSON.stringify(text.slice(0, 40))} is not a plain decimal`);
  if (!/[1-9]/.test(text)) throw new FeedError(`${feed}: ${where}: the rate is zero`);
  return text;
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
