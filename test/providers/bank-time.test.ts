import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { centralEuropeanTime, jerusalemTime, londonTime, sydneyTime, torontoTime } from '../../src/providers/bank-time.js';

/** The UTC instant of a wall-clock time in a zone, by Intl: the independent reference. */
function byIntl(day: string, hour: number, minute: number, timeZone: string): string {
  const format = new Intl.DateTimeFormat('en-GB', { timeZone, hour12: false, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
  const wall = Date.parse(`${day}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`);
  // Two passes of "how far is the zone's wall clock from UTC here" settle on the instant.
  let instant = wall;
  for (let i = 0; i < 2; i++) {
    const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
    const shown = Date.parse(`${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:00Z`);
    instant += wall - shown;
  }
  return new Date(instant).toISOString().replace('.000Z', 'Z');
}

function everyDay(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

describe('bank publication times', () => {
  it('match Intl for every day of the years the rules cover', () => {
    const zones: Array<[string, (day: string, h: number, m: number) => string, string, number, number]> = [
      ['Europe/Oslo', centralEuropeanTime, '1996-01-01', 16, 0],
      ['Europe/Stockholm', centralEuropeanTime, '1996-01-01', 12, 10],
      ['Europe/London', londonTime, '1996-01-01', 16, 0],
      ['America/Toronto', torontoTime, '2007-01-01', 16, 30],
      ['Asia/Jerusalem', jerusalemTime, '2013-01-01', 15, 30],
      ['Asia/Jerusalem', jerusalemTime, '2013-01-01', 12, 30],
      ['Australia/Sydney', sydneyTime, '2008-01-01', 16, 0],
    ];
    for (const [zone, rule, from, hour, minute] of zones) {
      for (const day of everyDay(from, '2040-12-31')) assert.equal(rule(day, hour, minute), byIntl(day, hour, minute, zone), `${zone} ${day}`);
    }
  });

  it('refuse days before their rule and times a date alone cannot place', () => {
    assert.throws(() => torontoTime('2006-12-29', 16, 30), /since 2007/);
    assert.throws(() => jerusalemTime('2012-12-31', 15, 30), /since 2013/);
    assert.throws(() => sydneyTime('2007-12-31', 16), /since 2008/);
    assert.throws(() => londonTime('2026-03-29', 1, 30), /afternoon time/);
    assert.throws(() => centralEuropeanTime('2026-02-30', 16), /no Central European time rule/);
  });
});
