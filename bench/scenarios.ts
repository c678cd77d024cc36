/**
 * What the bench requests. Keys and pairs rotate per request, so that the quota work is real and
 * no answer is asked for twice in a row: 1,000 keys and every ordered pair of the currencies ECB
 * publishes now.
 */
import { readFileSync } from 'node:fs';
import type { LoadRequest } from './load.js';

/** The keys and pairs the n-th request of a rotation uses. */
export type Rotation = ReturnType<typeof createRotation>;

export interface Scenario {
  name: string;
  description: string;
  /** Run by default (the others only with --only). */
  standard: boolean;
  /** The bare Fastify route the service is compared with. */
  baseline?: true;
  /** What the service needs in its environment for this row: a run with such a row starts the service with it for every row. */
  serviceEnv?: Record<string, string>;
  request(n: number, rotation: Rotation): LoadRequest;
}

/** The currencies the ECB publishes on the newest day of its history (EUR included). */
export function currentCurrencies(csvPath: string): string[] {
  const [header, newest] = readFileSync(csvPath, 'utf8').split(/\r?\n/, 2).map((line) => line.split(',').map((s) => s.trim()));
  return ['EUR', ...header!.slice(1).filter((code, i) => code && newest![i + 1] && newest![i + 1] !== 'N/A')];
}

export function createRotation(currencies: readonly string[], keys: readonly string[]) {
  const pairs = currencies.flatMap((a) => currencies.filter((b) => b !== a).map((b) => [a, b] as const));
  return {
    key: (n: number) => keys[n % keys.length]!,
    // A stride co-prime to the number of pairs, so that neighbours differ in both currencies.
    pair: (n: number) => pairs[(n * 37) % pairs.length]!,
  };
}

const AMOUNTS = ['100', '99.95', '1250000', '0.5', '7340.12'];
/** Every day the sources publish kept: the rows of range=max need it. */
const ALL_HISTORY = { EXRATES_HISTORY_YEARS: 'all' };

/** A keyed GET of `path(from, to, n)` for the n-th request's pair. */
const keyed =
  (path: (from: string, to: string, n: number) => string, headers: Record<string, string> = {}): Scenario['request'] =>
  (n, rotation) => {
    const [from, to] = rotation.pair(n);
    return { path: path(from, to, n), headers: { 'x-api-key': rotation.key(n), ...headers } };
  };

const rate = keyed((from, to) => `/api/v1/rate?from=${from}&to=${to}`);
const history = (query: string, headers?: Record<string, string>) => keyed((from, to) => `/api/v1/history?from=${from}&to=${to}&${query}`, headers);

export const SCENARIOS: readonly Scenario[] = [
  { name: 'baseline', description: 'bare Fastify route, a constant JSON body the size of a rate answer', standard: true, baseline: true, request: rate },
  { name: 'rate', description: 'GET /api/v1/rate', standard: true, request: rate },
  { name: 'convert', description: 'GET /api/v1/convert, 5 amounts rotating', standard: true, request: keyed((from, to, n) => `/api/v1/convert?from=${from}&to=${to}&amount=${AMOUNTS[n % AMOUNTS.length]!}`) },
  { name: 'history-1y-json', description: 'GET /api/v1/history range=1y', standard: true, request: history('range=1y') },
  { name: 'history-1y-csv', description: 'GET /api/v1/history range=1y format=csv', standard: false, request: history('range=1y&format=csv') },
  { name: 'history-5y-json', description: 'GET /api/v1/history range=5y', standard: false, request: history('range=5y') },
  { name: 'history-5y-json-gzip', description: 'GET /api/v1/history range=5y, Accept-Encoding: gzip', standard: false, request: history('range=5y', { 'accept-encoding': 'gzip' }) },
  ...(['json', 'csv', 'ndjson'] as const).map((format) => ({
    name: `history-max-${format}`,
    description: `GET /api/v1/history range=max format=${format}, every ECB day since 1999 kept`,
    standard: false,
    serviceEnv: ALL_HISTORY,
    request: history(`range=max&format=${format}`),
  })),
];

/** The service's environment for the rows of a run: what its rows need, then what --env adds. */
export function scenarioEnvironment(scenarios: readonly Scenario[], extra: Record<string, string>): Record<string, string> {
  return Object.assign({}, ...scenarios.map((s) => s.serviceEnv ?? {}), extra) as Record<string, string>;
}

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
