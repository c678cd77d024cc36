/**
 * What the bench requests. Keys and pairs rotate per request, so that the quota work is real
 * and no answer is asked for twice in a row: 1,000 keys and every ordered pair of the currencies
 * ECB publishes now.
 */
import { readFileSync } from 'node:fs';
import type { LoadRequest } from './load.js';

/** The keys and pairs the n-th request of a rotation uses. */
export interface Rotation {
  key(n: number): string;
  pair(n: number): readonly [string, string];
}

export interface Scenario {
  name: string;
  description: string;
  /** Run by default (the others only with --only). */
  standard: boolean;
  /** The bare Fastify route the service is compared with. */
  baseline?: true;
  request(n: number, rotation: Rotation): LoadRequest;
}

/** The currencies the ECB publishes on the newest day of its history (EUR included). */
export function currentCurrencies(csvPath: string): string[] {
  const lines = readFileSync(csvPath, 'utf8').split(/\r?\n/).filter((line) => line.trim());
  const header = lines[0]!.split(',').map((s) => s.trim());
  const newest = lines[1]!.split(',').map((s) => s.trim());
  return ['EUR', ...header.slice(1).filter((code, i) => code && newest[i + 1] && newest[i + 1] !== 'N/A')];
}

export function createRotation(currencies: readonly string[], keys: readonly string[]): Rotation {
  const pairs = currencies.flatMap((a) => currencies.filter((b) => b !== a).map((b) => [a, b] as const));
  return {
    key: (n) => keys[n % keys.length]!,
    // A stride co-prime to the number of pairs, so that neighbours differ in both currencies.
    pair: (n) => pairs[(n * 37) % pairs.length]!,
  };
}

const AMOUNTS = ['100', '99.95', '1250000', '0.5', '7340.12'];

function keyed(n: number, rotation: Rotation, path: string, headers: Record<string, string> = {}): LoadRequest {
  return { path, headers: { 'x-api-key': rotation.key(n), ...headers } };
}

function rate(n: number, rotation: Rotation): LoadRequest {
  const [from, to] = rotation.pair(n);
  return keyed(n, rotation, `/api/v1/rate?from=${from}&to=${to}`);
}

function convert(n: number, rotation: Rotation): LoadRequest {
  const [from, to] = rotation.pair(n);
  return keyed(n, rotation, `/api/v1/convert?from=${from}&to=${to}&amount=${AMOUNTS[n % AMOUNTS.length]!}`);
}

function history(range: '1y' | '5y', format: 'json' | 'csv', gzip: boolean): Scenario['request'] {
  return (n, rotation) => {
    const [from, to] = rotation.pair(n);
    const csv = format === 'csv' ? '&format=csv' : '';
    return keyed(n, rotation, `/api/v1/history?from=${from}&to=${to}&range=${range}${csv}`, gzip ? { 'accept-encoding': 'gzip' } : {});
  };
}

/** Past days, rotating: a weekday, a Saturday, a holiday, a year back and nearly five. */
const DATES = ['2026-02-18', '2026-02-28', '2025-12-25', '2025-03-05', '2021-06-15'];

function rateOnDate(n: number, rotation: Rotation): LoadRequest {
  const [from, to] = rotation.pair(n);
  return keyed(n, rotation, `/api/v1/rate?from=${from}&to=${to}&date=${DATES[n % DATES.length]!}`);
}

/** Every other currency: the first currency of the pair, no `to`. */
function ratesToAll(n: number, rotation: Rotation): LoadRequest {
  return keyed(n, rotation, `/api/v1/rates?from=${rotation.pair(n)[0]}`);
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'baseline', description: 'bare Fastify route, a constant JSON body the size of a rate answer', standard: true, baseline: true, request: rate },
  { name: 'rate', description: 'GET /api/v1/rate', standard: true, request: rate },
  { name: 'convert', description: 'GET /api/v1/convert, 5 amounts rotating', standard: true, request: convert },
  { name: 'history-1y-json', description: 'GET /api/v1/history range=1y', standard: true, request: history('1y', 'json', false) },
  { name: 'rate-dated', description: 'GET /api/v1/rate date=…, 5 past days rotating', standard: false, request: rateOnDate },
  { name: 'rates-all', description: 'GET /api/v1/rates, every other currency', standard: false, request: ratesToAll },
  { name: 'history-1y-csv', description: 'GET /api/v1/history range=1y format=csv', standard: false, request: history('1y', 'csv', false) },
  { name: 'history-5y-json', description: 'GET /api/v1/history range=5y', standard: false, request: history('5y', 'json', false) },
  { name: 'history-5y-json-gzip', description: 'GET /api/v1/history range=5y, Accept-Encoding: gzip', standard: false, request: history('5y', 'json', true) },
];

/** Measured again with several workers (--workers) and on PostgreSQL + Redis (--database-url, --redis-url). */
export const VARIANT_SCENARIOS: readonly string[] = ['rate'];

/** The standard scenarios, or those named; the baseline with them, since every row is compared with it. */
export function selectScenarios(only: string | undefined): Scenario[] {
  if (only === undefined) return SCENARIOS.filter((s) => s.standard);
  const names = only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')} (see --list)`);
  return SCENARIOS.filter((s) => s.baseline || names.includes(s.name));
}
