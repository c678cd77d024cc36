import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { XMLParser } from 'fast-xml-parser';
import { DomainError } from './errors.js';

export interface Currency {
  code: string;
  name: string;
  /** ISO 4217 minor units, or null where ISO 4217 says "N.A." (gold, SDR, testing codes…). */
  minorUnits: number | null;
}

/** Decimals used for results in currencies that have no minor units in ISO 4217 (SPEC §3). */
export const DECIMALS_WITHOUT_MINOR_UNITS = 8;

let table: ReadonlyMap<string, Currency> | undefined;

/**
 * ISO 4217 list one, as shipped by the `currency-codes` package. Its own JSON turns "N.A." minor
 * units into 0, which would make XAU round like JPY, so the package's copy of the ISO XML is read
 * instead.
 */
export function currencyTable(): ReadonlyMap<string, Currency> {
  if (table) return table;
  const require = createRequire(import.meta.url);
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  const parsed = new XMLParser({ parseTagValue: false, ignoreAttributes: true }).parse(xml) as {
    ISO_4217: { CcyTbl: { CcyNtry: Array<{ Ccy?: string; CcyNm?: string | { '#text': string }; CcyMnrUnts?: string }> } };
  };
  const result = new Map<string, Currency>();
  for (const entry of parsed.ISO_4217.CcyTbl.CcyNtry) {
    if (!entry.Ccy || result.has(entry.Ccy)) continue;
    const name = typeof entry.CcyNm === 'object' ? entry.CcyNm['#text'] : (entry.CcyNm ?? entry.Ccy);
    const units = entry.CcyMnrUnts !== undefined && /^\d+$/.test(entry.CcyMnrUnts) ? Number(entry.CcyMnrUnts) : null;
    result.set(entry.Ccy, { code: entry.Ccy, name, minorUnits: units });
  }
  table = result;
  return result;
}

export function isIsoCurrency(code: string): boolean {
  return currencyTable().has(code);
}

/** Decimals a converted amount in this currency is written with. */
export function resultDecimals(code: string): number {
  return currencyTable().get(code)?.minorUnits ?? DECIMALS_WITHOUT_MINOR_UNITS;
}

/**
 * Normalises a currency parameter: case-insensitive on input, upper-case after. Throws
 * `invalid_currency` for anything that is not an ISO 4217 alphabetic code.
 */
export function parseCurrency(input: string, param: string): string {
  const code = input.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !isIsoCurrency(code)) {
    throw new DomainError('invalid_currency', `'${input.slice(0, 16)}' is not an ISO 4217 currency code this service serves.`, { param });
  }
  return code;
}
