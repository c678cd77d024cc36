/**
 * A bank's parsed document held to the ECB's published history, computed independently: each
 * stored number (units of the currency per unit of the bank's base, `1/x` read as its reciprocal)
 * against the ECB's cross of the same day, units of the currency per euro over units of the base
 * per euro. Banks fix at other hours than the ECB, so the two differ by market moves within the
 * day; a misread unit (×10, ×100) or direction (x for 1/x) differs far more.
 */
import type { RateDocument } from '../../src/core/ports.js';
import { D, parseEcbCsv, perEur, type Dec, type EcbTable } from '../e2e/independent.js';
import { ECB_CSV } from './data.js';

let table: EcbTable | undefined;

/** A stored rate text (`1.23`, `1/4.56`) as a number. */
export function storedValue(text: string): Dec {
  return text.startsWith('1/') ? new D(1).div(text.slice(2)) : new D(text);
}

export interface EcbComparison {
  /** Pairs of a day and a currency both publish, compared. */
  checked: number;
  /** Currencies compared at least once. */
  currencies: Set<string>;
  /** Those further from the ECB's cross than the tolerance: `day currency stored vs cross`. */
  far: string[];
}

/**
 * Every stored number of the document on the ECB's days, compared within `tolerance` (0.03: 3%).
 * For a base the ECB does not quote, the bank's own euro stands for the base's units per euro, and
 * its other currencies are compared through it (so their direction and units relative to the euro's).
 */
export function compareWithEcb(document: RateDocument, tolerance: number): EcbComparison {
  table ??= parseEcbCsv(ECB_CSV);
  const ecbDays = new Map(table.days.map((d) => [d.date, d]));
  const result: EcbComparison = { checked: 0, currencies: new Set(), far: [] };
  for (const day of document.days) {
    const ecb = ecbDays.get(day.day);
    if (!ecb) continue;
    const ownEuro = day.rates['EUR'];
    const throughOwnEuro = perEur(ecb, document.base) === undefined;
    const base = throughOwnEuro ? ownEuro && new D(1).div(storedValue(ownEuro)) : perEur(ecb, document.base);
    if (!base) continue;
    for (const [currency, text] of Object.entries(day.rates)) {
      const perEuro = throughOwnEuro && currency === 'EUR' ? undefined : perEur(ecb, currency);
      if (!perEuro) continue;
      const cross = perEuro.div(base);
      const stored = storedValue(text);
      result.checked += 1;
      result.currencies.add(currency);
      if (stored.div(cross).minus(1).abs().gt(tolerance)) result.far.push(`${day.day} ${currency} ${text} vs ${cross.toSignificantDigits(8).toString()}`);
    }
  }
  return result;
}
