import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { parse } from 'lossless-json';
import { floatPrintedDecimal, JsonNumber, plainDecimalFromNumberText } from '../../src/providers/json-number.js';

const PLAIN = /^(0|[1-9]\d*)(\.\d+)?$/;

/** decimal.js writes the value without trailing fractional zeros; do the same to compare text. */
function withoutTrailingZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

describe('plainDecimalFromNumberText', () => {
  it('keeps plain numbers exactly as written', () => {
    for (const text of ['0', '5', '1234.5', '0.00012', '12.50', '1711.0', '0.0', '100', '3.672538']) {
      assert.equal(plainDecimalFromNumberText(text), text);
    }
  });

  it('moves the decimal point of exponent forms without losing digits', () => {
    const cases: [string, string][] = [
      ['1.2e-5', '0.000012'],
      ['6.0477238e-05', '0.000060477238'],
      ['6.0477238e-5', '0.000060477238'],
      ['1E+3', '1000'],
      ['1e3', '1000'],
      ['5e0', '5'],
      ['5E-0', '5'],
      ['1.5e+2', '150'],
      ['1.250e1', '12.50'],
      ['1.20e-5', '0.0000120'],
      ['0.5e1', '5'],
      ['0.05e1', '0.5'],
      ['0e5', '0'],
      ['0.0e-2', '0.000'],
      ['123.456e-1', '12.3456'],
      ['123.456e-3', '0.123456'],
      ['123.456e-4', '0.0123456'],
      ['9.99999999999999999999e20', '999999999999999999999'],
      ['1e0000000000000000000002', '100'],
    ];
    for (const [text, expected] of cases) {
      assert.equal(plainDecimalFromNumberText(text), expected, text);
    }
  });

  it('refuses negatives', () => {
    for (const text of ['-1.5', '-0', '-0.0', '-1e-5', '-3']) {
      assert.equal(plainDecimalFromNumberText(text), null, text);
    }
  });

  it('refuses text that is not a JSON number', () => {
    for (const text of [
      '', ' 1', '1 ', '+1', '01', '00.5', '.5', '5.', '1e', '1e+', 'e5', '1.5.2', '0x10', 'NaN', 'Infinity',
      '1,5', '1_000', '"1.5"', 'null', '1.5e-5x', '١٢', '1e5\n',
    ]) {
      assert.equal(plainDecimalFromNumberText(text), null, JSON.stringify(text));
    }
  });

  it('refuses exponents no serializer writes rather than expanding them', () => {
    assert.equal(plainDecimalFromNumberText('1e1001'), null);
    assert.equal(plainDecimalFromNumberText('1e-1001'), null);
    assert.equal(plainDecimalFromNumberText('1e999999999999'), null);
    assert.equal(plainDecimalFromNumberText('1e1000'), `1${'0'.repeat(1000)}`);
    assert.equal(plainDecimalFromNumberText('1e-1000'), `0.${'0'.repeat(999)}1`);
  });

  it('converts what lossless-json hands over for a number', () => {
    const parsed = parse('[1634.52, 6.0477238e-05, 1E+3, 12.50]') as { value: string }[];
    assert.deepEqual(
      parsed.map((n) => plainDecimalFromNumberText(n.value)),
      ['1634.52', '0.000060477238', '1000', '12.50'],
    );
  });
});

describe('plainDecimalFromNumberText properties', () => {
  const digitsArb = (min: number, max: number) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));
  const integerArb = fc.oneof(
    fc.constant('0'),
    fc.tuple(fc.integer({ min: 1, max: 9 }), digitsArb(0, 25)).map(([first, rest]) => `${first}${rest}`),
  );
  const exponentArb = fc
    .tuple(
      fc.constantFrom('e', 'E'),
      fc.constantFrom('', '+', '-'),
      fc.constantFrom('', '0', '00'),
      fc.integer({ min: 0, max: 400 }),
    )
    .map(([e, sign, zeros, value]) => `${e}${sign}${zeros}${value}`);
  const numberTextArb = fc
    .tuple(integerArb, fc.option(digitsArb(1, 25), { nil: undefined }), fc.option(exponentArb, { nil: undefined }))
    .map(([integer, fraction, exponent]) => `${integer}${fraction === undefined ? '' : `.${fraction}`}${exponent ?? ''}`);

  it('equals decimal.js on random mantissa and exponent text', () => {
    fc.assert(
      fc.property(numberTextArb, (text) => {
        const plain = plainDecimalFromNumberText(text);
        assert.ok(plain !== null, text);
        assert.match(plain, PLAIN);
        const reference = new Decimal(text);
        assert.ok(new Decimal(plain).eq(reference), `${text} → ${plain}`);
        assert.equal(withoutTrailingZeros(plain), reference.toFixed(), text);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps every mantissa digit: no digit is dropped or rounded', () => {
    fc.assert(
      fc.property(numberTextArb, (text) => {
        const plain = plainDecimalFromNumberText(text)!;
        const mantissa = text.split(/[eE]/)[0]!.replace('.', '').replace(/^0+/, '');
        assert.ok(plain.replace('.', '').replace(/^0+/, '').startsWith(mantissa), `${text} → ${plain}`);
      }),
    );
  });

  it('returns text without an exponent unchanged', () => {
    fc.assert(
      fc.property(integerArb, fc.option(digitsArb(1, 30), { nil: undefined }), (integer, fraction) => {
        const text = fraction === undefined ? integer : `${integer}.${fraction}`;
        assert.equal(plainDecimalFromNumberText(text), text);
      }),
    );
  });

  it('refuses every negative number', () => {
    fc.assert(fc.property(numberTextArb, (text) => assert.equal(plainDecimalFromNumberText(`-${text}`), null)));
  });

  it('accepts only JSON numbers among arbitrary strings', () => {
    const alphabet = fc.constantFrom(...'0123456789.eE+- x'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 12 }).map((c) => c.join('')), (text) => {
        const plain = plainDecimalFromNumberText(text);
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const exponent = /[eE]([+-]?\d+)$/.exec(text)?.[1];
        const isJsonNumber = typeof json === 'number' && text.trim() === text && !text.startsWith('-');
        if (!isJsonNumber || (exponent !== undefined && Math.abs(Number(exponent)) > 1000)) {
          assert.equal(plain, null, JSON.stringify(text));
          return;
        }
        assert.ok(plain !== null, JSON.stringify(text));
        assert.ok(new Decimal(plain).eq(new Decimal(text)));
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('floatPrintedDecimal', () => {
  it('reads a double printed with 17 digits as the short decimal it stands for, and a short literal as written', () => {
    assert.equal(floatPrintedDecimal(new JsonNumber('4.2199999999999998')), '4.22');
    assert.equal(floatPrintedDecimal(new JsonNumber('0.18759999999999999')), '0.1876');
    assert.equal(floatPrintedDecimal(new JsonNumber('104.76819999999999')), '104.7682');
    assert.equal(floatPrintedDecimal(new JsonNumber('4.2244')), '4.2244');
    assert.equal(floatPrintedDecimal(new JsonNumber('3.9300')), '3.9300');
    for (const bad of [new JsonNumber('0'), new JsonNumber('-4.22'), '4.22', null]) assert.equal(floatPrintedDecimal(bad), null);
  });

  it('recovers every decimal of up to 15 significant digits from its double printed with 17 (decimal.js as the reference)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999_999n }), fc.integer({ min: 0, max: 12 }), (digits, scale) => {
        const written = new Decimal(digits.toString()).div(new Decimal(10).pow(scale));
        const printed = Number(written.toString()).toPrecision(17);
        const read = floatPrintedDecimal(new JsonNumber(printed.includes('e') ? new Decimal(printed).toFixed() : printed));
        assert.ok(read !== null && new Decimal(read).eq(written), `${written.toString()} printed ${printed}, read ${String(read)}`);
      }),
      { numRuns: 2000 },
    );
  });
});
