/** What tells the time: the system's, or a fixed or replayed one (EXRATES_NOW). */
export interface Clock {
  now(): Date;
}

/** A calendar date, `YYYY-MM-DD`. */
export type Day = string;

const MS_PER_DAY = 86_400_000;

/** The value of an ASCII digit, or -1. */
function digit(text: string, at: number): number {
  const code = text.charCodeAt(at) - 0x30;
  return code >= 0 && code <= 9 ? code : -1;
}

/**
 * A calendar date `YYYY-MM-DD` (years 0100 to 9999) as days since 1970-01-01; undefined for
 * anything else, such as 2026-02-30. Read character by character, so that checking a date a
 * request names makes no string, match or Date.
 */
export function dayNumber(value: string): number | undefined {
  if (value.length !== 10 || value.charCodeAt(4) !== 0x2d || value.charCodeAt(7) !== 0x2d) return undefined;
  let year = 0;
  for (let i = 0; i < 4; i++) {
    const d = digit(value, i);
    if (d < 0) return undefined;
    year = year * 10 + d;
  }
  const m1 = digit(value, 5);
  const m2 = digit(value, 6);
  const d1 = digit(value, 8);
  const d2 = digit(value, 9);
  if (m1 < 0 || m2 < 0 || d1 < 0 || d2 < 0) return undefined;
  const month = m1 * 10 + m2;
  const day = d1 * 10 + d2;
  // Date.UTC reads years 0–99 as 1900–1999: such dates are not taken.
  if (year < 100 || month < 1 || month > 12 || day < 1) return undefined;
  const ms = Date.UTC(year, month - 1, day);
  // A day past the month's last rolls over into the next month.
  return ms < Date.UTC(year, month, 1) ? ms / MS_PER_DAY : undefined;
}

export function isDay(value: string): value is Day {
  return dayNumber(value) !== undefined;
}

/**
 * A clock reading `currentMs`, which hands out one Date per millisecond: a request reads the time
 * several times (key cache, quota, live rates, Cache-Control), and a Date made at each reading
 * showed in a rate answer's CPU (measured with `npm run bench`; docs/performance.md). The Date is
 * shared, so it is never changed by its readers.
 */
function millisecondClock(currentMs: () => number): Clock {
  let lastMs = Number.NaN;
  let last = new Date(0);
  return {
    now: () => {
      const ms = currentMs();
      if (ms !== lastMs) {
        lastMs = ms;
        last = new Date(ms);
      }
      return last;
    },
  };
}

/** The machine's clock. */
export function systemClock(): Clock {
  return millisecondClock(Date.now);
}

/**
 * A clock that reads `start` now and then advances in real time (EXRATES_NOW): a service replaying
 * archived data still sees days end, quotas reset and keys made one after the other.
 */
export function clockStartingAt(start: Date, realNow: () => number = Date.now): Clock {
  const offset = start.getTime() - realNow();
  return millisecondClock(() => realNow() + offset);
}

/** A clock that always reads the same instant: for tests that need time to stand still. */
export function frozenClock(at: Date): Clock {
  const ms = at.getTime();
  return { now: () => new Date(ms) };
}

/** Today's number (dayNumber) at an instant, UTC. */
export function utcDayNumber(instant: Date): number {
  return Math.floor(instant.getTime() / MS_PER_DAY);
}

/** The UTC calendar date of an instant. */
export function utcDay(instant: Date): Day {
  return instant.toISOString().slice(0, 10);
}

export function addDays(day: Day, days: number): Day {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return utcDay(d);
}

/**
 * Counts back whole calendar months from a day, clamping to the end of the target month
 * (2026-03-31 minus 1 month is 2026-02-28).
 */
export function subtractMonths(day: Day, months: number): Day {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const totalMonths = y * 12 + (m - 1) - months;
  const ty = Math.floor(totalMonths / 12);
  const tm = totalMonths - ty * 12;
  const lastDay = new Date(Date.UTC(ty, tm + 1, 0)).getUTCDate();
  return utcDay(new Date(Date.UTC(ty, tm, Math.min(d, lastDay))));
}

/** The start of the next UTC day after an instant, as Unix seconds. */
export function nextUtcMidnightSeconds(instant: Date): number {
  return Math.floor(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate() + 1) / 1000);
}

/** 01:00 UTC on the last Sunday of a month (0-based), in ms: when Europe's clocks change. */
function lastSundayAtOneUtc(year: number, month: number): number {
  const last = new Date(Date.UTC(year, month + 1, 0, 1));
  return last.getTime() - last.getUTCDay() * 86_400_000;
}

/** Frankfurt's offset from UTC in hours at an instant (ms): 2 in summer time (CEST), else 1 (CET). */
function frankfurtOffsetHours(instant: number): 1 | 2 {
  const year = new Date(instant).getUTCFullYear();
  return instant >= lastSundayAtOneUtc(year, 2) && instant < lastSundayAtOneUtc(year, 9) ? 2 : 1;
}

/**
 * The instant of a wall-clock time in Frankfurt, written in UTC. Summer time there runs from
 * 01:00 UTC on the last Sunday of March to 01:00 UTC on the last Sunday of October: the EU's rule
 * (Directive 2000/84/EC), which Germany has kept since 1996, before the first ECB reference day
 * (1999-01-04). The rule is written here rather than read from Intl.DateTimeFormat: a first
 * DateTimeFormat maps megabytes of ICU's locale data into the process for its whole life, for
 * one question the rule answers. A test holds it to Intl for every day from 1996 to 2045.
 */
export function frankfurtTime(day: Day, hour: number): string {
  if (!isDay(day) || day < '1996-01-01') throw new RangeError(`no Frankfurt time rule for ${day}: summer time follows the EU rule from 1996`);
  const guess = Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
  // Frankfurt is UTC+1 or UTC+2: try both offsets and keep the one the rule gives at that instant.
  for (const offsetHours of [1, 2] as const) {
    const candidate = guess - offsetHours * 3_600_000;
    if (frankfurtOffsetHours(candidate) === offsetHours) return new Date(candidate).toISOString().replace('.000Z', 'Z');
  }
  /* c8 ignore next */
  throw new Error(`no Frankfurt time ${hour}:00 on ${day}`);
}

/** ECB reference rates apply at 16:00 Frankfurt time on their reference date. */
export function ecbReferenceTime(day: Day): string {
  return frankfurtTime(day, 16);
}
