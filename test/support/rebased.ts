/**
 * Many providers' numbers from the ECB's recorded history, for checks at the size of every bank
 * holding years: each provider is the ECB re-expressed against another base (to 10 significant
 * digits), so that every number has a comparator at every other provider, and all agree.
 */
import type { RateDocument } from '../../src/core/ports.js';
import { buildProviderRates, type ProviderRates } from '../../src/core/rate-index.js';
import { D, parseEcbCsv } from '../e2e/independent.js';
import { ECB_CSV } from './data.js';

/** The ECB's days from `from` on (to its newest, 2026-03-05), one document per base, each from provider `bank-<base>`. */
export function rebasedDocuments(bases: readonly string[], from: string): RateDocument[] {
  const days = parseEcbCsv(ECB_CSV).days.filter((d) => d.date >= from);
  return bases.map((base) => ({
    provider: `bank-${base.toLowerCase()}`,
    base,
    days: days.map((d) => {
      const perBase = d.values.get(base)!;
      const rates = [['EUR', new D(1)] as const, ...d.values].filter(([code]) => code !== base).map(([code, value]) => [code, value.div(perBase).toSignificantDigits(10).toFixed()]);
      return { day: d.date, asOf: `${d.date}T15:00:00Z`, rates: Object.fromEntries(rates) };
    }),
  }));
}

/** A document as a provider's numbers held in memory. */
export function heldRates(document: RateDocument): ProviderRates {
  const quotes = document.days.flatMap((d) => Object.entries(d.rates).map(([quote, rate]) => ({ provider: document.provider, base: document.base, quote, day: d.day, asOf: d.asOf, rate })));
  return buildProviderRates(document.provider, document.base, quotes);
}
