import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { FeedError } from '../../src/core/errors.js';
import type { Clock, DayRange, RateDocument } from '../../src/core/ports.js';
import { columns, commaDecimalRate, dayByDayProvider, perCurrencySeries, publishedRate, readCsv, readXml, spannedSeries, untilToday, xmlText, yearsOf } from '../../src/providers/central-bank.js';
import { perUnit } from '../../src/providers/paced.js';

const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

describe('perUnit of a per-10^n quotation', () => {
  const power = (exponent: number): string => String(10 ** exponent);

  it('moves the decimal point and keeps every published digit', () => {
    const cases: Array<[string, number, string]> = [
      ['1.971', 2, '0.01971'],
      ['149.20', 2, '1.4920'],
      ['1233.16', 2, '12.3316'],
      ['0.0003', 1, '0.00003'],
      ['45.625', 2, '0.45625'],
      ['100', 2, '1.00'],
      ['12345', 3, '12.345'],
      ['7', 0, '7'],
      ['2.857', 2, '0.02857'],
    ];
    for (const [rate, exponent, expected] of cases) assert.equal(perUnit(rate, power(exponent), 'Feed', 'x'), expected, `${rate} per 10^${exponent}`);
  });

  it('equals the exact quotient for any plain decimal and unit', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^(0|[1-9]\d{0,6})(\.\d{1,6})?$/), fc.integer({ min: 0, max: 9 }), (rate, exponent) => {
        const result = perUnit(rate, power(exponent), 'Feed', 'x');
        assert.match(result, /^(0|[1-9]\d*)(\.\d+)?$/);
        assert.ok(new Decimal(result).equals(new Decimal(rate).div(new Decimal(10).pow(exponent))), `${rate} / 10^${exponent} = ${result}`);
      }),
    );
  });
});

describe('publishedRate', () => {
  it('keeps a positive plain decimal and names where a bad one stood', () => {
    assert.equal(publishedRate('0.008590', 'Feed', 'JPY'), '0.008590');
    assert.throws(() => publishedRate('1,37', 'Feed', 'USD on 2026-03-18'), feedError(/^Feed: USD on 2026-03-18: "1,37" is not a plain decimal$/));
    for (const bad of ['', ' 1', '1e3', '-1', '+1', '.5', 'NaN']) assert.throws(() => publishedRate(bad, 'Feed', 'x'), feedError(/not a plain decimal/), bad);
    assert.throws(() => publishedRate('0.000', 'Feed', 'x'), feedError(/zero/));
  });
});

describe('readCsv', () => {
  it('reads LF and CRLF files with or without a final line end, and a BOM', () => {
    for (const text of ['A,B\n1,2\n3,4\n', 'A,B\r\n1,2\r\n3,4', '\uFEFFA,B\n1,2\n3,4']) {
      assert.deepEqual(readCsv(text, 'Feed'), {
        header: ['A', 'B'],
        rows: [
          { line: 2, fields: ['1', '2'] },
          { line: 3, fields: ['3', '4'] },
        ],
      });
    }
    assert.deepEqual(readCsv('A;B\n1;2\n', 'Feed', ';').rows[0]!.fields, ['1', '2']);
  });

  it('refuses what is not this plain layout', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['  \n', /empty/],
      ['<!DOCTYPE html><html></html>', /HTML or XML page/],
      ['A,B\n"1",2\n', /quotes a field/],
      ['A,B\n1,2\n\n3,4\n', /line 3 has 1 fields, the header has 2/],
      ['A,B\n1,2,3\n', /line 2 has 3 fields/],
    ];
    for (const [text, pattern] of cases) assert.throws(() => readCsv(text, 'Feed'), feedError(pattern), JSON.stringify(text));
  });

  it('finds named columns once each', () => {
    assert.deepEqual(columns(['X', 'A', 'B'], ['B', 'A'], 'Feed'), { B: 2, A: 1 });
    assert.throws(() => columns(['A'], ['B'], 'Feed'), feedError(/no B column/));
    assert.throws(() => columns(['A', 'A'], ['A'], 'Feed'), feedError(/names A twice/));
  });
});

describe('the series of a bank that answers ranges', () => {
  const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
  /** A bank that quotes X on every day of the span it is asked for, and one day either side (days a series must drop). */
  function bank(): { asked: DayRange[]; fetchSpan: (span: DayRange) => Promise<RateDocument> } {
    const asked: DayRange[] = [];
    const fetchSpan = async (span: DayRange): Promise<RateDocument> => {
      asked.push(span);
      const days = [];
      for (let t = Date.parse(span.from) - 86_400_000; t <= Date.parse(span.to) + 86_400_000; t += 86_400_000) {
        const day = new Date(t).toISOString().slice(0, 10);
        days.push({ day, asOf: `${day}T00:00:00Z`, rates: { XXX: '1' } });
      }
      return { provider: 'b', base: 'EUR', days };
    };
    return { asked, fetchSpan };
  }

  it('cuts a range into spans of at most spanDays days and keeps the days inside them', async () => {
    const { asked, fetchSpan } = bank();
    const series = spannedSeries({ id: 'b', base: 'EUR', spanDays: 10, paceMs: 0 }, fetchSpan);
    const document = await series({ from: '2026-01-01', to: '2026-01-25' });
    assert.deepEqual(asked, [
      { from: '2026-01-01', to: '2026-01-10' },
      { from: '2026-01-11', to: '2026-01-20' },
      { from: '2026-01-21', to: '2026-01-25' },
    ]);
    assert.equal(document.days.length, 25);
    assert.equal(document.days[0]!.day, '2026-01-01');
    assert.equal(document.days.at(-1)!.day, '2026-01-25');
  });

  it('asks for no day after today when told to, and for nothing when the range lies ahead', async () => {
    const { asked, fetchSpan } = bank();
    const series = spannedSeries({ id: 'b', base: 'EUR', spans: yearsOf, upToToday: clockAt('2026-03-06T23:30:00Z'), paceMs: 0 }, fetchSpan);
    const document = await series({ from: '2025-12-30', to: '2026-04-01' });
    assert.deepEqual(asked, [
      { from: '2025-12-30', to: '2025-12-31' },
      { from: '2026-01-01', to: '2026-03-06' },
    ]);
    assert.equal(document.days.at(-1)!.day, '2026-03-06');
    assert.deepEqual((await series({ from: '2026-03-07', to: '2026-03-09' })).days, []);
    assert.equal(asked.length, 2);
    await assert.rejects(series({ from: '2026-03-02', to: '2026-03-01' }), RangeError);
  });

  it('untilToday and yearsOf', () => {
    const clock = clockAt('2026-03-06T12:00:00Z');
    assert.deepEqual(untilToday({ from: '2026-03-01', to: '2026-03-10' }, clock), { from: '2026-03-01', to: '2026-03-06' });
    assert.deepEqual(untilToday({ from: '2026-03-01', to: '2026-03-05' }, clock), { from: '2026-03-01', to: '2026-03-05' });
    assert.equal(untilToday({ from: '2026-03-07', to: '2026-03-10' }, clock), undefined);
    assert.deepEqual(yearsOf({ from: '2026-02-03', to: '2026-02-04' }), [{ from: '2026-02-03', to: '2026-02-04' }]);
    assert.deepEqual(yearsOf({ from: '2024-06-01', to: '2026-01-01' }), [
      { from: '2024-06-01', to: '2024-12-31' },
      { from: '2025-01-01', to: '2025-12-31' },
      { from: '2026-01-01', to: '2026-01-01' },
    ]);
  });
});

describe('commaDecimalRate and readXml', () => {
  it('reads a decimal comma, and an exponent as the Bank of Russia writes its smallest figures, into plain decimals', () => {
    assert.equal(commaDecimalRate('53,8359', 'F', 'x'), '53.8359');
    assert.equal(commaDecimalRate('100', 'F', 'x'), '100');
    assert.equal(commaDecimalRate('5,39256E-05', 'F', 'x'), '0.0000539256');
    assert.equal(commaDecimalRate('1,5e2', 'F', 'x'), '150');
    for (const bad of ['53.8359', '1,2,3', '-1,5', '', ' 1,5', '1,5E+99999', '1 000,5']) assert.throws(() => commaDecimalRate(bad, 'F', 'x'), feedError(/F: x: .* is not a decimal with a comma/), bad);
    assert.throws(() => commaDecimalRate('0,000', 'F', 'x'), feedError(/the rate is zero/));
  });

  it('keeps attributes and texts as written, repeated elements as lists, and refuses cut-off XML and HTML pages', () => {
    const root = readXml('<?xml version="1.0"?><a:R xmlns:a="urn:x" Date="01.02.2026"><V> 1,50</V><V>2</V></a:R>', 'F', ['V'])['R'] as Record<string, unknown>;
    assert.equal(xmlText(root, '@_Date', 'F', 'R'), '01.02.2026');
    assert.deepEqual(root['V'], [' 1,50', '2']);
    assert.throws(() => xmlText(root, 'W', 'F', 'R'), feedError(/F: R: <W> is missing/));
    assert.throws(() => readXml('<R><V>1</V>', 'F', []), feedError(/not well-formed/));
    assert.throws(() => readXml('<!DOCTYPE html><html><body>busy</body></html>', 'F', []), feedError(/HTML page/));
    assert.throws(() => readXml('  ', 'F', []), feedError(/the XML is empty/));
  });
});

describe('the series of banks answering a currency, or a day, at a time', () => {
  const clock: Clock = { now: () => new Date('2026-03-11T12:00:00Z') };
  const day = (d: string, rates: Record<string, string>): RateDocument => ({ provider: 'x', base: 'XXX', days: [{ day: d, asOf: `${d}T00:00:00Z`, rates }] });

  it('perCurrencySeries: the currency list once, then each currency span by span, gathered into days', async () => {
    const asked: string[] = [];
    const series = perCurrencySeries<string>({
      id: 'x',
      base: 'XXX',
      feed: 'X feed',
      spanDays: 5,
      upToToday: clock,
      paceMs: 0,
      currencies: async () => {
        asked.push('list');
        return ['AAA', 'BBB'];
      },
      fetchCurrencySpan: async (code, span) => {
        asked.push(`${code} ${span.from}..${span.to}`);
        // Answers a day outside the span too: it is not kept.
        return { provider: 'x', base: 'XXX', days: [day(span.from, { [code]: '1/2' }).days[0]!, day('2026-01-01', { [code]: '1/3' }).days[0]!] };
      },
      describe: (code) => code,
    });
    const document = await series({ from: '2026-03-02', to: '2026-03-20' });
    assert.deepEqual(asked, ['list', 'AAA 2026-03-02..2026-03-06', 'BBB 2026-03-02..2026-03-06', 'AAA 2026-03-07..2026-03-11', 'BBB 2026-03-07..2026-03-11']);
    assert.deepEqual(document.days.map((d) => [d.day, d.rates]), [['2026-03-02', { AAA: '1/2', BBB: '1/2' }], ['2026-03-07', { AAA: '1/2', BBB: '1/2' }]]);
    assert.deepEqual(await series({ from: '2026-04-01', to: '2026-04-02' }), { provider: 'x', base: 'XXX', days: [] });
    await assert.rejects(series({ from: '2026-03-05', to: '2026-03-01' }), RangeError);
  });

  it('dayByDayProvider: latest goes back a day at a time; series asks each day (weekdays when told) and keeps only the day asked', async () => {
    const asked: string[] = [];
    const provider = (skipWeekends: boolean) =>
      dayByDayProvider({
        id: 'x',
        base: 'XXX',
        feed: 'X feed',
        clock,
        lookbackDays: 2,
        skipWeekends,
        paceMs: 0,
        // Publishes on 9 March only; any later day answers the 9th's rates, dated the 9th.
        fetchDay: async (d) => {
          asked.push(d);
          return d >= '2026-03-09' ? day('2026-03-09', { AAA: '1/2' }) : { provider: 'x', base: 'XXX', days: [] };
        },
      });
    assert.deepEqual((await provider(false).latest()).days.map((d) => d.day), ['2026-03-09']);
    assert.deepEqual(asked.splice(0), ['2026-03-11']);
    const document = await provider(true).series({ from: '2026-03-06', to: '2026-03-20' });
    assert.deepEqual(asked.splice(0), ['2026-03-06', '2026-03-09', '2026-03-10', '2026-03-11']);
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-09']);
    await provider(false).series({ from: '2026-03-06', to: '2026-03-09' });
    assert.deepEqual(asked.splice(0), ['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09']);
    const none = dayByDayProvider({ id: 'x', base: 'XXX', feed: 'X feed', clock, lookbackDays: 2, paceMs: 0, fetchDay: async () => ({ provider: 'x', base: 'XXX', days: [] }) });
    await assert.rejects(none.latest(), feedError(/X feed: nothing published in the 3 days to 2026-03-11/));
  });
});
