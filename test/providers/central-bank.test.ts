import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { FeedError } from '../../src/core/errors.js';
import { columns, publishedRate, readCsv } from '../../src/providers/central-bank.js';
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
