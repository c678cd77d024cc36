import { subtractMonths, type Day } from './time.js';

/**
 * How much history each provider loads and keeps (EXRATES_HISTORY_YEARS): a whole number of
 * years, or `all`, every day its source publishes.
 */
export type HistoryYears = number | 'all';

/** What the interface asks for: five years of daily history (SPEC §5). */
export const DEFAULT_HISTORY_YEARS = 5;

/**
 * The day a load of `all` asks from, for a provider that does not name its first day
 * (Provider.firstDay): before any day a source the service reads publishes, so that each loads as
 * far back as its feed goes.
 */
export const ALL_HISTORY_FROM: Day = '1900-01-01';

/**
 * The oldest day kept: the years asked for and a month of margin (so that a range of that many
 * years, counted back from today, is whole), or ALL_HISTORY_FROM with `all`.
 */
export function retainedFrom(todayDay: Day, years: HistoryYears): Day {
  return years === 'all' ? ALL_HISTORY_FROM : subtractMonths(todayDay, years * 12 + 1);
}

/** The oldest day `start` may ask for: the years kept counted back from today, or any day with `all`. */
export function oldestAskable(todayDay: Day, years: HistoryYears): Day {
  return years === 'all' ? ALL_HISTORY_FROM : subtractMonths(todayDay, years * 12);
}

/** More history than the interface's five years: only then do the ranges 10y and max exist. */
export function keepsDeepHistory(years: HistoryYears): boolean {
  return years === 'all' || years > DEFAULT_HISTORY_YEARS;
}

/** "the retained 5 years", "every retained year": how messages and descriptions name the limit. */
export function retainedYearsText(years: HistoryYears): string {
  if (years === 'all') return 'the retained history';
  return `the retained ${years} year${years === 1 ? '' : 's'}`;
}

/** "up to 5 years of daily history": what descriptions of the service say it holds. */
export function historyExtent(years: HistoryYears): string {
  if (years === 'all') return 'daily history as far back as its sources publish (the ECB since 1999)';
  return `up to ${years} year${years === 1 ? '' : 's'} of daily history`;
}
