import { addDays, dayNumber, type Day } from './time.js';

/** A provider whose newest stored day lies further back than a setting allows (EXRATES_OLD_RATES_DAYS). */
export interface OutdatedRates {
  provider: string;
  newestDay: Day;
  /** Whole days from the newest day to today. */
  ageDays: number;
  /** One sentence for a person: the day, its age, and that these are still served as the latest. */
  message: string;
}

/**
 * Whether a provider's newest day is older than `maxAgeDays` before today: its rates are still
 * served as the latest (and `stale` stays false while its refreshes succeed, as they do for a
 * file that is simply old), so a person must be told how old they are. For the start log and
 * /readyz alike. Undefined when nothing is stored or the rates are recent enough.
 */
export function outdatedRates(provider: string, newestDay: Day | null, today: Day, maxAgeDays: number): OutdatedRates | undefined {
  if (newestDay === null || newestDay >= addDays(today, -maxAgeDays)) return undefined;
  const ageDays = dayNumber(today)! - dayNumber(newestDay)!;
  return {
    provider,
    newestDay,
    ageDays,
    message: `the newest ${provider} rates are of ${newestDay}, ${ageDays} days before today (${today}), and are served as the latest: give the provider a current source, or set EXRATES_NOW to replay that time (warned past EXRATES_OLD_RATES_DAYS=${maxAgeDays})`,
  };
}
