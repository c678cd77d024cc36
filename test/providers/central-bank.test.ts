import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { FeedError } from '../../src/core/errors.js';
import { columns, invertExactly, perUnit, publishedRate, readCsv } from '../../src/providers/central-bank.js';

const Precise = Decimal.clone({ precision: 200 });

const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

describe('perUnit', () => {
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
    for (const [rate, exponent, expected] of cases) assert.equal(perUnit(rate, exponent), expected, `${rate} per 10^${exponent}`);
  });

  it('equals the exact quotient for any plain decimal and unit', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^(0|[1-9]\d{0,6})(\.\d{1,6})?$/), fc.integer({ min: 0, max: 6 }), (rate, exponent) => {
        const result = perUnit(rate, exponent);
        assert.match(result, /^(0|[1-9]\d*)(\.\d+)?$/);
        assert.ok(new Decimal(result).equals(new Decimal(rate).div(new Decimal(10).pow(exponent))), `${rate} / 10^${exponent} = ${result}`);
      }),
    );
  });

  it('refuses a unit that is not a power of ten up to 10^9', () => {
    for (const exponent of [-1, 1.5, 10]) assert.throws(() => perUnit('1.5', exponent), RangeError);
    assert.throws(() => perUnit('1,5', 2), RangeError);
  });
});

describe('invertExactly', () => {
  it('turns a quotation when its inverse is a finite decimal', () => {
    assert.equal(invertExactly('0.8'), '1.25');
    assert.equal(invertExactly('0.0005'), '2000');
    assert.equal(invertExactly('1.25'), '0.8');
    assert.equal(invertExactly('1'), '1');
    assert.equal(invertExactly('0.16'), '6.25');
    assert.equal(invertExactly('1.3706'), null);
    assert.equal(invertExactly('3'), null);
    assert.equal(invertExactly('0'), null);
    assert.equal(invertExactly('abc'), null);
  });

  it('agrees with decimal.js on whether the inverse is finite, and on its value', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9]\d{0,5}(\.\d{1,5})?$/), (rate) => {
        const result = invertExactly(rate);
        // A finite inverse of these inputs has at most about 40 digits; any other fills the 200.
        const quotient = new Precise(1).div(rate);
        const finite = quotient.sd() < 100;
        if (result === null) assert.ok(!finite, `${rate} has the finite inverse ${quotient.toFixed()}`);
        else assert.equal(result, quotient.toFixed(), rate);
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
