import { currencyTable } from './currencies.js';
import { quotesNow } from './rate-index.js';
import type { RateSnapshot } from './rates.js';

export interface ServedCurrency {
  code: string;
  name: string;
}

export interface CurrencyCatalogue {
  /** Currencies some provider quotes now: answered at once. */
  served: ServedCurrency[];
  /**
   * Other ISO 4217 currencies a wide-coverage provider may quote: the first request for one loads
   * its history (SPEC §4), or answers `unsupported_currency`. Empty without such a provider.
   */
  onRequest: ServedCurrency[];
}

function named(code: string): ServedCurrency {
  return { code, name: currencyTable().get(code)?.name ?? code };
}

/** What a currency picker offers: the currencies quoted now, and those that may be loaded on first request. */
export function currencyCatalogue(snapshot: RateSnapshot, options: { wideCoverage: boolean }): CurrencyCatalogue {
  const served = new Set<string>();
  for (const data of snapshot.data.values()) {
    if (data.days.length > 0) served.add(data.base);
    for (const code of data.series.keys()) if (quotesNow(data, code)) served.add(code);
  }
  // Codes are three ASCII letters: compared by code unit, without a collator (ICU's, for localeCompare).
  const byCode = (a: ServedCurrency, b: ServedCurrency) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
  const onRequest = options.wideCoverage
    ? // Codes without minor units (gold, SDR, test codes) are not currencies a provider quotes as money.
      [...currencyTable().values()].filter((c) => c.minorUnits !== null && !served.has(c.code)).map((c) => named(c.code))
    : [];
  return { served: [...served].map(named).sort(byCode), onRequest: onRequest.sort(byCode) };
}
