import { isIsoCurrency, parseCurrency, resultDecimals } from './currencies.js';
import { divide, multiply, ONE, parseDecimal, roundSignificant, roundToScale, stripLeadingZeros, type Rational } from './decimal.js';
import { DomainError } from './errors.js';
import type { Clock, RateStore, StoredQuote } from './ports.js';
import { addDays, utcDay, type Day } from './time.js';

/** Significant digits of every rate the service writes (SPEC §3). */
export const RATE_DIGITS = 8;

/** Accepted amounts: up to 18 integer digits and 12 decimals, nothing else (SPEC §3). */
export const AMOUNT_PATTERN = '^[0-9]{1,18}(\\.[0-9]{1,12})?$';
const AMOUNT_SHAPE = new RegExp(AMOUNT_PATTERN);

/** One provider's published rates for one day, as exact values per unit of its base. */
export interface DayTable {
  provider: string;
  base: string;
  day: Day;
  asOf: string;
  values: ReadonlyMap<string, Rational>;
}

export interface RateQuote {
  pair: string;
  from: string;
  to: string;
  rate: string;
  asOf: string;
  stale: boolean;
}

export interface Conversion {
  from: string;
  to: string;
  amount: string;
  rate: string;
  result: string;
  asOf: string;
  stale: boolean;
}

export interface RateBookOptions {
  store: RateStore;
  /** Provider ids in order of preference. */
  providers: readonly string[];
  clock: Clock;
  /**
   * How long the latest tables are kept in memory before being read again. Writes in this process
   * call `invalidate()`; the TTL bounds how long a write by another process goes unseen.
   */
  cacheTtlMs?: number;
}

export interface RateBook {
  liveRate(fromInput: string, toInput: string): Promise<RateQuote>;
  convert(fromInput: string, toInput: string, amountInput: string): Promise<Conversion>;
  /** The provider that serves a currency, preferring one that quotes it today, else one with stored history. */
  latestTables(): Promise<ReadonlyMap<string, DayTable>>;
  isStale(provider: string): Promise<boolean>;
  invalidate(): void;
  readonly providers: readonly string[];
  readonly store: RateStore;
  readonly clock: Clock;
}

export function tableFromQuotes(provider: string, base: string, day: Day, quotes: readonly StoredQuote[]): DayTable {
  const values = new Map<string, Rational>([[base, ONE]]);
  let asOf = '';
  for (const q of quotes) {
    const value = parseDecimal(q.rate);
    // Stored rates were validated on the way in; a bad one is skipped rather than served.
    if (value && value.num > 0n) values.set(q.quote, value);
    if (q.asOf > asOf) asOf = q.asOf;
  }
  return { provider, base, day, asOf, values };
}

/**
 * The exact rate from → to given one table holding `from` and one holding `to` (possibly the
 * same). Across two providers the rate goes through a currency both publish (SPEC §2).
 */
export function crossRate(fromTable: DayTable, from: string, toTable: DayTable, to: string): Rational | null {
  const vFrom = fromTable.values.get(from);
  const vTo = toTable.values.get(to);
  if (!vFrom || !vTo) return null;
  if (fromTable === toTable || (fromTable.provider === toTable.provider && fromTable.day === toTable.day)) {
    return divide(vTo, vFrom);
  }
  const bridge = fromTable.values.has(toTable.base)
    ? toTable.base
    : toTable.values.has(fromTable.base)
      ? fromTable.base
      : [...fromTable.values.keys()].find((c) => toTable.values.has(c));
  if (bridge === undefined) return null;
  const fromToBridge = divide(fromTable.values.get(bridge)!, vFrom);
  const bridgeToTarget = divide(vTo, toTable.values.get(bridge)!);
  return multiply(fromToBridge, bridgeToTarget);
}

export function formatRate(value: Rational): string {
  return roundSignificant(value, RATE_DIGITS);
}

export function parseAmount(input: string): { text: string; value: Rational } {
  if (!AMOUNT_SHAPE.test(input)) {
    throw new DomainError(
      'invalid_amount',
      'amount must be a non-negative decimal with up to 18 integer digits and up to 12 decimals, using "." as the decimal point (for example 100 or 99.95); no sign, exponent, spaces or thousands separators.',
      { param: 'amount' },
    );
  }
  return { text: stripLeadingZeros(input), value: parseDecimal(input)! };
}

export function createRateBook(options: RateBookOptions): RateBook {
  const { store, providers, clock } = options;
  const ttl = options.cacheTtlMs ?? 5_000;
  let cached: { at: number; tables: Promise<ReadonlyMap<string, DayTable>> } | undefined;
  let staleCache: { at: number; states: Promise<ReadonlyMap<string, boolean>> } | undefined;

  async function loadLatestTables(): Promise<ReadonlyMap<string, DayTable>> {
    const tables = new Map<string, DayTable>();
    for (const provider of providers) {
      const day = await store.latestDay(provider);
      if (day === null) continue;
      const quotes = await store.quotesOn(provider, day);
      const base = quotes[0]?.base;
      if (base !== undefined) tables.set(provider, tableFromQuotes(provider, base, day, quotes));
    }
    return tables;
  }

  function latestTables(): Promise<ReadonlyMap<string, DayTable>> {
    const now = Date.now();
    if (!cached || now - cached.at > ttl) {
      const tables = loadLatestTables();
      cached = { at: now, tables };
      tables.catch(() => {
        if (cached?.tables === tables) cached = undefined;
      });
    }
    return cached.tables;
  }

  async function staleStates(): Promise<ReadonlyMap<string, boolean>> {
    const now = Date.now();
    if (!staleCache || now - staleCache.at > ttl) {
      const states = (async () => {
        const result = new Map<string, boolean>();
        for (const provider of providers) result.set(provider, (await store.providerState(provider))?.failing ?? false);
        return result;
      })();
      staleCache = { at: now, states };
      states.catch(() => {
        if (staleCache?.states === states) staleCache = undefined;
      });
    }
    return staleCache.states;
  }

  async function isStale(provider: string): Promise<boolean> {
    return (await staleStates()).get(provider) ?? false;
  }

  /** The table that serves a currency now: the first provider, in preference order, that quotes it. */
  async function tableFor(code: string, param: string, tables: ReadonlyMap<string, DayTable>): Promise<DayTable> {
    for (const provider of providers) {
      const table = tables.get(provider);
      if (table?.values.has(code)) return table;
    }
    if (tables.size === 0) {
      throw new DomainError('feed_unavailable', 'No rates have been loaded yet and the rate feed could not be reached. Try again shortly.', {
        retryAfterSeconds: 60,
      });
    }
    throw new DomainError('unsupported_currency', `${code} is an ISO 4217 currency, but no configured rate provider quotes it.`, { param });
  }

  /** Tables of the same provider for an earlier day, when two providers' latest days differ. */
  async function tableOnOrBefore(provider: string, base: string, day: Day, currencies: readonly string[]): Promise<DayTable | null> {
    const rows = await store.series(provider, currencies, { from: addDays(day, -14), to: day });
    if (rows.length === 0) return null;
    const lastDay = rows[rows.length - 1]!.day;
    return tableFromQuotes(provider, base, lastDay, rows.filter((r) => r.day === lastDay));
  }

  async function liveRate(fromInput: string, toInput: string): Promise<RateQuote> {
    const from = parseCurrency(fromInput, 'from');
    const to = parseCurrency(toInput, 'to');
    const tables = await latestTables();
    let fromTable = await tableFor(from, 'from', tables);
    let toTable = await tableFor(to, 'to', tables);
    if (from === to) {
      return { pair: from + to, from, to, rate: '1', asOf: fromTable.asOf, stale: await isStale(fromTable.provider) };
    }
    if (fromTable.provider !== toTable.provider && fromTable.day !== toTable.day) {
      // Different providers publish on different days: cross on the older day, the newest both have.
      const older = fromTable.day < toTable.day ? fromTable : toTable;
      const newer = older === fromTable ? toTable : fromTable;
      // The pair's own currency and every possible bridge must be read from the newer provider.
      const aligned = await tableOnOrBefore(newer.provider, newer.base, older.day, [...new Set([...older.values.keys(), from, to])]);
      if (aligned) {
        if (newer === fromTable) fromTable = aligned;
        else toTable = aligned;
      }
    }
    const value = crossRate(fromTable, from, toTable, to);
    if (!value) throw new DomainError('feed_unavailable', `No common rate for ${from}/${to} is stored yet.`, { retryAfterSeconds: 60 });
    const asOf = fromTable.asOf < toTable.asOf ? fromTable.asOf : toTable.asOf;
    const stale = (await isStale(fromTable.provider)) || (await isStale(toTable.provider));
    return { pair: from + to, from, to, rate: formatRate(value), asOf, stale };
  }

  async function convert(fromInput: string, toInput: string, amountInput: string): Promise<Conversion> {
    const amount = parseAmount(amountInput);
    const quote = await liveRate(fromInput, toInput);
    // The result uses the rounded rate in the same response, so a client can reproduce it (SPEC §3).
    const result = roundToScale(multiply(amount.value, parseDecimal(quote.rate)!), resultDecimals(quote.to));
    return { from: quote.from, to: quote.to, amount: amount.text, rate: quote.rate, result, asOf: quote.asOf, stale: quote.stale };
  }

  return {
    liveRate,
    convert,
    latestTables,
    isStale,
    invalidate() {
      cached = undefined;
      staleCache = undefined;
    },
    providers,
    store,
    clock,
  };
}

/** Today's date for the service, from its clock. */
export function today(clock: Clock): Day {
  return utcDay(clock.now());
}

export { isIsoCurrency };
