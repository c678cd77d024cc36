/**
 * Reference computations for the end-to-end test, written from SPEC §2, §3 and §5 and the raw
 * ECB CSV alone. Nothing here imports src/, so a shared misunderstanding cannot make both sides
 * agree by accident.
 */
import { readFileSync } from 'node:fs';
import { Decimal } from 'decimal.js';

// A private constructor, so the global decimal.js settings of other test files cannot leak in.
// 60 digits hold every exact intermediate here (18 + 12 digit amounts times 8-digit rates).
export const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 });
export type Dec = InstanceType<typeof D>;

export interface EcbTable {
  /** Currency codes in column order (EUR is the base and not a column). */
  currencies: string[];
  /** Dates ascending, each with units-per-EUR for the currencies published that day. */
  days: Array<{ date: string; values: Map<string, Dec> }>;
}

/** The ECB layout: header `Date,<codes>,`, newest row first, every line ending in a comma, `N/A` for missing. */
export function parseEcbCsv(path: string): EcbTable {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.length > 0);
  const header = lines[0]!.split(',');
  if (header[0] !== 'Date') throw new Error(`unexpected header ${lines[0]}`);
  if (header[header.length - 1] !== '') throw new Error('expected the trailing comma of the ECB layout');
  const currencies = header.slice(1, -1);
  const days: EcbTable['days'] = [];
  for (const line of lines.slice(1)) {
    const fields = line.split(',');
    if (fields.length !== header.length || fields[fields.length - 1] !== '') throw new Error(`malformed row ${line}`);
    const values = new Map<string, Dec>();
    currencies.forEach((code, i) => {
      const raw = fields[i + 1]!;
      if (raw === 'N/A') return;
      if (!/^\d+(\.\d+)?$/.test(raw)) throw new Error(`unexpected value ${raw} for ${code} in ${line}`);
      values.set(code, new D(raw));
    });
    days.push({ date: fields[0]!, values });
  }
  days.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { currencies, days };
}

/**
 * The currencies of the ECB's file replaced at a legal fixed ratio (SPEC §12), from the Council
 * Regulations and the redenomination laws: [successor, units of the old per one successor, first
 * day]. From that day the service answers them through the successor at that ratio.
 */
const REPLACED: Record<string, [string, string, string]> = {
  BGN: ['EUR', '1.95583', '2026-01-01'],
  HRK: ['EUR', '7.53450', '2023-01-01'],
  LTL: ['EUR', '3.45280', '2015-01-01'],
  LVL: ['EUR', '0.702804', '2014-01-01'],
  EEK: ['EUR', '15.6466', '2011-01-01'],
  SKK: ['EUR', '30.1260', '2009-01-01'],
  CYP: ['EUR', '0.585274', '2008-01-01'],
  MTL: ['EUR', '0.429300', '2008-01-01'],
  SIT: ['EUR', '239.640', '2007-01-01'],
  ROL: ['RON', '10000', '2005-07-01'],
  TRL: ['TRY', '1000000', '2005-01-01'],
};

/** Units of `code` per EUR on a day (a replaced currency's through its successor), or undefined when the ECB published none. */
export function perEur(day: EcbTable['days'][number], code: string): Dec | undefined {
  if (code === 'EUR') return new D(1);
  const replaced = REPLACED[code];
  if (replaced && day.date >= replaced[2]) return perEur(day, replaced[0])?.mul(replaced[1]);
  return day.values.get(code);
}

/** Plain notation without trailing zeros: "1.5", "0.000060477238", "19644". */
export function plain(value: Dec): string {
  const text = value.toFixed();
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** SPEC §3: 8 significant digits, half-to-even, trailing zeros removed, never an exponent. */
export function formatRate(value: Dec): string {
  return plain(value.toSignificantDigits(8, Decimal.ROUND_HALF_EVEN));
}

/** The exact cross rate through the EUR base, rounded once. */
export function crossRate(day: EcbTable['days'][number], from: string, to: string): string | undefined {
  if (from === to) return '1';
  const f = perEur(day, from);
  const t = perEur(day, to);
  if (!f || !t) return undefined;
  return formatRate(t.div(f));
}

/** ISO 4217 minor units of the currencies the convert checks use (from the ISO 4217 list). */
export const MINOR_UNITS: Record<string, number> = {
  EUR: 2, USD: 2, GBP: 2, CHF: 2, HUF: 2, IDR: 2, CZK: 2, PLN: 2,
  JPY: 0, KRW: 0, ISK: 0,
};

/** SPEC §3: amount × rate, half-to-even to the minor units, exactly that many decimals. */
export function convertResult(amount: string, rate: string, to: string): string {
  const digits = MINOR_UNITS[to];
  if (digits === undefined) throw new Error(`no minor units known for ${to}`);
  return new D(amount).mul(new D(rate)).toFixed(digits, Decimal.ROUND_HALF_EVEN);
}

/** "007.50" → "7.50", "000" → "0", "00.5" → "0.5". */
export function normaliseAmount(amount: string): string {
  const [int, frac] = amount.split('.');
  const trimmed = int!.replace(/^0+(?=\d)/, '');
  return frac === undefined ? trimmed : `${trimmed}.${frac}`;
}

export const RANGE_MONTHS: Record<string, number> = { '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60, '10y': 120 };

/** Today minus whole calendar months, the day clamped to the length of the target month; `max`: every day there is. */
export function rangeStart(today: string, range: string): string {
  if (range === 'max') return '0000-01-01';
  const months = RANGE_MONTHS[range];
  if (months === undefined) throw new Error(`unknown range ${range}`);
  const [y, m, d] = today.split('-').map(Number) as [number, number, number];
  const index = y * 12 + (m - 1) - months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(Math.min(d, lastDay)).padStart(2, '0')}`;
}

export interface ExpectedHistory {
  pair: string;
  range: string;
  count: number;
  points: Array<{ date: string; rate: string }>;
  stats: {
    best: string;
    bestDate: string;
    worst: string;
    worstDate: string;
    average: string;
    changePct: number;
    currentVsAveragePct: number;
  };
}

/** JSON numbers rounded half-to-even to 4 decimals; a JSON number cannot be −0. */
function pct(value: Dec): number {
  return Number(value.toFixed(4, Decimal.ROUND_HALF_EVEN)) + 0;
}

/** SPEC §3 statistics and §5 points; undefined when the range holds no point. */
export function expectedHistory(table: EcbTable, from: string, to: string, range: string, today: string): ExpectedHistory | undefined {
  const start = rangeStart(today, range);
  const points: Array<{ date: string; rate: string }> = [];
  for (const day of table.days) {
    if (day.date < start || day.date > today) continue;
    const rate = crossRate(day, from, to);
    if (rate !== undefined) points.push({ date: day.date, rate });
  }
  if (points.length === 0) return undefined;
  const values = points.map((p) => new D(p.rate));
  let best = 0;
  let worst = 0;
  values.forEach((v, i) => {
    // >= and <=: a later date wins a tie.
    if (v.gte(values[best]!)) best = i;
    if (v.lte(values[worst]!)) worst = i;
  });
  const mean = values.reduce((sum, v) => sum.add(v), new D(0)).div(values.length);
  const first = values[0]!;
  const last = values[values.length - 1]!;
  return {
    pair: `${from}${to}`,
    range,
    count: points.length,
    points,
    stats: {
      best: points[best]!.rate,
      bestDate: points[best]!.date,
      worst: points[worst]!.rate,
      worstDate: points[worst]!.date,
      average: formatRate(mean),
      changePct: pct(last.sub(first).div(first).mul(100)),
      currentVsAveragePct: pct(last.sub(mean).div(mean).mul(100)),
    },
  };
}
