import { DomainError } from './errors.js';
import { ISO_4217, type Currency } from './iso-4217.js';

export type { Currency };

/** Decimals used for results in currencies that have no minor units in ISO 4217 (SPEC §3). */
export const DECIMALS_WITHOUT_MINOR_UNITS = 8;

/** A code's entry in ISO 4217 (src/core/iso-4217.ts: list one from the `currency-codes` package, amended). */
export function isoCurrency(code: string): Currency | undefined {
  return Object.hasOwn(ISO_4217, code) ? ISO_4217[code] : undefined;
}

/** Every currency of ISO 4217 list one, and the withdrawn ones whose history is served. */
export function isoCurrencies(): Currency[] {
  return Object.values(ISO_4217);
}

export function isIsoCurrency(code: string): boolean {
  return Object.hasOwn(ISO_4217, code);
}

/** Decimals a converted amount in this currency is written with. */
export function resultDecimals(code: string): number {
  return isoCurrency(code)?.minorUnits ?? DECIMALS_WITHOUT_MINOR_UNITS;
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
