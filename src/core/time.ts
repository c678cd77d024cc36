/** A calendar date, `YYYY-MM-DD`. */
export type Day = string;

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isDay(value: string): value is Day {
  const m = DAY_PATTERN.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
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

const berlinParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/Berlin',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
});

/**
 * The instant of a wall-clock time in Frankfurt, written in UTC. Node's Intl carries the IANA
 * time-zone database, so the CET/CEST offset is read from it rather than from a library.
 */
export function frankfurtTime(day: Day, hour: number): string {
  const guess = Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
  // Frankfurt is UTC+1 or UTC+2: try both offsets and keep the one whose local time matches.
  for (const offsetHours of [1, 2]) {
    const candidate = new Date(guess - offsetHours * 3_600_000);
    const parts = Object.fromEntries(berlinParts.formatToParts(candidate).map((p) => [p.type, p.value]));
    if (`${parts.year}-${parts.month}-${parts.day}` === day && Number(parts.hour) === hour) {
      return candidate.toISOString().replace('.000Z', 'Z');
    }
  }
  /* c8 ignore next */
  throw new Error(`no Frankfurt time ${hour}:00 on ${day}`);
}

/** ECB reference rates apply at 16:00 Frankfurt time on their reference date. */
export function ecbReferenceTime(day: Day): string {
  return frankfurtTime(day, 16);
}
