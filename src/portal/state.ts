/**
 * What the page shows, in one place: the pair, amount, range, source, day and table live in the
 * address (shareable), the key in local storage; the currencies start from the list embedded in
 * the page.
 */
import { $ } from './dom.js';
import type { CurrencyName, Group, PortalConfig } from './types.js';

export const config = JSON.parse($('portal-config').textContent ?? '') as PortalConfig;
const KEY_STORAGE = 'exrates.apiKey';
/** Every range the API may take; those this server takes are in config.history.ranges (10y and max where it keeps more than five years). */
export type Range = '1m' | '3m' | '6m' | '1y' | '5y' | '10y' | 'max';
/** How many calendar months each range counts back from today, as the API counts them; `max` starts at the oldest stored day. */
export const RANGE_MONTHS: Record<Exclude<Range, 'max'>, number> = { '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60, '10y': 120 };
const GROUPS: readonly string[] = ['', 'week', 'month'] satisfies Group[];
export const AMOUNT = /^[0-9]{1,18}(\.[0-9]{1,12})?$/;
export const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const PROVIDER_ID = /^[A-Za-z0-9_-]{1,40}$/;

// The pickers start from the list embedded in the page, so they work at once, and take the API's
// /currencies list the first time a visitor reaches for one (pickers.ts): that request counts
// against the quota, which the demo key shares per visitor, so it is made only when it is of use.
export const catalogue: { served: CurrencyName[]; onRequest: CurrencyName[] } = { served: [], onRequest: [] };
export const names = new Map<string, string>();

export function setCatalogue(served: CurrencyName[], onRequest: CurrencyName[]): void {
  catalogue.served = served;
  catalogue.onRequest = onRequest;
  names.clear();
  for (const c of [...served, ...onRequest]) names.set(c.code, c.name);
}

setCatalogue(config.currencies, config.onRequest);

function readStoredKey(): string {
  try {
    return localStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

/** Keeps the visitor's key for the next visit ('' forgets it). */
export function storeKey(key: string): void {
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    // storage disabled: the key lasts for this page only
  }
}

const params = new URLSearchParams(location.search);
const given = (name: string, pattern: RegExp): string | undefined => {
  const value = params.get(name);
  return value !== null && pattern.test(value) ? value : undefined;
};
const pick = (value: string | undefined, fallback: string): string => value?.toUpperCase() ?? fallback;
const firstServed = (preferred: string): string => (names.has(preferred) ? preferred : (catalogue.served[0]?.code ?? preferred));
const givenStart = given('start', DAY) ?? '';
const givenRange = params.get('range');
const givenGroup = params.get('group') ?? '';

export interface State {
  from: string;
  to: string;
  amount: string;
  /** One of config.history.ranges, or 'custom': the days from `start` to `end`. */
  range: Range | 'custom';
  start: string;
  /** '' for today, as the API takes a start without an end. */
  end: string;
  group: Group;
  /** '' for any source (each currency from the first provider quoting it), else a provider's id. */
  source: string;
  /** '' for the latest rate, else the day to convert on (YYYY-MM-DD). */
  date: string;
  /** Whether the table of the amount in every currency is open. */
  table: boolean;
  key: string;
}

export const state: State = {
  from: pick(given('from', /^[A-Za-z]{3}$/), firstServed('EUR')),
  to: pick(given('to', /^[A-Za-z]{3}$/), firstServed('USD')),
  amount: given('amount', AMOUNT) ?? '100',
  range: givenStart ? 'custom' : config.history.ranges.includes(givenRange ?? '') ? (givenRange as Range) : '1y',
  start: givenStart,
  end: givenStart ? (given('end', DAY) ?? '') : '',
  group: GROUPS.includes(givenGroup) ? (givenGroup as Group) : '',
  source: given('source', PROVIDER_ID)?.toLowerCase() ?? '',
  date: given('date', DAY) ?? '',
  table: params.get('table') === '1',
  key: readStoredKey(),
};

/** The visitor's key, else the demo key when the operator offers one; '' when there is none. */
export function activeKey(): string {
  return state.key || config.demo?.key || '';
}

export function rememberInAddress(): void {
  const search = new URLSearchParams({ from: state.from, to: state.to, amount: state.amount, range: state.range });
  if (state.range === 'custom') {
    search.set('start', state.start);
    if (state.end) search.set('end', state.end);
  }
  if (state.group) search.set('group', state.group);
  if (state.date) search.set('date', state.date);
  if (state.table) search.set('table', '1');
  if (state.source) search.set('source', state.source);
  history.replaceState(null, '', `${location.pathname}?${search}`);
}

/** The query of a conversion or a table: the date only when one is asked for. */
export function onDate<Q extends Record<string, string>>(query: Q): Q & { date?: string } {
  return state.date ? { ...query, date: state.date } : query;
}

/** A query with the chosen source, when there is one. */
export function withSource<Q extends Record<string, string>>(query: Q): Q & { source?: string } {
  return state.source ? { ...query, source: state.source } : query;
}
