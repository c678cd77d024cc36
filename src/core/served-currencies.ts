import { isoCurrencies, isoCurrency } from './currencies.js';
import type { ServingOrder } from './preference.js';
import { daysOf, hasCurrency, quotesNow } from './rate-index.js';
import type { RateSnapshot, Servable } from './rates.js';
import { REPLACED_CURRENCIES } from './replaced-currencies.js';
import type { Day } from './time.js';

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

/** One entry of the currencies list (GET /api/v1/currencies). */
export interface ListedCurrency {
  code: string;
  name: string;
  /** ISO 4217 minor units; null where ISO 4217 says "N.A.". */
  minorUnits: number | null;
  /**
   * The provider whose numbers it is served from: the first of `providers` whose newest number the
   * cross-check did not set aside; null for one on request, until it is loaded.
   */
  servedBy: string | null;
  /** Providers that quote it now, in its serving order; for one on request, those that may. */
  providers: string[];
  /**
   * Oldest and newest day of its rates (absent until something is stored): the oldest stored, or
   * the oldest a history may start on (a stored day) when more is stored.
   */
  firstDate?: Day;
  lastDate?: Day;
  /** true: nothing is stored yet; the first request for it loads its history, or is unsupported_currency. */
  onRequest: boolean;
  /** Present for a currency replaced by another at a fixed legal ratio: answered through its successor since `from`. */
  replacedBy?: {
    successor: string;
    /** Units of the replaced currency per one unit of its successor, exact. */
    ratio: string;
    from: Day;
    reference: string;
  };
}

function named(code: string): ServedCurrency {
  return { code, name: isoCurrency(code)?.name ?? code };
}

// Codes are three ASCII letters: compared by code unit, without a collator (ICU's, for localeCompare).
const byCode = (a: { code: string }, b: { code: string }) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);

/** The codes some provider quotes now: exactly those a live rate is answered for without a backfill. */
function servedCodes(snapshot: RateSnapshot): Set<string> {
  const served = new Set<string>();
  for (const data of snapshot.data.values()) {
    if (data.days.length > 0) served.add(data.base);
    for (const code of data.series.keys()) if (quotesNow(data, code)) served.add(code);
  }
  return served;
}

/**
 * The currencies one provider quotes now, its base among them, sorted by code: the `currencies` of
 * its /providers entry, and what the portal's source picker offers it for.
 */
export function quotedBy(snapshot: RateSnapshot, provider: string): string[] {
  const data = snapshot.data.get(provider);
  if (!data) return [];
  const codes = new Set([data.base, ...data.series.keys()]);
  return [...codes].filter((code) => quotesNow(data, code)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * ISO codes a wide-coverage provider may still load: codes without minor units (gold, SDR, test
 * codes) are not money a provider quotes, and a withdrawn one is no longer quoted.
 */
function loadableCodes(served: ReadonlySet<string>): string[] {
  return isoCurrencies()
    .filter((c) => c.minorUnits !== null && c.withdrawn === undefined && !served.has(c.code))
    .map((c) => c.code);
}

/** What a currency picker offers: the currencies quoted now, and those that may be loaded on first request. */
export function currencyCatalogue(snapshot: RateSnapshot, options: { wideCoverage: boolean }): CurrencyCatalogue {
  const served = servedCodes(snapshot);
  const onRequest = options.wideCoverage ? loadableCodes(served).map(named) : [];
  return { served: [...served].map(named).sort(byCode), onRequest: onRequest.sort(byCode) };
}

/** What the currencies list is made from, besides the rates held. */
export interface ListOptions {
  /** The providers in the order they serve a currency (RateBook.servingOrder). */
  order: ServingOrder;
  /** Whether a provider's newest number of a currency may serve (RateBook.servable): one the cross-check set aside does not. */
  servable?: Servable;
  /** The providers that may load a currency on first request. */
  wideProviders?: readonly string[];
  /** The oldest day a history may start on: firstDate is not older. */
  historyFrom?: Day;
  /** Today: the currencies replaced by then are listed with their successor (replacedBy). */
  today?: Day;
}

/** The days of a currency's rates in the providers that hold it (from `historyFrom` at the earliest, when given). */
function storedDays(snapshot: RateSnapshot, code: string, historyFrom: Day | undefined): { firstDate?: Day; lastDate?: Day } {
  let firstDate: Day | undefined;
  let lastDate: Day | undefined;
  for (const data of snapshot.data.values()) {
    if (!hasCurrency(data, code)) continue;
    const days = daysOf(data, code);
    // The days before the oldest a history may start on (the store keeps a margin) are not offered.
    const first = historyFrom === undefined ? days[0]! : (days.find((day) => day >= historyFrom) ?? days.at(-1)!);
    if (firstDate === undefined || first < firstDate) firstDate = first;
    if (lastDate === undefined || days.at(-1)! > lastDate) lastDate = days.at(-1)!;
  }
  return firstDate === undefined ? {} : { firstDate, lastDate: lastDate! };
}

/**
 * The currencies list: every currency quoted now, with the providers that quote it (in its serving
 * order), the one that serves it (the first whose newest number the cross-check did not set aside)
 * and its stored days; then each currency replaced by today whose successor is quoted, with its
 * successor, ratio and day (answered through the successor); then, marked onRequest, those the
 * wide-coverage providers may load on first request. Sorted by code.
 */
export function listCurrencies(snapshot: RateSnapshot, options: ListOptions): ListedCurrency[] {
  const { order, servable = () => true, wideProviders = [], historyFrom, today } = options;
  const served = servedCodes(snapshot);
  const list: ListedCurrency[] = [];
  const entries = new Map<string, ListedCurrency>();
  for (const code of served) {
    const providers = order(code).filter((id) => {
      const data = snapshot.data.get(id);
      return data !== undefined && quotesNow(data, code);
    });
    const servedBy = providers.find((id) => servable(snapshot.data.get(id)!, code)) ?? providers[0]!;
    const { name } = named(code);
    const entry: ListedCurrency = { code, name, minorUnits: isoCurrency(code)?.minorUnits ?? null, servedBy, providers, ...storedDays(snapshot, code, historyFrom), onRequest: false };
    entries.set(code, entry);
    list.push(entry);
  }
  if (today !== undefined) {
    for (const replaced of REPLACED_CURRENCIES) {
      const successor = entries.get(replaced.successor);
      if (replaced.from > today || successor === undefined) continue;
      // Its own days are the market numbers before the replacement; after them, the successor's.
      const own = storedDays(snapshot, replaced.code, historyFrom);
      const entry: ListedCurrency = {
        code: replaced.code,
        name: named(replaced.code).name,
        minorUnits: isoCurrency(replaced.code)?.minorUnits ?? null,
        servedBy: successor.servedBy,
        providers: successor.providers,
        firstDate: own.firstDate !== undefined && own.firstDate < successor.firstDate! ? own.firstDate : successor.firstDate!,
        lastDate: successor.lastDate!,
        onRequest: false,
        replacedBy: { successor: replaced.successor, ratio: replaced.ratio, from: replaced.from, reference: replaced.reference },
      };
      const listed = entries.get(replaced.code);
      if (listed) list[list.indexOf(listed)] = entry;
      else list.push(entry);
    }
  }
  if (wideProviders.length > 0) {
    for (const code of loadableCodes(served)) {
      list.push({ code, name: named(code).name, minorUnits: isoCurrency(code)?.minorUnits ?? null, servedBy: null, providers: [...wideProviders], onRequest: true });
    }
  }
  return list.sort(byCode);
}
