/**
 * Wall-clock publication times of the central banks, written in UTC (each day's `asOf`).
 *
 * The summer-time rules are written here rather than read from Intl.DateTimeFormat, for the reason
 * given at `frankfurtTime`: the process would map ICU's locale data for one question a rule
 * answers. The times asked are afternoon times, long after a change of clocks at 01:00–02:00 local
 * time, so summer time is a matter of the calendar date alone. A test holds every rule to Intl.
 */
import { frankfurtTime, isDay, type Day } from '../core/time.js';

const MS_PER_MINUTE = 60_000;

function checkTime(day: Day, hour: number, minute: number, zone: string, firstYear: number): void {
  if (!isDay(day) || day < `${firstYear}-01-01`) {
    throw new RangeError(`no ${zone} time rule for ${day}: its summer time follows the rule in force since ${firstYear}`);
  }
  if (!Number.isInteger(hour) || !Number.isInteger(minute) || hour < 3 || hour > 22 || minute < 0 || minute > 59) {
    throw new RangeError(`${hour}:${minute} is not an afternoon time that a calendar date alone places`);
  }
}

function isoAt(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Oslo and Stockholm keep Frankfurt's time all year (CET/CEST under the same EU rule). */
export function centralEuropeanTime(day: Day, hour: number, minute = 0): string {
  checkTime(day, hour, minute, 'Central European', 1996);
  return isoAt(Date.parse(frankfurtTime(day, hour)) + minute * MS_PER_MINUTE);
}

/** London is an hour behind Frankfurt all year: both change clocks at 01:00 UTC on the same Sundays. */
export function londonTime(day: Day, hour: number, minute = 0): string {
  checkTime(day, hour, minute, 'London', 1996);
  return isoAt(Date.parse(frankfurtTime(day, hour + 1)) + minute * MS_PER_MINUTE);
}

function utcMs(year: number, month: number, date: number): number {
  return Date.UTC(year, month - 1, date);
}

/** The date (ms at midnight UTC) of the n-th Sunday of a month, n from 1. */
function nthSunday(year: number, month: number, n: number): number {
  const first = utcMs(year, month, 1);
  const weekday = new Date(first).getUTCDay();
  return first + (((7 - weekday) % 7) + 7 * (n - 1)) * 86_400_000;
}

function lastSunday(year: number, month: number): number {
  const last = utcMs(year, month + 1, 0);
  return last - new Date(last).getUTCDay() * 86_400_000;
}

/**
 * Toronto (Eastern time): UTC−5, and UTC−4 from the second Sunday of March to the first Sunday
 * of November, the rule Ontario has followed since 2007.
 */
export function torontoTime(day: Day, hour: number, minute = 0): string {
  checkTime(day, hour, minute, 'Toronto', 2007);
  const date = Date.parse(`${day}T00:00:00Z`);
  const year = new Date(date).getUTCFullYear();
  const summer = date >= nthSunday(year, 3, 2) && date < nthSunday(year, 11, 1);
  return isoAt(date + ((hour + (summer ? 4 : 5)) * 60 + minute) * MS_PER_MINUTE);
}

/**
 * Jerusalem: UTC+2, and UTC+3 from the Friday before the last Sunday of March to the last Sunday
 * of October, Israel's rule since 2013.
 */
export function jerusalemTime(day: Day, hour: number, minute = 0): string {
  checkTime(day, hour, minute, 'Jerusalem', 2013);
  const date = Date.parse(`${day}T00:00:00Z`);
  const year = new Date(date).getUTCFullYear();
  const summer = date >= lastSunday(year, 3) - 2 * 86_400_000 && date < lastSunday(year, 10);
  return isoAt(date + ((hour - (summer ? 3 : 2)) * 60 + minute) * MS_PER_MINUTE);
}

/**
 * Sydney (Australian Eastern time): UTC+10, and UTC+11 from the first Sunday of October to the
 * first Sunday of April, the rule New South Wales has followed since 2008.
 */
export function sydneyTime(day: Day, hour: number, minute = 0): string {
  checkTime(day, hour, minute, 'Sydney', 2008);
  const date = Date.parse(`${day}T00:00:00Z`);
  const year = new Date(date).getUTCFullYear();
  const summer = date < nthSunday(year, 4, 1) || date >= nthSunday(year, 10, 1);
  return isoAt(date + ((hour - (summer ? 11 : 10)) * 60 + minute) * MS_PER_MINUTE);
}
