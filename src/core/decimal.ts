/**
 * Exact decimal arithmetic for rates and amounts. Every value is an exact rational of two BigInts;
 * nothing ever passes through a binary float. Each output value is rounded exactly once,
 * half-to-even, at the end.
 *
 * Written by hand rather than with a big-decimal library: the service needs exact division
 * (cross rates are quotients of published decimals, and a decimal library would round the
 * quotient at some working precision before the final rounding), and the whole surface is
 * four operations and two rounding rules. The property tests compare it with decimal.js.
 */

/** An exact rational number; `den` is always positive. Not necessarily in lowest terms. */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

const UNSIGNED_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export const ZERO: Rational = { num: 0n, den: 1n };
export const ONE: Rational = { num: 1n, den: 1n };

const POW10: bigint[] = [];
export function pow10(n: number): bigint {
  if (n < 0) throw new RangeError('negative power of ten');
  let p = POW10[n];
  if (p === undefined) {
    p = 10n ** BigInt(n);
    if (n < 64) POW10[n] = p;
  }
  return p;
}

/** Parses a plain non-negative decimal (`12`, `0.5`, `1.1900`); null for anything else. */
export function parseDecimal(text: string): Rational | null {
  const m = UNSIGNED_DECIMAL.exec(text);
  if (!m) return null;
  const fraction = m[2] ?? '';
  return { num: BigInt(m[1]! + fraction), den: pow10(fraction.length) };
}

/** Significant decimal digits every binary64 number keeps: any decimal with at most this many comes back exactly. */
const EXACT_DIGITS = 15;

/**
 * A non-negative number a client sent as a JSON number, as the plain decimal it wrote, when that
 * is certain: a decimal of at most 15 significant digits (or a safe integer) is the shortest text
 * of its binary64 value, which is what String gives. Undefined for anything else: JSON parsing
 * may already have changed a longer one, and an exponent is no plain decimal.
 */
export function decimalOfNumber(value: number): string | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  const text = String(value);
  if (!UNSIGNED_DECIMAL.test(text)) return undefined;
  return Number.isSafeInteger(value) || text.replace('.', '').replace(/^0+/, '').length <= EXACT_DIGITS ? text : undefined;
}

/**
 * A stored rate: a plain decimal (units of the quote per one unit of the base), or `1/` and a plain
 * decimal, the reciprocal of a number published the other way round (units of the base per one
 * unit of the quote, as most national central banks publish), kept as published so that nothing
 * is rounded before the one rounding of an answer. Null for anything else and for `1/0`.
 */
export function parseRate(text: string): Rational | null {
  if (!text.startsWith('1/')) return parseDecimal(text);
  const published = parseDecimal(text.slice(2));
  return published === null || published.num === 0n ? null : { num: published.den, den: published.num };
}

export function fromInteger(value: bigint | number): Rational {
  return { num: BigInt(value), den: 1n };
}

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function reduce(num: bigint, den: bigint): Rational {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

export function multiply(a: Rational, b: Rational): Rational {
  return reduce(a.num * b.num, a.den * b.den);
}

export function divide(a: Rational, b: Rational): Rational {
  if (b.num === 0n) throw new RangeError('division by zero');
  return reduce(a.num * b.den, a.den * b.num);
}

/**
 * a / b without reducing to lowest terms: for a value that is rounded right away (a rate), the
 * greatest-common-divisor step costs more than everything else.
 */
export function divideUnreduced(a: Rational, b: Rational): Rational {
  if (b.num === 0n) throw new RangeError('division by zero');
  return b.num < 0n ? { num: -a.num * b.den, den: a.den * -b.num } : { num: a.num * b.den, den: a.den * b.num };
}

export function multiplyUnreduced(a: Rational, b: Rational): Rational {
  return { num: a.num * b.num, den: a.den * b.den };
}

export function add(a: Rational, b: Rational): Rational {
  return reduce(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function subtract(a: Rational, b: Rational): Rational {
  return reduce(a.num * b.den - b.num * a.den, a.den * b.den);
}

export function compare(a: Rational, b: Rational): number {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function isPositive(a: Rational): boolean {
  return a.num > 0n;
}

/** `num / den` rounded half-to-even to an integer (den > 0). */
function divideHalfEven(num: bigint, den: bigint): bigint {
  const negative = num < 0n;
  const n = negative ? -num : num;
  let q = n / den;
  const twiceRemainder = (n % den) * 2n;
  if (twiceRemainder > den || (twiceRemainder === den && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

/** Writes `units × 10^-scale` as a decimal with exactly `scale` decimals. */
function formatScaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return negative ? `-${digits}` : digits;
}

function stripTrailingZeros(text: string): string {
  if (!text.includes('.')) return text;
  return text.replace(/\.?0+$/, '');
}

/** Rounds half-to-even to `scale` decimals and writes exactly that many (`112.50`, `16336`). */
export function roundToScale(value: Rational, scale: number): string {
  const units = divideHalfEven(value.num * pow10(scale), value.den);
  const text = formatScaled(units, scale);
  return text.startsWith('-') && /^-[0.]+$/.test(text) ? text.slice(1) : text;
}

/**
 * Rounds half-to-even to `digits` significant digits and removes trailing zeros
 * (`1.1252`, `192.70975`, `0.000060477238`, `12345679000`).
 */
export function roundSignificant(value: Rational, digits = 8): string {
  if (value.num === 0n) return '0';
  const negative = value.num < 0n;
  const num = negative ? -value.num : value.num;
  const den = value.den;
  // Choose the scale k so that num × 10^k / den has exactly `digits` integer digits.
  let k = digits - (num.toString().length - den.toString().length);
  const lower = pow10(digits - 1);
  for (;;) {
    const scaled = k >= 0 ? (num * pow10(k)) / den : num / (den * pow10(-k));
    if (scaled < lower) k += 1;
    else if (scaled >= lower * 10n) k -= 1;
    else break;
  }
  let units = k >= 0 ? divideHalfEven(num * pow10(k), den) : divideHalfEven(num, den * pow10(-k));
  let text: string;
  if (k >= 0) {
    text = stripTrailingZeros(formatScaled(units, k));
  } else {
    units *= pow10(-k);
    text = units.toString();
  }
  return negative ? `-${text}` : text;
}

/** The decimal text of a rational that is known to be a finite decimal with at most `maxScale` decimals. */
export function toPlainString(value: Rational, maxScale = 40): string {
  return stripTrailingZeros(roundToScale(value, maxScale));
}

/**
 * The exact plain decimal of a rational (`1/8` → `0.125`, `1/1.25` → `0.8`), or null when it has
 * none (`1/3`): for a published number that must be inverted or scaled without any rounding.
 */
export function exactDecimal(value: Rational): string | null {
  const { num, den } = reduce(value.num, value.den);
  let rest = den;
  let twos = 0;
  let fives = 0;
  while (rest % 2n === 0n) {
    rest /= 2n;
    twos += 1;
  }
  while (rest % 5n === 0n) {
    rest /= 5n;
    fives += 1;
  }
  if (rest !== 1n) return null;
  return toPlainString({ num, den }, Math.max(twos, fives));
}

/** Removes redundant leading zeros from a plain decimal (`007.50` → `7.50`, `000` → `0`). */
export function stripLeadingZeros(text: string): string {
  return text.replace(/^0+(?=\d)/, '');
}

/**
 * A plain non-negative decimal with its point moved `places` to the right (to the left when
 * negative), every written digit kept, trailing zeros included: `1.2`, -5 → `0.000012`;
 * `1.50`, 1 → `15.0`; `12.5`, -2 → `0.125`; `5`, 3 → `5000`. For published numbers written with an
 * exponent or per 10, 100, 1,000 units, whose digits must come through unchanged. Null for text
 * that is not a plain decimal.
 */
export function movePoint(text: string, places: number): string | null {
  const m = UNSIGNED_DECIMAL.exec(text);
  if (!m || !Number.isSafeInteger(places)) return null;
  const digits = m[1]! + (m[2] ?? '');
  const point = m[1]!.length + places;
  let whole: string;
  let decimals: string;
  if (point <= 0) {
    whole = '0';
    decimals = '0'.repeat(-point) + digits;
  } else if (point >= digits.length) {
    whole = digits + '0'.repeat(point - digits.length);
    decimals = '';
  } else {
    whole = digits.slice(0, point);
    decimals = digits.slice(point);
  }
  whole = stripLeadingZeros(whole);
  return decimals === '' ? whole : `${whole}.${decimals}`;
}

/** Mean of a non-empty list of rationals, exact. */
export function mean(values: readonly Rational[]): Rational {
  if (values.length === 0) throw new RangeError('mean of no values');
  // Decimal inputs share a denominator (the largest power of ten among them): sum over it in one
  // pass of integer additions instead of reducing a fraction at every step.
  let common = 1n;
  for (const v of values) if (v.den > common) common = v.den;
  let sum = 0n;
  for (const v of values) {
    if (common % v.den !== 0n) {
      let exact: Rational = ZERO;
      for (const w of values) exact = add(exact, w);
      return divide(exact, fromInteger(values.length));
    }
    sum += v.num * (common / v.den);
  }
  return reduce(sum, common * BigInt(values.length));
}

/**
 * A plain non-negative decimal as an integer count of 10^-scale: `1.0812` is 10812 at scale 4.
 * Only values whose integer fits a double exactly (at most 15 digits) and whose scale is at most
 * 22 (10^scale is then an exact double) have one; for them the functions below work in a
 * double's exact integer range, tens of times faster than BigInt, and give the same results.
 */
export interface SmallDecimal {
  units: number;
  scale: number;
}

const SMALL_POW10 = Array.from({ length: 23 }, (_, n) => 10 ** n);
const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** Parses a plain non-negative decimal into a SmallDecimal; undefined when it is not one (or not a decimal). */
export function parseSmallDecimal(text: string): SmallDecimal | undefined {
  const length = text.length;
  if (length === 0 || length > 40) return undefined;
  let units = 0;
  let digits = 0;
  let scale = -1;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */) {
      if (scale !== -1 || i === 0 || i === length - 1) return undefined;
      scale = 0;
      continue;
    }
    if (c < 48 || c > 57) return undefined;
    units = units * 10 + (c - 48);
    if (units > 0) digits += 1;
    if (scale !== -1) scale += 1;
  }
  if (scale === -1) scale = 0;
  return digits <= 15 && scale <= 22 ? { units, scale } : undefined;
}

/** Decimal texts as SmallDecimals in two arrays: NaN units where a text is not one. */
export function parseSmallDecimals(texts: readonly string[]): { units: Float64Array; scales: Int8Array } {
  const units = new Float64Array(texts.length);
  const scales = new Int8Array(texts.length);
  texts.forEach((text, i) => {
    const value = parseSmallDecimal(text);
    units[i] = value ? value.units : Number.NaN;
    scales[i] = value ? value.scale : 0;
  });
  return { units, scales };
}

/**
 * The text roundSignificant writes for units × 10^-scale (units a positive integer), trailing
 * zeros removed: `formatSmall(10812, 4)` is `1.0812`, `formatSmall(123, -2)` is `12300`.
 */
export function formatSmall(units: number, scale: number): string {
  while (scale > 0 && units % 10 === 0) {
    units /= 10;
    scale -= 1;
  }
  const digits = String(units);
  if (scale <= 0) return scale === 0 ? digits : digits + '0'.repeat(-scale);
  const point = digits.length - scale;
  return point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`;
}

/**
 * a / b (each units × 10^-scale) rounded half-to-even to `digits` (≤ 9) significant digits, the
 * value roundSignificant gives, written into `out`; false when an intermediate value would leave
 * a double's exact integer range, where the caller uses roundSignificant(divide(…)) instead.
 * Every step is exact integer arithmetic: the quotient's floor is corrected by its remainder,
 * which then decides the rounding.
 */
export function quotientSignificant(aUnits: number, aScale: number, bUnits: number, bScale: number, digits: number, out: SmallDecimal): boolean {
  const n = aUnits;
  const d = bUnits;
  // Also false for NaN, which marks a value that is not a SmallDecimal.
  if (!(n > 0 && d > 0) || digits > 9) return false;
  const lower = SMALL_POW10[digits - 1]!;
  const upper = lower * 10;
  // value = n / d × 10^e; find m with lower ≤ n × 10^m / d < upper, starting from an estimate.
  const e = bScale - aScale;
  let m = digits - 1 - Math.floor(Math.log10(n / d));
  for (let tries = 0; tries < 4; tries++) {
    if (m > 22 || m < -22) return false;
    const x = m >= 0 ? n * SMALL_POW10[m]! : n;
    const y = m >= 0 ? d : d * SMALL_POW10[-m]!;
    // q × y ≤ x + y must be exact for the remainder to be. Past that range, the estimate may have
    // been one too high (log10 of a quotient just under a power of ten): try one lower.
    if (x + y > MAX_EXACT) {
      m -= 1;
      continue;
    }
    let q = Math.floor(x / y);
    let r = x - q * y;
    if (r < 0) {
      q -= 1;
      r += y;
    } else if (r >= y) {
      q += 1;
      r -= y;
    }
    if (q < lower) {
      m += 1;
      continue;
    }
    if (q >= upper) {
      m -= 1;
      continue;
    }
    const twice = 2 * r;
    if (twice > y || (twice === y && q % 2 === 1)) q += 1;
    out.units = q;
    out.scale = m - e;
    return true;
  }
  return false;
}

/**
 * The indexes of the greatest and the least of `count` SmallDecimals (the last one winning ties)
 * and their exact mean; undefined when one is not a SmallDecimal (NaN units) or a sum would
 * leave a double's exact integer range. Values are ordered as doubles: units / 10^scale is
 * correctly rounded, and decimals of at most 15 digits that differ are more than a double's
 * precision apart, so the order is the decimals'. The mean sums the units of each scale as exact
 * integers and joins the sums with BigInt once.
 */
export function summarize(
  units: ArrayLike<number>,
  scales: ArrayLike<number>,
  count: number,
): { greatest: number; least: number; mean: Rational } | undefined {
  if (count === 0) return undefined;
  const sums = new Array<number>(SMALL_POW10.length).fill(0);
  let greatest = 0;
  let least = 0;
  let high = -Infinity;
  let low = Infinity;
  let maxScale = 0;
  for (let i = 0; i < count; i++) {
    const u = units[i]!;
    const scale = scales[i]!;
    if (!(u >= 0 && u < 1e15) || scale < 0 || scale >= SMALL_POW10.length) return undefined;
    const sum = sums[scale]! + u;
    if (sum > MAX_EXACT) return undefined;
    sums[scale] = sum;
    if (scale > maxScale) maxScale = scale;
    const approx = u / SMALL_POW10[scale]!;
    if (approx >= high) {
      high = approx;
      greatest = i;
    }
    if (approx <= low) {
      low = approx;
      least = i;
    }
  }
  let total = 0n;
  for (let scale = 0; scale <= maxScale; scale++) if (sums[scale]! > 0) total += BigInt(sums[scale]!) * pow10(maxScale - scale);
  return { greatest, least, mean: reduce(total, pow10(maxScale) * BigInt(count)) };
}
