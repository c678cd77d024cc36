/**
 * Reading JSON feeds without losing published digits. JSON feeds are written by float serializers
 * that switch to exponent notation for small or large values (`6.0477238e-05`), and reading them
 * through `Number` would replace the published digits with the nearest binary float. Numbers are
 * therefore kept as their literal text and turned into plain decimals by moving the decimal point
 * only: every published digit is kept, trailing zeros included.
 */
import { parse } from 'lossless-json';
import { movePoint, parseDecimal, roundSignificant } from '../core/decimal.js';
import { FeedError } from '../core/errors.js';
import { isDay, type Day } from '../core/time.js';

// RFC 8259 §6: no leading zeros, no bare point, no `+` on the number itself.
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Float serializers never write an exponent beyond about ±324; a larger one is no exchange rate,
 * and expanding it would let a feed choose how much memory one value takes.
 */
const MAX_EXPONENT = 1_000n;

/**
 * The exact plain decimal (`1.2e-5` → `0.000012`, `1E+3` → `1000`, `12.50` → `12.50`) of a
 * non-negative JSON number; null for a negative number, for text that is not a JSON number and
 * for an exponent beyond ±1000.
 */
export function plainDecimalFromNumberText(text: string): string | null {
  const match = JSON_NUMBER.exec(text);
  if (!match || match[1] === '-') return null;
  const integer = match[2]!;
  const fraction = match[3] ?? '';
  const exponentText = match[4];
  if (exponentText === undefined) return text;

  const exponent = BigInt(exponentText);
  if (exponent > MAX_EXPONENT || exponent < -MAX_EXPONENT) return null;

  return movePoint(fraction === '' ? integer : `${integer}.${fraction}`, Number(exponent));
}

/** A number from a JSON feed, as the literal text it was written with. */
export class JsonNumber {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/**
 * Parses a JSON feed body with every number kept as a {@link JsonNumber}; objects are plain
 * records with their own keys only (a `__proto__` key stays data). `feed` names the source in
 * messages. An empty body, an HTML error page, invalid or cut-off JSON and a repeated key with
 * different values all become a FeedError.
 */
export function parseJsonKeepingNumbers(text: string, feed: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const start = body.trimStart();
  if (start === '') throw new FeedError(`${feed}: the body is empty`);
  // Proxies and captive portals answer 200 with a page; name that instead of a syntax error at position 0.
  if (start.startsWith('<')) {
    throw new FeedError(`${feed}: got an HTML or XML page instead of JSON: ${JSON.stringify(start.slice(0, 60))}`);
  }
  try {
    return parse(body, null, (numberText) => new JsonNumber(numberText));
  } catch (error) {
    throw new FeedError(`${feed}: invalid or truncated JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** A short description of a parsed JSON value for error messages. */
export function describeJsonValue(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof JsonNumber) return `the number ${value.text.slice(0, 40)}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : String(value);
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

/**
 * The exact plain decimal of a JSON value that must be a positive number; null for zero, a
 * negative number, a string, null or anything else.
 */
export function positiveDecimal(value: unknown): string | null {
  if (!(value instanceof JsonNumber)) return null;
  const plain = plainDecimalFromNumberText(value.text);
  return plain !== null && /[1-9]/.test(plain) ? plain : null;
}

/**
 * Significant digits every binary64 value keeps (DBL_DIG): a decimal of at most this many, written
 * as a double and printed back with 17 digits, rounds back to itself at this many.
 */
const FLOAT_EXACT_DIGITS = 15;

/**
 * The positive decimal a float serializer meant, for feeds that print every double with 17
 * significant digits (`4.2199999999999998` for the bank's 4.2200): the literal rounded to 15
 * significant digits, trailing zeros dropped (`4.22`), exactly, since no decimal of 15 digits or
 * fewer has another as near. A literal of 15 digits or fewer is returned as `positiveDecimal` reads
 * it; null for what it refuses.
 */
export function floatPrintedDecimal(value: unknown): string | null {
  const plain = positiveDecimal(value);
  if (plain === null) return null;
  const digits = plain.replace('.', '').replace(/^0+/, '').length;
  return digits <= FLOAT_EXACT_DIGITS ? plain : roundSignificant(parseDecimal(plain)!, FLOAT_EXACT_DIGITS);
}

/** A date as JSON APIs write one: midnight of the day, in UTC (`Z`) or with no zone. */
const MIDNIGHT = /^(\d{4}-\d{2}-\d{2})T00:00:00(?:\.000)?Z?$/;

/** The day of a JSON date at midnight (`2026-03-27T00:00:00`, `2026-02-28T00:00:00.000Z`), or a FeedError naming where it stood. */
export function midnightDay(value: unknown, feed: string, where: string): Day {
  const day = typeof value === 'string' ? MIDNIGHT.exec(value)?.[1] : undefined;
  if (day === undefined || !isDay(day)) throw new FeedError(`${feed}: ${where} is ${describeJsonValue(value)}, not a day at midnight`);
  return day;
}
