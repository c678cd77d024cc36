/**
 * Formatting: decimal strings stay strings. Every number shown comes from the API as a decimal
 * string and is shown as that string (grouped for reading); days and times are shown in UTC.
 */
import type { Group } from './types.js';

const numberParts = new Intl.NumberFormat().formatToParts(12345.6);
const GROUP = numberParts.find((p) => p.type === 'group')?.value ?? ',';
const DECIMAL = numberParts.find((p) => p.type === 'decimal')?.value ?? '.';

export function formatDecimal(text: string): string {
  const [whole = '', fraction] = text.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, GROUP);
  return fraction === undefined ? grouped : `${grouped}${DECIMAL}${fraction}`;
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
export const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
export const shortDayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
const weekdayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
export const formatDay = (day: string): string => dayFormat.format(new Date(`${day}T00:00:00Z`));
const formatWeekday = (day: string): string => weekdayFormat.format(new Date(`${day}T00:00:00Z`));
export const formatAsOf = (asOf: string): string => `${dateTimeFormat.format(new Date(asOf))} UTC`;

/** A history point's date as its period: the day, the week (dated its Monday) or the month. */
export function formatPeriod(day: string, group: Group): string {
  if (group === 'month') return monthFormat.format(new Date(`${day}T00:00:00Z`));
  if (group === 'week') return `week of ${formatDay(day)}`;
  return formatDay(day);
}

/** The day a rate belongs to: its fixing time's UTC date (ECB's 16:00 Frankfurt is 15:00 or 14:00 UTC the same day). */
export const dayOf = (asOf: string): string => asOf.slice(0, 10);

export function formatPct(value: number): string {
  const sign = value > 0 ? '+' : value < 0 ? '−' : '';
  return `${sign}${formatDecimal(Math.abs(value).toFixed(2))} %`;
}

/** "3 days", "1 month": a count and its word, grouped for reading. */
export const unit = (n: number, word: string): string => `${formatDecimal(String(n))} ${word}${n === 1 ? '' : 's'}`;

/** A sentence for a rate asked on one day and published on an earlier one; '' when they are the same day. */
export function earlierDayNote(requested: string, asOf: string): string {
  const day = dayOf(asOf);
  if (!requested || day === requested) return '';
  return `No rate was published on ${formatWeekday(requested)} (a weekend or holiday): this is the rate of ${formatWeekday(day)}, the latest day before it.`;
}
