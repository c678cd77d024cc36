/**
 * Tests for src/core/decimal.ts.
 *
 * Two independent references are used for every property:
 *  1. decimal.js (a separate big-decimal implementation) with 200 significant digits and
 *     ROUND_HALF_EVEN, formatted with `toFixed` (never exponent notation);
 *  2. an exact BigInt oracle written here (`assertRoundedToScale` / `assertRoundedSignificant`)
 *     that checks the defining inequality of half-to-even rounding directly on the exact rational
 *     built from the input strings: |x − r| ≤ ulp/2, and at exactly ulp/2 the kept digit is even.
 *
 * Why the 200-digit decimal.js quotient can be trusted for a second, coarser rounding
 * (double rounding). Rounding to 200 digits is monotone and every tie point M of the coarse grid
 * (n ≤ 20 significant digits, or `scale` ≤ 12 decimals) is itself a number of at most 200
 * significant digits, so the double rounding can only go wrong if the 200-digit result lands
 * exactly on M while x ≠ M. Every x in these tests is p/q with q < 10^80 (inputs have ≤ 35
 * decimals and ≤ 31 integer digits; means divide by ≤ 12), and M = m / 10^s. If x ≠ M then
 * |x − M| ≥ 1 / (q·10^s).
 *  - n significant digits: x has decimal exponent e, M's last digit sits at 10^(e−n), so
 *    s = n − e and |x − M| ≥ 10^(e−n) / q, while the 200-digit rounding error is at most
 *    ½·10^(e−199). Landing on M would need q ≥ 2·10^(199−n) ≥ 2·10^179, which never happens here.
 *  - `scale` ≤ 12 decimals: s ≤ 13 and |x − M| ≥ 10^−13 / q > 10^−93, while the rounding error
 *    is at most ½·10^(e−199) with e ≤ 80 for every value generated here (≤ ½·10^−119).
 * So decimal.js gives the correctly rounded answer here; the exact oracle checks the same thing
 * without relying on that argument.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';

import {
  ONE,
  ZERO,
  add,
  compare,
  decimalOfNumber,
  divide,
  exactDecimal,
  formatSmall,
  fromInteger,
  isPositive,
  mean,
  movePoint,
  multiply,
  parseDecimal,
  parseRate,
  parseSmallDecimal,
  pow10,
  quotientSignificant,
  roundSignificant,
  roundToScale,
  stripLeadingZeros,
  subtract,
  summarize,
  toPlainString,
  type Rational,
  type SmallDecimal,
} from '../../src/core/decimal.js';

const D = Decimal.clone({
  precision: 200,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});
type Dec = InstanceType<typeof D>;

// ---------------------------------------------------------------------------------------------
// Test-side helpers (deliberately not using anything from decimal.ts)

/** Parses a plain decimal string (optionally negative) into p / q, q = 10^decimals. */
interface Exact {
  readonly p: bigint;
  readonly q: bigint;
}
function exactOf(text: string): Exact {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a plain decimal: ${text}`);
  const frac = m[3] ?? '';
  const magnitude = BigInt(m[2]! + frac);
  return { p: m[1] === '-' ? -magnitude : magnitude, q: 10n ** BigInt(frac.length) };
}

/** Writes `units × 10^-scale` in plain notation (scale may be negative). */
function plain(units: bigint, scale: number): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  let text: string;
  if (scale <= 0) {
    text = (abs * 10n ** BigInt(-scale)).toString();
  } else {
    const padded = abs.toString().padStart(scale + 1, '0');
    text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  }
  return negative ? `-${text}` : text;
}

function r(text: string): Rational {
  const negative = text.startsWith('-');
  const parsed = parseDecimal(negative ? text.slice(1) : text);
  assert.ok(parsed, `parseDecimal(${JSON.stringify(text)}) should succeed`);
  return negative ? { num: -parsed.num, den: parsed.den } : parsed;
}

/** 10^e ≤ p/q (p, q > 0)? */
function atLeastPow10(p: bigint, q: bigint, e: number): boolean {
  return e >= 0 ? p >= q * 10n ** BigInt(e) : p * 10n ** BigInt(-e) >= q;
}

/** The decimal exponent e with 10^e ≤ p/q < 10^(e+1) (p, q > 0). */
function decimalExponent(p: bigint, q: bigint): number {
  let e = p.toString().length - q.toString().length;
  while (!atLeastPow10(p, q, e)) e -= 1;
  while (atLeastPow10(p, q, e + 1)) e += 1;
  return e;
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

/**
 * Exact oracle: `out` is x = p/q rounded half-to-even to an integer multiple k of ulp = un/ud.
 * Checks |x/ulp − k| ≤ ½ and k even at exactly ½.
 */
function assertHalfEven(x: Exact, k: bigint, un: bigint, ud: bigint, what: string): void {
  // x/ulp − k = (p·ud − k·q·un) / (q·un)
  const diff = abs(x.p * ud - k * x.q * un) * 2n;
  const bound = x.q * un;
  assert.ok(diff <= bound, `${what}: not within half an ulp`);
  if (diff === bound) assert.equal(abs(k) % 2n, 0n, `${what}: tie not rounded to even`);
}

/** Exact oracle for roundToScale. */
function assertRoundedToScale(x: Exact, scale: number, out: string): void {
  const shape = scale === 0 ? /^-?(?:0|[1-9]\d*)$/ : new RegExp(`^-?(?:0|[1-9]\\d*)\\.\\d{${scale}}$`);
  assert.match(out, shape, `roundToScale output shape (scale ${scale})`);
  assert.doesNotMatch(out, /^-[0.]+$/, 'negative zero must be written without a sign');
  const k = BigInt(out.replace('.', ''));
  assertHalfEven(x, k, 1n, 10n ** BigInt(scale), `roundToScale(${x.p}/${x.q}, ${scale}) = ${out}`);
}

/** Exact oracle for roundSignificant. */
function assertRoundedSignificant(x: Exact, digits: number, out: string): void {
  const what = `roundSignificant(${x.p}/${x.q}, ${digits}) = ${out}`;
  if (x.p === 0n) {
    assert.equal(out, '0', what);
    return;
  }
  assert.match(out, /^-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/, `${what}: plain, no trailing zeros`);
  assert.equal(out.startsWith('-'), x.p < 0n, `${what}: sign`);
  const significand = out.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  assert.ok(significand.length >= 1 && significand.length <= digits, `${what}: too many digits`);
  const e = decimalExponent(abs(x.p), x.q);
  const ulpExp = e - digits + 1;
  const [un, ud] = ulpExp >= 0 ? [10n ** BigInt(ulpExp), 1n] : [1n, 10n ** BigInt(-ulpExp)];
  const rv = exactOf(out);
  // k = out / ulp must be an integer
  const kNum = rv.p * ud;
  const kDen = rv.q * un;
  assert.equal(kNum % kDen, 0n, `${what}: not a multiple of the ulp`);
  assertHalfEven(x, kNum / kDen, un, ud, what);
}

/** decimal.js reference formatting. */
function refSignificant(x: Dec, digits: number): string {
  const text = x.toSignificantDigits(digits, D.ROUND_HALF_EVEN).toFixed();
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
function refScale(x: Dec, scale: number): string {
  const text = x.toFixed(scale, D.ROUND_HALF_EVEN);
  return /^-[0.]+$/.test(text) ? text.slice(1) : text;
}
function dec(text: string): Dec {
  return new D(text);
}

// ---------------------------------------------------------------------------------------------
// Generators (all values are built from digit strings, never from floats)

const digit = fc.oneof(
  { arbitrary: fc.constantFrom(...'0123456789'), weight: 3 },
  { arbitrary: fc.constantFrom('0', '5', '9'), weight: 1 },
);
const digits = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.array(digit, { minLength, maxLength }).map((a) => a.join(''));

/** Any string the amount rule accepts: `^[0-9]{1,18}(\.[0-9]{1,12})?$` (leading zeros included). */
const amountText = fc
  .tuple(digits(1, 18), fc.option(digits(1, 12), { nil: undefined }))
  .map(([i, f]) => (f === undefined ? i : `${i}.${f}`));
const positiveAmount = amountText.filter((s) => /[1-9]/.test(s));

/**
 * A positive decimal with a `maxMantissa`-digit significand and leading digit at 10^exp for exp in
 * -20..30 (so 1e-20 .. 1e31), written in plain notation, sometimes with trailing zeros.
 */
const wide = (maxMantissa: number): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom(...'123456789'),
      digits(0, maxMantissa - 1),
      fc.integer({ min: -20, max: 30 }),
      fc.nat(3),
    )
    .map(([lead, rest, exp, zeros]) => {
      const mantissa = lead + rest;
      const text = plain(BigInt(mantissa), mantissa.length - 1 - exp);
      return zeros === 0 ? text : `${text}${text.includes('.') ? '' : '.'}${'0'.repeat(zeros)}`;
    });

const rateText = wide(8);
const positiveValue = fc.oneof(wide(12), rateText, positiveAmount);
const valueOrZero = fc.oneof({ arbitrary: positiveValue, weight: 8 }, { arbitrary: fc.constantFrom('0', '0.000', '00'), weight: 1 });
const signedValue = fc
  .tuple(valueOrZero, fc.boolean())
  .map(([t, negative]) => (negative && /[1-9]/.test(t) ? `-${t}` : t));

// ---------------------------------------------------------------------------------------------
// Hand-checked examples

describe('decimalOfNumber', () => {
  it('gives back the decimal a client wrote as a JSON number, of up to 15 significant digits, exactly', () => {
    const written = fc
      .tuple(digits(1, 18), fc.option(digits(1, 12), { nil: undefined }))
      .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`))
      .filter((text) => new D(text).isZero() || new D(text).sd(false) <= 15);
    fc.assert(
      fc.property(written, (text) => {
        const decimal = decimalOfNumber(JSON.parse(text.replace(/^0+(?=\d)/, '')) as number);
        assert.ok(decimal !== undefined, text);
        assert.ok(new D(decimal).eq(new D(text)), `${text} came back as ${decimal}`);
      }),
    );
  });

  it('refuses what JSON parsing may have changed, a sign and an exponent', () => {
    assert.equal(decimalOfNumber(99.95), '99.95');
    assert.equal(decimalOfNumber(100), '100');
    assert.equal(decimalOfNumber(9007199254740991), '9007199254740991');
    // 17 significant digits: the double is not the decimal that was written.
    assert.equal(decimalOfNumber(JSON.parse('1234567890123456.7') as number), undefined);
    assert.equal(decimalOfNumber(JSON.parse('123456789012345678') as number), undefined);
    assert.equal(decimalOfNumber(-1), undefined);
    assert.equal(decimalOfNumber(1e-7), undefined);
    assert.equal(decimalOfNumber(1e21), undefined);
    assert.equal(decimalOfNumber(Number.NaN), undefined);
  });
});

describe('parseDecimal', () => {
  it('parses plain non-negative decimals exactly', () => {
    assert.deepEqual(parseDecimal('12'), { num: 12n, den: 1n });
    assert.deepEqual(parseDecimal('0.5'), { num: 5n, den: 10n });
    assert.deepEqual(parseDecimal('1.1900'), { num: 11900n, den: 10000n });
    assert.deepEqual(parseDecimal('007.50'), { num: 750n, den: 100n });
    assert.deepEqual(parseDecimal('0'), { num: 0n, den: 1n });
    assert.equal(compare(parseDecimal('1.1900')!, parseDecimal('1.19')!), 0);
    const big = parseDecimal('123456789012345678.123456789012')!;
    assert.equal(big.num, 123456789012345678123456789012n);
    assert.equal(big.den, 10n ** 12n);
  });

  it('rejects everything else', () => {
    for (const bad of [
      '', ' ', '.5', '1.', '-1', '+1', '1e5', '1E5', ' 1', '1 ', '1,5', '1.2.3', '0x10', 'NaN',
      'Infinity', '١', '１', '1_000', '.', '-0', '1.-2', '\n1',
    ]) {
      assert.equal(parseDecimal(bad), null, JSON.stringify(bad));
    }
  });
});

describe('pow10 / fromInteger / constants', () => {
  it('works', () => {
    assert.equal(pow10(0), 1n);
    assert.equal(pow10(3), 1000n);
    assert.equal(pow10(63), 10n ** 63n); // cached range
    assert.equal(pow10(63), 10n ** 63n);
    assert.equal(pow10(70), 10n ** 70n); // beyond the cache
    assert.throws(() => pow10(-1), RangeError);
    assert.equal(compare(fromInteger(3), r('3.000')), 0);
    assert.equal(compare(fromInteger(-3n), r('-3')), 0);
    assert.equal(compare(ZERO, r('0')), 0);
    assert.equal(compare(ONE, r('1.0')), 0);
    assert.equal(isPositive(r('0.0001')), true);
    assert.equal(isPositive(ZERO), false);
    assert.equal(isPositive(r('-1')), false);
  });
});

describe('multiply / divide / add / subtract / compare', () => {
  it('are exact', () => {
    assert.equal(toPlainString(add(r('0.1'), r('0.2'))), '0.3');
    assert.equal(toPlainString(subtract(r('0.1'), r('0.3'))), '-0.2');
    assert.equal(toPlainString(subtract(r('1.5'), r('1.50'))), '0');
    assert.equal(toPlainString(multiply(r('1.1'), r('1.1'))), '1.21');
    assert.equal(toPlainString(multiply(r('-2.5'), r('0.4'))), '-1');
    assert.equal(toPlainString(divide(r('1'), r('8'))), '0.125');
    assert.equal(toPlainString(divide(r('-1'), r('-8'))), '0.125');
    assert.equal(toPlainString(divide(r('1'), r('-0.08'))), '-12.5');
    assert.equal(
      toPlainString(add(r('1000000000000000000000000000000'), r('0.00000000000000000001'))),
      '1000000000000000000000000000000.00000000000000000001',
    );
    assert.equal(toPlainString(multiply(r('0.00000000000000000001'), r('1000000000000000000000000000000'))), '10000000000');
    // 1/3 + 1/3 + 1/3 is exactly 1
    const third = divide(ONE, fromInteger(3));
    assert.equal(compare(add(add(third, third), third), ONE), 0);
  });

  it('keeps the denominator positive', () => {
    for (const v of [divide(r('1'), r('-3')), divide(r('-1'), r('-3')), subtract(ZERO, r('2.5'))]) {
      assert.ok(v.den > 0n);
    }
  });

  it('throws on division by zero', () => {
    assert.throws(() => divide(ONE, ZERO), RangeError);
    assert.throws(() => divide(ONE, r('0.000')), RangeError);
  });

  it('compares', () => {
    assert.equal(compare(r('1.10'), r('1.1')), 0);
    assert.equal(compare(r('0.9'), r('1')), -1);
    assert.equal(compare(r('1'), r('0.9')), 1);
    assert.equal(compare(r('-1'), r('-0.9')), -1);
    assert.equal(compare(r('-0.9'), r('-1')), 1);
    assert.equal(compare(r('0.000000000000000000011'), r('0.00000000000000000001')), 1);
    assert.equal(compare(divide(ONE, fromInteger(3)), r('0.3333333333333333333333')), 1);
  });
});

describe('roundSignificant', () => {
  const rs = (text: string, digits = 8): string => roundSignificant(r(text), digits);

  it('removes trailing zeros and never uses exponent notation', () => {
    assert.equal(rs('1.12520000'), '1.1252');
    assert.equal(rs('192.709750'), '192.70975');
    assert.equal(rs('0.0000604772380'), '0.000060477238');
    assert.equal(rs('12345678912'), '12345679000');
    assert.equal(rs('100'), '100');
    assert.equal(rs('100.000'), '100');
    assert.equal(rs('1000000000000000000000000000000'), '1000000000000000000000000000000');
    assert.equal(rs('0.00000000000000000001'), '0.00000000000000000001');
    assert.equal(rs('0.000000000000000000012345678912'), '0.000000000000000000012345679');
    assert.equal(rs('1234567891234567891234567891234'), '1234567900000000000000000000000');
  });

  it('returns 0 for zero', () => {
    assert.equal(rs('0'), '0');
    assert.equal(rs('0.000'), '0');
    assert.equal(roundSignificant(ZERO), '0');
  });

  it('rounds ties to even, both ways', () => {
    assert.equal(rs('12345678.5'), '12345678'); // 8 is even: down
    assert.equal(rs('12345677.5'), '12345678'); // 7 is odd: up
    assert.equal(rs('0.0000604772375'), '0.000060477238'); // odd: up
    assert.equal(rs('0.0000604772385'), '0.000060477238'); // even: down
    assert.equal(rs('1.000000050'), '1'); // 1.0000000|5, 0 even: down
    assert.equal(rs('1.00000015'), '1.0000002'); // 1 odd: up
    assert.equal(rs('12345678500000000000000000000'), '12345678000000000000000000000');
    assert.equal(rs('12345679500000000000000000000'), '12345680000000000000000000000');
    assert.equal(rs('0.000000000000000000123456785'), '0.00000000000000000012345678');
    assert.equal(rs('0.000000000000000000123456795'), '0.0000000000000000001234568');
  });

  it('rounds just above / below a tie to nearest', () => {
    assert.equal(rs('12345678.50000001'), '12345679');
    assert.equal(rs('12345678.49999999'), '12345678');
    assert.equal(rs('12345677.49999999'), '12345677');
    assert.equal(rs('0.00006047723850000001'), '0.000060477239');
    assert.equal(rs('0.00006047723749999999'), '0.000060477237');
    assert.equal(rs('12345678500000000000000000001'), '12345679000000000000000000000');
    assert.equal(rs('12345678499999999999999999999'), '12345678000000000000000000000');
  });

  it('carries into a new digit', () => {
    assert.equal(rs('99999999.5'), '100000000');
    assert.equal(rs('99999998.5'), '99999998');
    assert.equal(rs('99999999.49999'), '99999999');
    assert.equal(rs('9.99999995'), '10');
    assert.equal(rs('9.99999985'), '9.9999998');
    assert.equal(rs('9.999999949'), '9.9999999');
    assert.equal(rs('0.0000999999995'), '0.0001');
    assert.equal(rs('0.00000000000000000000999999995'), '0.00000000000000000001');
    assert.equal(rs('999999995000000000000000000000'), '1000000000000000000000000000000');
    assert.equal(rs('999999994999999999999999999999'), '999999990000000000000000000000');
  });

  it('rounds exact quotients (cross rates)', () => {
    const q = (a: string, b: string): string => roundSignificant(divide(r(a), r(b)), 8);
    assert.equal(q('1', '3'), '0.33333333');
    assert.equal(q('2', '3'), '0.66666667');
    assert.equal(q('1', '7'), '0.14285714');
    assert.equal(q('100', '7'), '14.285714');
    assert.equal(q('1', '8'), '0.125');
    assert.equal(q('1.1252', '0.85'), '1.3237647'); // 1.32376470588...
    assert.equal(q('162.88', '1.1252'), '144.75649'); // 144.756487735...
    assert.equal(q('1', '16535'), '0.000060477774'); // 6.04777744179...e-5
    assert.equal(q('1', '0.00000000000000000003'), '33333333000000000000');
    // quotients landing exactly on a tie: 12345678.5 / 1 and via 24691357 / 2
    assert.equal(q('24691357', '2'), '12345678'); // 12345678.5 → even
    assert.equal(q('24691355', '2'), '12345678'); // 12345677.5 → even
    assert.equal(q('199999999', '2'), '100000000'); // 99999999.5 → carry
    assert.equal(q('1.99999999', '0.2'), '10'); // 9.99999995 → carry
  });

  it('handles negatives and other digit counts', () => {
    assert.equal(rs('-12345678.5'), '-12345678');
    assert.equal(rs('-12345677.5'), '-12345678');
    assert.equal(rs('-99999999.5'), '-100000000');
    assert.equal(rs('-0.000060477238'), '-0.000060477238');
    assert.equal(rs('0.95', 1), '1');
    assert.equal(rs('0.85', 1), '0.8');
    assert.equal(rs('245', 2), '240');
    assert.equal(rs('255', 2), '260');
    assert.equal(rs('250', 2), '250');
    assert.equal(rs('1.2345', 20), '1.2345');
    assert.equal(roundSignificant(r('123456789')), '123456790'); // default is 8 digits
  });
});

describe('roundToScale', () => {
  const rts = (text: string, scale: number): string => roundToScale(r(text), scale);
  const conv = (amount: string, rate: string, scale: number): string =>
    roundToScale(multiply(r(amount), r(rate)), scale);

  it('writes exactly `scale` decimals', () => {
    assert.equal(conv('100', '1.125', 2), '112.50'); // USD
    assert.equal(conv('100', '163.36', 0), '16336'); // JPY
    assert.equal(conv('1', '0.346', 3), '0.346'); // KWD
    assert.equal(conv('1', '1.1252', 8), '1.12520000'); // no minor units
    assert.equal(rts('5', 2), '5.00');
    assert.equal(rts('0', 2), '0.00');
    assert.equal(rts('0', 0), '0');
    assert.equal(roundToScale(ZERO, 8), '0.00000000');
    assert.equal(rts('0.00000000000000000001', 8), '0.00000000');
    assert.equal(rts('0.00000000000000000001', 20), '0.00000000000000000001');
    assert.equal(rts('1000000000000000000000000000000', 2), '1000000000000000000000000000000.00');
    assert.equal(conv('123456789012345678.123456789012', '1000000000000', 2), '123456789012345678123456789012.00');
    // (10^18 − 10^-12) × (10^8 − 1) = 99999998999999999999999999.999900000001
    assert.equal(conv('999999999999999999.999999999999', '99999999', 2), '99999999000000000000000000.00');
    assert.equal(conv('999999999999999999.999999999999', '99999999', 4), '99999998999999999999999999.9999');
    assert.equal(conv('999999999999999999.999999999999', '99999999', 8), '99999998999999999999999999.99990000');
  });

  it('rounds ties to even, both ways', () => {
    assert.equal(conv('100', '163.355', 0), '16336'); // 16335.5: odd → up
    assert.equal(conv('100', '163.365', 0), '16336'); // 16336.5: even → down
    assert.equal(rts('0.3465', 3), '0.346');
    assert.equal(rts('0.3455', 3), '0.346');
    assert.equal(rts('0.5', 0), '0');
    assert.equal(rts('1.5', 0), '2');
    assert.equal(rts('2.5', 0), '2');
    assert.equal(rts('112.505', 2), '112.50');
    assert.equal(rts('112.515', 2), '112.52');
    assert.equal(rts('1.123456785', 8), '1.12345678');
    assert.equal(rts('1.123456775', 8), '1.12345678');
    assert.equal(rts('9.995', 2), '10.00'); // carry
    assert.equal(rts('999.5', 0), '1000'); // carry
  });

  it('rounds just above / below a tie to nearest', () => {
    assert.equal(rts('0.34650001', 3), '0.347');
    assert.equal(rts('0.34549999', 3), '0.345');
    assert.equal(rts('2.5000000001', 0), '3');
    assert.equal(rts('0.4999', 0), '0');
    assert.equal(rts('1.1234567849999', 8), '1.12345678');
    assert.equal(rts('1.1234567850001', 8), '1.12345679');
  });

  it('handles negatives symmetrically and never writes negative zero', () => {
    assert.equal(rts('-0.5', 0), '0');
    assert.equal(rts('-0.4', 0), '0');
    assert.equal(rts('-1.5', 0), '-2');
    assert.equal(rts('-2.5', 0), '-2');
    assert.equal(rts('-2.6', 0), '-3');
    assert.equal(rts('-0.00004', 4), '0.0000');
    assert.equal(rts('-0.00005', 4), '0.0000');
    assert.equal(rts('-0.00015', 4), '-0.0002');
    assert.equal(rts('-0.00025', 4), '-0.0002');
    assert.equal(rts('-0.000250001', 4), '-0.0003');
    assert.equal(rts('-123.455', 2), '-123.46');
    assert.equal(rts('-123.445', 2), '-123.44');
    assert.equal(rts('-0.00000000000000000001', 8), '0.00000000');
  });

  it('computes percentage changes', () => {
    const pct = (first: string, last: string): string =>
      roundToScale(multiply(divide(subtract(r(last), r(first)), r(first)), fromInteger(100)), 4);
    assert.equal(pct('1.1000', '1.0989'), '-0.1000');
    assert.equal(pct('1.1', '1.21'), '10.0000');
    assert.equal(pct('3', '4'), '33.3333');
    assert.equal(pct('3', '2'), '-33.3333');
    assert.equal(pct('3', '5'), '66.6667');
    assert.equal(pct('3', '1'), '-66.6667');
    assert.equal(pct('3', '3.00000001'), '0.0000');
    assert.equal(pct('3', '2.99999999'), '0.0000'); // -0.000000333…: no "-0.0000"
    assert.equal(pct('8', '8.000004'), '0.0000'); // +0.00005 tie → even 0
    assert.equal(pct('8', '7.999996'), '0.0000'); // -0.00005 tie → even 0
    assert.equal(pct('8', '8.000012'), '0.0002'); // +0.00015 tie → 2
    assert.equal(pct('8', '7.999988'), '-0.0002'); // -0.00015 tie → -2
    assert.equal(pct('8', '8.000020'), '0.0002'); // +0.00025 tie → 2
    assert.equal(pct('8', '7.999980'), '-0.0002');
    assert.equal(pct('1.2345', '1.2345'), '0.0000');
    assert.equal(pct('0.00000000000000000001', '1'), '9999999999999999999900.0000');
  });
});

describe('stripLeadingZeros', () => {
  it('removes leading zeros only', () => {
    assert.equal(stripLeadingZeros('007.50'), '7.50');
    assert.equal(stripLeadingZeros('000'), '0');
    assert.equal(stripLeadingZeros('0'), '0');
    assert.equal(stripLeadingZeros('0.5'), '0.5');
    assert.equal(stripLeadingZeros('00.000'), '0.000');
    assert.equal(stripLeadingZeros('100'), '100');
    assert.equal(stripLeadingZeros('0100.0010'), '100.0010');
    assert.equal(stripLeadingZeros('1.00'), '1.00');
  });
});

describe('movePoint', () => {
  it('moves the point either way and keeps every written digit', () => {
    assert.equal(movePoint('1.2', -5), '0.000012');
    assert.equal(movePoint('1', 3), '1000');
    assert.equal(movePoint('1.50', 1), '15.0');
    assert.equal(movePoint('12.5', -2), '0.125');
    assert.equal(movePoint('100', -2), '1.00');
    assert.equal(movePoint('0.5', 1), '5');
    assert.equal(movePoint('0.5', -1), '0.05');
    assert.equal(movePoint('007.5', -1), '0.75');
    assert.equal(movePoint('0', -2), '0.00');
    assert.equal(movePoint('12.34', 0), '12.34');
  });

  it('refuses what is not a plain decimal', () => {
    for (const text of ['', '-1', '1e3', '.5', '1.', ' 1', '1,5']) assert.equal(movePoint(text, 1), null, text);
    assert.equal(movePoint('1', 0.5), null);
  });

  it('is the value times a power of ten, with the decimals the move leaves (decimal.js)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,12}(\.\d{1,12})?$/), fc.integer({ min: -30, max: 30 }), (text, places) => {
        const moved = movePoint(text, places)!;
        assert.match(moved, /^(0|[1-9]\d*)(\.\d+)?$/);
        assert.ok(new D(moved).eq(new D(text).times(new D(10).pow(places))), `${text} ${places} -> ${moved}`);
        const scale = text.split('.')[1]?.length ?? 0;
        assert.equal(moved.split('.')[1]?.length ?? 0, Math.max(0, scale - places));
      }),
    );
  });
});

describe('toPlainString', () => {
  it('writes finite decimals without trailing zeros', () => {
    assert.equal(toPlainString(r('10.50')), '10.5');
    assert.equal(toPlainString(r('100')), '100');
    assert.equal(toPlainString(r('100.000')), '100');
    assert.equal(toPlainString(r('007.50')), '7.5');
    assert.equal(toPlainString(r('-0.25')), '-0.25');
    assert.equal(toPlainString(ZERO), '0');
    assert.equal(toPlainString(r('0.000')), '0');
    const tiny = `0.${'0'.repeat(39)}1`;
    assert.equal(toPlainString(r(tiny)), tiny);
    assert.equal(toPlainString(r('1.23456'), 3), '1.235');
  });
});

describe('mean', () => {
  it('is exact', () => {
    assert.equal(toPlainString(mean([r('1'), r('2')])), '1.5');
    assert.equal(roundSignificant(mean([r('1'), r('2'), r('2')])), '1.6666667');
    assert.equal(roundSignificant(mean([r('1.1252'), r('1.1253')])), '1.12525');
    assert.equal(roundSignificant(mean([r('0.00000000000000000001'), r('0.00000000000000000003')])), '0.00000000000000000002');
    // 8th-digit tie after averaging: (12345678 + 12345679) / 2 = 12345678.5 → even
    assert.equal(roundSignificant(mean([r('12345678'), r('12345679')])), '12345678');
    assert.equal(roundSignificant(mean([r('99999999'), r('100000000')])), '100000000');
    assert.equal(roundSignificant(mean([r('5')])), '5');
  });

  it('rejects an empty list', () => {
    assert.throws(() => mean([]), RangeError);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

describe('properties', () => {
  it('roundSignificant(divide(a, b), 8) agrees with decimal.js and the exact oracle', () => {
    fc.assert(
      fc.property(fc.oneof(positiveValue, fc.constant('0')), positiveValue, (a, b) => {
        const out = roundSignificant(divide(r(a), r(b)), 8);
        assert.equal(out, refSignificant(dec(a).div(dec(b)), 8), `${a} / ${b}`);
        const ea = exactOf(a);
        const eb = exactOf(b);
        assertRoundedSignificant({ p: ea.p * eb.q, q: ea.q * eb.p }, 8, out);
      }),
      { numRuns: 20000 },
    );
  });

  it('roundSignificant of quotients on / next to an exact 8th-digit tie', () => {
    const seen = { up: 0, down: 0 };
    const arb = fc
      .tuple(
        positiveValue,
        fc.constantFrom(...'123456789'),
        digits(7, 7),
        fc.integer({ min: -20, max: 20 }),
        fc.constantFrom(-1n, 0n, 1n),
      )
      .map(([b, lead, middle, exp, nudge]) => {
        // t = lead middle 5 × 10^(exp − 8): nine significant digits ending in 5, a tie at 8 digits
        const t = BigInt(`${lead}${middle}5`);
        const eb = exactOf(b);
        const bScale = eb.q.toString().length - 1;
        let aNum = eb.p * t * 1000n;
        let aScale = bScale - (exp - 8) + 3;
        if (aScale < 0) {
          aNum *= 10n ** BigInt(-aScale);
          aScale = 0;
        }
        return { a: plain(aNum + nudge, aScale), b, t, nudge };
      });
    fc.assert(
      fc.property(arb, ({ a, b, t, nudge }) => {
        const out = roundSignificant(divide(r(a), r(b)), 8);
        assert.equal(out, refSignificant(dec(a).div(dec(b)), 8), `${a} / ${b}`);
        const ea = exactOf(a);
        const eb = exactOf(b);
        assertRoundedSignificant({ p: ea.p * eb.q, q: ea.q * eb.p }, 8, out);
        if (nudge === 0n) {
          // exact tie: the oracle above checked the kept digit is even; count both directions
          if (((t / 10n) % 10n) % 2n === 1n) seen.up += 1;
          else seen.down += 1;
        }
      }),
      { numRuns: 10000 },
    );
    assert.ok(seen.up > 100 && seen.down > 100, `ties exercised: ${JSON.stringify(seen)}`);
  });

  it('roundToScale(multiply(amount, rate), scale) for scale 0..8 agrees with decimal.js and the exact oracle', () => {
    fc.assert(
      fc.property(amountText, fc.oneof(rateText, positiveAmount), (amount, rate) => {
        const product = multiply(r(amount), r(rate));
        const exactProduct = dec(amount).times(dec(rate)); // ≤ 60 digits: exact at precision 200
        const ea = exactOf(amount);
        const er = exactOf(rate);
        const x = { p: ea.p * er.p, q: ea.q * er.q };
        for (let scale = 0; scale <= 8; scale++) {
          const out = roundToScale(product, scale);
          assert.equal(out, refScale(exactProduct, scale), `${amount} × ${rate} @ ${scale}`);
          assertRoundedToScale(x, scale, out);
        }
      }),
      { numRuns: 10000 },
    );
  });

  it('roundToScale(multiply(amount, rate), scale) on exact ties at the rounding position', () => {
    const seen = { up: 0, down: 0 };
    const arb = fc
      .tuple(
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 9 }),
        digits(1, 12),
        digits(0, 12),
        digits(1, 6),
        digits(0, 9),
        fc.constantFrom('1', '3', '5', '7', '9'),
        fc.boolean(),
      )
      .map(([scale, d1raw, aInt, aFrac, rInt, rFrac, odd, swap]) => {
        const total = scale + 1;
        const d1 = Math.min(d1raw, total, 12);
        const d2 = total - d1;
        // digit strings with exactly d1 / d2 decimals; last digits 5 and odd → product ends in 5
        let aDigits = aInt + aFrac.padEnd(d1, '7').slice(0, d1);
        let rDigits = rInt + rFrac.padEnd(d2, '3').slice(0, d2);
        aDigits = aDigits.slice(0, -1) + (swap ? odd : '5');
        rDigits = rDigits.slice(0, -1) + (swap ? '5' : odd);
        const amount = d1 === 0 ? aDigits : `${aDigits.slice(0, -d1)}.${aDigits.slice(-d1)}`;
        const rate = d2 === 0 ? rDigits : `${rDigits.slice(0, -d2)}.${rDigits.slice(-d2)}`;
        return { amount, rate, scale };
      });
    fc.assert(
      fc.property(arb, ({ amount, rate, scale }) => {
        assert.match(amount, /^[0-9]{1,18}(\.[0-9]{1,12})?$/);
        const out = roundToScale(multiply(r(amount), r(rate)), scale);
        const exact = dec(amount).times(dec(rate));
        // it really is a tie: exactly scale + 1 decimals, the last one a 5
        assert.equal(exact.decimalPlaces(), scale + 1);
        assert.ok(exact.toFixed().endsWith('5'));
        assert.equal(out, refScale(exact, scale), `${amount} × ${rate} @ ${scale}`);
        const ea = exactOf(amount);
        const er = exactOf(rate);
        assertRoundedToScale({ p: ea.p * er.p, q: ea.q * er.q }, scale, out);
        if (dec(out).greaterThan(exact)) seen.up += 1;
        else seen.down += 1;
      }),
      { numRuns: 10000 },
    );
    assert.ok(seen.up > 100 && seen.down > 100, `ties exercised: ${JSON.stringify(seen)}`);
  });

  it('roundToScale and roundSignificant of signed quotients agree with decimal.js (any digits / scale)', () => {
    fc.assert(
      fc.property(
        signedValue,
        signedValue.filter((s) => /[1-9]/.test(s)),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 20 }),
        (a, b, scale, sig) => {
          const q = divide(r(a), r(b));
          const ref = dec(a).div(dec(b));
          const ea = exactOf(a);
          const eb = exactOf(b);
          const x = eb.p < 0n ? { p: -ea.p * eb.q, q: ea.q * -eb.p } : { p: ea.p * eb.q, q: ea.q * eb.p };
          const outScale = roundToScale(q, scale);
          assert.equal(outScale, refScale(ref, scale), `${a} / ${b} @ ${scale}`);
          assertRoundedToScale(x, scale, outScale);
          const outSig = roundSignificant(q, sig);
          assert.equal(outSig, refSignificant(ref, sig), `${a} / ${b} sig ${sig}`);
          assertRoundedSignificant(x, sig, outSig);
        },
      ),
      { numRuns: 10000 },
    );
  });

  it('percentage change (last − first) / first × 100 at 4 decimals agrees with decimal.js', () => {
    const near = fc
      .tuple(rateText, fc.integer({ min: 1, max: 12 }), fc.bigInt({ min: -999n, max: 999n }))
      .map(([first, extra, delta]) => {
        const ef = exactOf(first);
        const scale = ef.q.toString().length - 1 + extra;
        const lastNum = ef.p * 10n ** BigInt(extra) + delta;
        return [first, plain(lastNum > 0n ? lastNum : 1n, scale)] as const;
      });
    const pair = fc.oneof(fc.tuple(rateText, rateText), fc.tuple(positiveValue, positiveValue), near);
    fc.assert(
      fc.property(pair, ([first, last]) => {
        const f = r(first);
        const l = r(last);
        const out = roundToScale(multiply(divide(subtract(l, f), f), fromInteger(100)), 4);
        const ref = dec(last).minus(dec(first)).div(dec(first)).times(100);
        assert.equal(out, refScale(ref, 4), `${first} → ${last}`);
        const ef = exactOf(first);
        const el = exactOf(last);
        assertRoundedToScale({ p: (el.p * ef.q - ef.p * el.q) * 100n, q: ef.p * el.q }, 4, out);
      }),
      { numRuns: 10000 },
    );
  });

  it('parseDecimal + toPlainString round trip, and stripLeadingZeros, on amount strings', () => {
    fc.assert(
      fc.property(amountText, (text) => {
        // independent canonical form: no leading zeros in the integer part, no trailing zeros
        const [intPart, fracPart = ''] = text.split('.');
        const canonicalInt = intPart!.replace(/^0+/, '') || '0';
        const canonicalFrac = fracPart.replace(/0+$/, '');
        const canonical = canonicalFrac ? `${canonicalInt}.${canonicalFrac}` : canonicalInt;
        const parsed = parseDecimal(text);
        assert.ok(parsed);
        assert.ok(parsed.den > 0n);
        assert.equal(toPlainString(parsed), canonical);
        assert.equal(toPlainString(parsed), dec(text).toFixed());
        // stripLeadingZeros keeps the fraction (and its trailing zeros) as written
        const stripped = stripLeadingZeros(text);
        assert.equal(stripped, fracPart === '' ? canonicalInt : `${canonicalInt}.${fracPart}`);
        assert.equal(compare(parseDecimal(stripped)!, parsed), 0);
        // the parsed value is the exact value of the text
        const e = exactOf(text);
        assert.equal(parsed.num * e.q, e.p * parsed.den);
      }),
      { numRuns: 10000 },
    );
  });

  it('parseDecimal accepts exactly the plain unsigned decimals', () => {
    const chars = fc.constantFrom(...'0123456789.-+eE ,_x', '١', '\n');
    const junk = fc.oneof(
      fc.array(chars, { maxLength: 12 }).map((a) => a.join('')),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
    );
    fc.assert(
      fc.property(junk, (text) => {
        const parsed = parseDecimal(text);
        assert.equal(parsed !== null, /^[0-9]+(\.[0-9]+)?$/.test(text), JSON.stringify(text));
        if (parsed) assert.equal(toPlainString(parsed), dec(text).toFixed());
      }),
      { numRuns: 10000 },
    );
  });

  it('add / subtract / multiply / compare agree with decimal.js on signed values', () => {
    fc.assert(
      fc.property(signedValue, signedValue, (a, b) => {
        const ra = r(a);
        const rb = r(b);
        const da = dec(a);
        const db = dec(b);
        // all results are finite decimals with ≤ 64 decimals and ≤ 64 digits: exact in decimal.js
        const sum = add(ra, rb);
        const diff = subtract(ra, rb);
        const prod = multiply(ra, rb);
        for (const v of [sum, diff, prod]) assert.ok(v.den > 0n);
        assert.equal(toPlainString(sum, 70), da.plus(db).toFixed().replace(/^-0$/, '0'), `${a} + ${b}`);
        assert.equal(toPlainString(diff, 70), da.minus(db).toFixed().replace(/^-0$/, '0'), `${a} - ${b}`);
        assert.equal(toPlainString(prod, 70), da.times(db).toFixed().replace(/^-0$/, '0'), `${a} × ${b}`);
        assert.equal(compare(ra, rb), da.comparedTo(db), `compare(${a}, ${b})`);
        assert.equal(compare(rb, ra), -da.comparedTo(db) || 0);
        assert.equal(compare(diff, ZERO), da.comparedTo(db));
        assert.equal(compare(add(diff, rb), ra), 0);
        assert.equal(isPositive(diff), da.greaterThan(db));
      }),
      { numRuns: 10000 },
    );
  });

  it('roundSignificant(mean(values), 8) agrees with decimal.js and the exact oracle', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(rateText, positiveValue), { minLength: 1, maxLength: 12 }), (values) => {
        const m = mean(values.map(r));
        assert.ok(m.den > 0n);
        const ref = values.reduce((acc, v) => acc.plus(dec(v)), new D(0)).div(values.length);
        const out = roundSignificant(m, 8);
        assert.equal(out, refSignificant(ref, 8), values.join(', '));
        // exact: sum over the common denominator 10^maxScale, divided by n
        const exacts = values.map(exactOf);
        const common = exacts.reduce((acc, e) => (e.q > acc ? e.q : acc), 1n);
        const p = exacts.reduce((acc, e) => acc + e.p * (common / e.q), 0n);
        assertRoundedSignificant({ p, q: common * BigInt(values.length) }, 8, out);
      }),
      { numRuns: 6000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Small decimals: the same answers in a double's exact integer range

/** A published rate: up to 7 significant digits, 0 to 6 decimals, as central banks publish them. */
const publishedRate = fc
  .tuple(fc.constantFrom(...'123456789'), digits(0, 6), fc.integer({ min: -6, max: 6 }))
  .map(([lead, rest, exp]) => plain(BigInt(lead + rest), Math.max(0, rest.length - exp)))
  .filter((t) => (t.split('.')[1] ?? '').length <= 6);

const smallOf = (text: string): SmallDecimal => {
  const value = parseSmallDecimal(text);
  assert.ok(value, `parseSmallDecimal(${text})`);
  return value;
};

describe('small decimals', () => {
  it('parseSmallDecimal gives the value of parseDecimal, up to 15 digits and 22 decimals', () => {
    fc.assert(
      fc.property(fc.oneof(positiveValue, rateText, fc.constantFrom('0', '00.0', '1.', '.5', '', '1e5', '-1', '1.2.3')), (text) => {
        const small = parseSmallDecimal(text);
        const exact = parseDecimal(text);
        if (!exact) return assert.equal(small, undefined, text);
        const significant = (text.replace('.', '').replace(/^0+/, '') || '0').length;
        const decimals = (text.split('.')[1] ?? '').length;
        assert.equal(small !== undefined, significant <= 15 && decimals <= 22, text);
        if (small) assert.equal(compare({ num: BigInt(small.units), den: pow10(small.scale) }, exact), 0, text);
      }),
      { numRuns: 5000 },
    );
  });

  it('quotientSignificant equals roundSignificant(divide(a, b)) and always answers for published rates to 8 digits', () => {
    const out: SmallDecimal = { units: 0, scale: 0 };
    fc.assert(
      fc.property(fc.oneof(publishedRate, wide(12)), fc.oneof(publishedRate, wide(12)), fc.integer({ min: 1, max: 9 }), (a, b, digits) => {
        const x = parseSmallDecimal(a);
        const y = parseSmallDecimal(b);
        fc.pre(x !== undefined && y !== undefined);
        const answered = quotientSignificant(x.units, x.scale, y.units, y.scale, digits, out);
        const exact = roundSignificant(divide(r(a), r(b)), digits);
        if (answered) assert.equal(formatSmall(out.units, out.scale), exact, `${a} / ${b} to ${digits}`);
        if (digits <= 8 && /^\d{0,8}(\.\d{0,6})?$/.test(a) && /^\d{0,8}(\.\d{0,6})?$/.test(b) && x.units < 1e7 && y.units < 1e7) assert.ok(answered, `${a} / ${b}`);
      }),
      { numRuns: 20000 },
    );
  });

  it('quotientSignificant rounds ties to even and carries into a new digit', () => {
    const out: SmallDecimal = { units: 0, scale: 0 };
    const q = (a: string, b: string, digits = 8) => {
      const x = smallOf(a);
      const y = smallOf(b);
      assert.ok(quotientSignificant(x.units, x.scale, y.units, y.scale, digits, out), `${a} / ${b}`);
      return formatSmall(out.units, out.scale);
    };
    assert.equal(q('24691357', '2'), '12345678'); // 12345678.5 → even, down
    assert.equal(q('24691355', '2'), '12345678'); // 12345677.5 → even, up
    assert.equal(q('199999999', '2'), '100000000'); // 99999999.5 → carries to a ninth digit
    assert.equal(q('1', '3'), '0.33333333');
    assert.equal(q('158.72', '1.0812'), '146.79985');
    assert.equal(q('1', '1'), '1');
    assert.equal(q('0.00001', '300000'), '0.000000000033333333');
    assert.equal(quotientSignificant(0, 0, 1, 0, 8, out), false);
    assert.equal(quotientSignificant(Number.NaN, 0, 1, 0, 8, out), false);
  });

  it('summarize finds the last greatest and least and the exact mean', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(publishedRate, rateText, fc.constantFrom('1.5', '1.50', '2')), { minLength: 1, maxLength: 40 }), (texts) => {
        const values = texts.map((t) => parseSmallDecimal(t));
        fc.pre(values.every((v) => v !== undefined));
        const summary = summarize(
          values.map((v) => v!.units),
          values.map((v) => v!.scale),
          texts.length,
        );
        assert.ok(summary, texts.join(', '));
        const exact = texts.map(r);
        let greatest = 0;
        let least = 0;
        exact.forEach((v, i) => {
          if (compare(v, exact[greatest]!) >= 0) greatest = i;
          if (compare(v, exact[least]!) <= 0) least = i;
        });
        assert.equal(summary.greatest, greatest, texts.join(', '));
        assert.equal(summary.least, least, texts.join(', '));
        assert.equal(compare(summary.mean, mean(exact)), 0, texts.join(', '));
      }),
      { numRuns: 3000 },
    );
    assert.equal(summarize([Number.NaN], [0], 1), undefined);
    assert.equal(summarize([], [], 0), undefined);
    assert.equal(summarize([5e15, 5e15], [0, 0], 2), undefined);
  });
});

describe('parseRate / exactDecimal', () => {
  it('read a plain decimal or the reciprocal of one exactly, and write a rational that has a finite decimal', () => {
    assert.deepEqual(parseRate('1.1886'), { num: 11886n, den: 10000n });
    assert.deepEqual(parseRate('1/43.2081'), { num: 10000n, den: 432081n });
    for (const bad of ['1/0', '1/0.00', '1/', '2/3', '1/-1', '1/1e3', '']) assert.equal(parseRate(bad), null, bad);
    assert.equal(exactDecimal(divide(fromInteger(1), fromInteger(8))), '0.125');
    assert.equal(exactDecimal(parseRate('1/1.25')!), '0.8');
    assert.equal(exactDecimal(parseRate('1/3')!), null);
    assert.equal(exactDecimal(parseRate('1/43.2081')!), null);
  });
});
