/**
 * The Banco Central de la República Argentina's exchange rates: the peso against about 35
 * currencies, each day's `tipoCotizacion` in pesos per unit (per 1,000 units where the name says
 * so: "DONG VIETNAM (C/1.000 UNIDADES)"), published on Argentine business days in the afternoon
 * Buenos Aires time. `tipoPase` beside it is the same currency in US dollars and is not stored.
 * API: https://www.bcra.gob.ar/en/central-bank-api-exchange-statistics/ (`/estadisticascambiarias/v1.0/Cotizaciones?fecha=YYYY-MM-DD`,
 * every currency on one day).
 */
import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { isDay, type Day } from '../core/time.js';
import { CURRENCY_CODE, dayByDayProvider, RatesByDay } from './central-bank.js';
import { decodeUtf8, fetchBytes } from './fetch-bytes.js';
import { describeJsonValue, isJsonObject, JsonNumber, parseJsonKeepingNumbers, plainDecimalFromNumberText } from './json-number.js';
import { parseOffThread } from './off-thread.js';
import { perUnit } from './paced.js';
import type { ProviderMetadata, BankProviderOptions } from './types.js';

/** The most bytes one answer may hold (sent and inflated; fetchBytes). A day of every currency is 4 KB: the limit leaves a wide margin (docs/operations.md lists every feed's). */
const MAX_BYTES = 1024 * 1024;

const PROVIDER = 'bcra';
const FEED = 'BCRA feed';
const BASE = 'ARS';

export const BCRA_METADATA: ProviderMetadata = {
  name: 'Banco Central de la República Argentina',
  label: 'BCRA',
  kind: 'central bank',
  base: BASE,
  quotes: 'the peso rates of about 35 currencies',
  termsUrl: 'https://www.bcra.gob.ar/aviso-legal/',
  schedule: 'Argentine business days, in the afternoon Buenos Aires time (about 16:00–18:00 UTC)',
};

/**
 * Codes of currencies replaced long ago that the bank still writes for today's (MXP for the
 * Mexican peso, VEB for the bolívar): their numbers are not those of the codes' currencies, and
 * reading them as MXN and VES would be a guess, so they are not stored.
 */
const OUTDATED_CODES = new Set(['MXP', 'VEB']);
/** The units a quotation is per, when the name says so: `(C/1.000 UNIDADES)`. */
const PER_UNITS = /\(C\/(\d{1,3}(?:\.\d{3})*) UNIDADES\)/;

/**
 * Parses an answer of `Cotizaciones?fecha=`: `{ status: 200, results: { fecha, detalle: [{
 * codigoMoneda, descripcion, tipoPase, tipoCotizacion }] } }`. The peso itself and currencies
 * without a peso quotation (0: the metals, quoted in dollars only) are left out; a day without
 * quotations (`fecha` null or no `detalle`) is an empty document.
 */
export function parseBcraRates(text: string): RateDocument {
  const body = parseJsonKeepingNumbers(text, FEED);
  if (!isJsonObject(body)) throw new FeedError(`${FEED}: expected an object with results, got ${describeJsonValue(body)}`);
  const status = body['status'];
  if (!(status instanceof JsonNumber) || status.text !== '200') throw new FeedError(`${FEED}: status is ${describeJsonValue(status)}, not 200`);
  const results = body['results'];
  if (!isJsonObject(results)) throw new FeedError(`${FEED}: results is ${describeJsonValue(results)}, not an object`);
  const byDay = new RatesByDay(FEED);
  const fecha = results['fecha'];
  const detalle = results['detalle'] ?? [];
  if (!Array.isArray(detalle)) throw new FeedError(`${FEED}: detalle is ${describeJsonValue(detalle)}, not a list`);
  if (fecha === null && detalle.length === 0) return { provider: PROVIDER, base: BASE, days: [] };
  if (typeof fecha !== 'string' || !isDay(fecha)) throw new FeedError(`${FEED}: fecha is ${describeJsonValue(fecha)}, not YYYY-MM-DD`);
  const day: Day = fecha;
  detalle.forEach((entry: unknown, index) => {
    let where = `detalle #${index}`;
    if (!isJsonObject(entry)) throw new FeedError(`${FEED}: ${where} is ${describeJsonValue(entry)}, not an object`);
    const published = entry['codigoMoneda'];
    if (typeof published !== 'string' || !CURRENCY_CODE.test(published)) throw new FeedError(`${FEED}: ${where}: codigoMoneda is ${describeJsonValue(published)}`);
    where = `${where} (${day} ${published})`;
    const name = entry['descripcion'];
    if (typeof name !== 'string') throw new FeedError(`${FEED}: ${where}: descripcion is ${describeJsonValue(name)}`);
    const quotation = entry['tipoCotizacion'];
    const pesos = quotation instanceof JsonNumber ? plainDecimalFromNumberText(quotation.text) : null;
    if (pesos === null) throw new FeedError(`${FEED}: ${where}: tipoCotizacion is ${describeJsonValue(quotation)}, not a number of pesos`);
    if (published === BASE || OUTDATED_CODES.has(published) || !/[1-9]/.test(pesos)) return;
    const units = PER_UNITS.exec(name)?.[1]?.replaceAll('.', '') ?? '1';
    // Pesos per unit, as published: stored as the reciprocal of units per peso.
    byDay.add(day, published, `1/${perUnit(pesos, units, FEED, where)}`, where);
  });
  return { provider: PROVIDER, base: BASE, days: byDay.days((d) => `${d}T00:00:00Z`) };
}

export function createBcraProvider(options: BankProviderOptions): Provider {
  const origin = options.baseUrl.replace(/\/+$/, '');
  return dayByDayProvider({
    id: PROVIDER,
    base: BASE,
    feed: FEED,
    clock: options.clock,
    // A day without quotations (a weekend, a holiday) answers none: back across a long weekend.
    lookbackDays: 5,
    // Quotations are published on Argentine business days only.
    skipWeekends: true,
    log: options.log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    async fetchDay(day, fetchOptions) {
      const bytes = await fetchBytes(`${origin}/estadisticascambiarias/v1.0/Cotizaciones?fecha=${day}`, { timeoutMs: options.timeoutMs, maxBytes: MAX_BYTES, signal: fetchOptions?.signal });
      return parseOffThread('bcra', parseBcraRates, [decodeUtf8(bytes, FEED)], fetchOptions?.signal);
    },
  });
}
