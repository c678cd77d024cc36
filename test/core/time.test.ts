import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addDays, clockStartingAt, dayNumber, ecbReferenceTime, frankfurtTime, frozenClock, isDay, systemClock } from '../../src/core/time.js';

/** The instant of a Frankfurt wall-clock time as ICU's time-zone database gives it (the oracle). */
const berlin = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/Berlin',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
});
function viaIntl(day: string, hour: number): string | undefined {
  const guess = Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
  for (const offsetHours of [1, 2]) {
    const candidate = new Date(guess - offsetHours * 3_600_000);
    const parts = Object.fromEntries(berlin.formatToParts(candidate).map((p) => [p.type, p.value]));
    if (`${parts.year}-${parts.month}-${parts.day}` === day && Number(parts.hour) === hour) return candidate.toISOString().replace('.000Z', 'Z');
  }
  return undefined;
}

describe('Frankfurt wall-clock times', () => {
  test('16:00 agrees with the IANA time-zone database for every day from 1996 to 2045', () => {
    let days = 0;
    for (let day = '1996-01-01'; day <= '2045-12-31'; day = addDays(day, 1), days++) {
      assert.equal(ecbReferenceTime(day), viaIntl(day, 16), day);
    }
    assert.equal(days, 18_263);
  });

  test('every hour of the days the clocks change agrees too: the missing hour is an error, the repeated one is read as the later', () => {
    for (let year = 1996; year <= 2045; year++) {
      for (const month of [3, 10]) {
        const last = new Date(Date.UTC(year, month, 0));
        const sunday = addDays(last.toISOString().slice(0, 10), -last.getUTCDay());
        for (let hour = 0; hour < 24; hour++) {
          const expected = viaIntl(sunday, hour);
          if (expected === undefined) assert.throws(() => frankfurtTime(sunday, hour), /no Frankfurt time/, `${sunday} ${hour}:00`);
          else assert.equal(frankfurtTime(sunday, hour), expected, `${sunday} ${hour}:00`);
        }
      }
    }
  });

  test('known instants: winter, summer, and the days the clocks change', () => {
    assert.equal(ecbReferenceTime('2025-01-03'), '2025-01-03T15:00:00Z');
    assert.equal(ecbReferenceTime('2025-07-01'), '2025-07-01T14:00:00Z');
    assert.equal(ecbReferenceTime('2025-03-30'), '2025-03-30T14:00:00Z');
    assert.equal(ecbReferenceTime('2025-10-26'), '2025-10-26T15:00:00Z');
    assert.equal(frankfurtTime('2025-03-30', 1), '2025-03-30T00:00:00Z');
    assert.throws(() => frankfurtTime('2025-03-30', 2), /no Frankfurt time 2:00 on 2025-03-30/);
    assert.equal(frankfurtTime('2025-10-26', 2), '2025-10-26T01:00:00Z');
  });

  test('a day before the rule, or not a day, is refused', () => {
    assert.throws(() => ecbReferenceTime('1995-12-31'), RangeError);
    assert.throws(() => ecbReferenceTime('2025-02-30'), RangeError);
  });
});

describe('calendar dates (dayNumber, isDay)', () => {
  test('every day of 0100–0101, 1800–2200 and 9998–9999 is one, numbered as Date numbers it, and ISO writes it', () => {
    let days = 0;
    for (const [first, last] of [[100, 101], [1800, 2200], [9998, 9999]] as const) {
      for (let ms = Date.UTC(first, 0, 1); ms <= Date.UTC(last, 11, 31); ms += 86_400_000, days++) {
        const day = new Date(ms).toISOString().slice(0, 10);
        assert.equal(dayNumber(day), ms / 86_400_000, day);
      }
    }
    assert.equal(days, 730 + 146_462 + 730);
  });

  test('what is not a calendar date YYYY-MM-DD is none', () => {
    const refused = ['2026-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '2026-01-32', '0099-12-31', '0000-01-01'];
    refused.push('2026-1-01', '2026/01/01', ' 2026-01-01', '2026-01-01 ', '２０２６-01-01', '2026-01-01T00:00:00Z', '', 'abcd-ef-gh', '+02026-01-01');
    for (const text of refused) {
      assert.equal(dayNumber(text), undefined, text);
      assert.equal(isDay(text), false, text);
    }
    assert.equal(isDay('2024-02-29'), true);
    assert.equal(isDay('2000-02-29'), true);
  });
});

describe('clocks', () => {
  test('a clock started at an instant reads it, then advances as real time does', () => {
    let real = Date.parse('2030-01-01T00:00:00Z');
    const clock = clockStartingAt(new Date('2026-03-06T23:59:59Z'), () => real);
    assert.equal(clock.now().toISOString(), '2026-03-06T23:59:59.000Z');
    real += 1500;
    assert.equal(clock.now().toISOString(), '2026-03-07T00:00:00.500Z');
    real += 86_400_000;
    assert.equal(clock.now().toISOString(), '2026-03-08T00:00:00.500Z');
  });

  test('the machine clock reads the current millisecond, one Date per millisecond', () => {
    const clock = systemClock();
    const before = Date.now();
    const first = clock.now();
    assert.ok(first.getTime() >= before && first.getTime() <= Date.now());
    let later = clock.now();
    while (later === first) later = clock.now();
    assert.ok(later.getTime() > first.getTime(), 'a new millisecond is a new Date, later than the last');
    let real = 1_000;
    const started = clockStartingAt(new Date('2026-03-06T00:00:00Z'), () => real);
    assert.equal(started.now(), started.now(), 'the same millisecond, the same Date');
    real += 1;
    assert.equal(started.now().toISOString(), '2026-03-06T00:00:00.001Z');
  });

  test('a frozen clock reads the same instant however long it is read', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-28T09:00:00Z') });
    const clock = frozenClock(new Date('2026-03-06T12:00:00Z'));
    const first = clock.now();
    first.setUTCFullYear(1999);
    // A day of the machine's time passes.
    t.mock.timers.tick(86_400_000);
    assert.equal(clock.now().toISOString(), '2026-03-06T12:00:00.000Z');
  });
});
