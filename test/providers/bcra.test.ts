import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { BCRA_METADATA, createBcraProvider, parseBcraRates } from '../../src/providers/bcra.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { BCRA_EMPTY_DAY, bcraByDay, bcraRecordings, bcraStandIn } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recordings = bcraRecordings;
const byDay = bcraByDay;
const EMPTY_DAY = BCRA_EMPTY_DAY;
/** Monday to Friday from one day to another, read from the calendar independently. */
const weekdays = (from: string, to: string) =>
  Array.from({ length: (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 }, (_, i) => new Date(Date.parse(from) + i * 86_400_000)).filter((d) => d.getUTCDay() % 6 !== 0).map((d) => d.toISOString().slice(0, 10));

describe('BCRA parser, on the recorded documents', () => {
  it('bcra/01-02.json (19 and 20 March): pesos per unit, per 1,000 where the name says so, the dollar-only, outdated-code and non-currency lines left out', () => {
    for (const [day, recording] of byDay) {
      const text = recording.body.toString('utf8');
      const document = parseBcraRates(text);
      assert.equal(document.base, 'ARS');
      assert.deepEqual(document.days.map((d) => d.day), [day]);
      const rates = document.days[0]!.rates;
      // Each published literal, read independently from the bytes with decimal.js.
      const entries = [...text.matchAll(/"codigoMoneda":"([A-Z]{3})","descripcion":"([^"]*)","tipoPase":[0-9.]+,"tipoCotizacion":([0-9.]+)/g)];
      assert.equal(entries.length, 39);
      const stored = entries.filter(([, code, , pesos]) => !['ARS', 'MXP', 'VEB'].includes(code!) && !new Decimal(pesos!).isZero());
      assert.equal(Object.keys(rates).length, stored.length);
      for (const [, code, name, pesos] of stored) {
        const units = name!.includes('C/1.000 UNIDADES') ? 1000 : 1;
        assert.ok(new Decimal(rates[code!]!.slice(2)).eq(new Decimal(pesos!).div(units)), `${day} ${code}`);
      }
      for (const code of ['ARS', 'XAU', 'XAG', 'MXP', 'VEB', 'MXN', 'VES']) assert.equal(rates[code], undefined, code);
      // Through validation the codes that are no currency (REF, the A 3500 reference; CNH, offshore yuan) are dropped.
      assert.deepEqual(validateDocument(document, clockAt('2026-03-22T12:00:00Z')).dropped, ['CNH', 'REF']);
    }
    const first = parseBcraRates(byDay.get('2026-03-19')!.body.toString('utf8')).days[0]!.rates;
    assert.equal(first['USD'], '1/1394.50000000');
    assert.equal(first['VND'], '1/0.05304096500');
    // Every other currency is its dollar price (tipoPase) times the dollar: the direction is right.
    assert.ok(new Decimal(first['EUR']!.slice(2)).div('1394.5').minus('1.156').abs().lt('0.000001'));
  });

  it('a day without quotations is an empty document; a malformed one is refused whole', () => {
    assert.deepEqual(parseBcraRates(EMPTY_DAY).days, []);
    const usd = (fields: string) => `{"status":200,"results":{"fecha":"2026-03-19","detalle":[{"codigoMoneda":"USD","descripcion":"DOLAR E.E.U.U.",${fields}}]}}`;
    assert.deepEqual(parseBcraRates(usd('"tipoPase":0.0,"tipoCotizacion":1394.5')).days[0]!.rates, { USD: '1/1394.5' });
    assert.throws(() => parseBcraRates(usd('"tipoPase":0.0,"tipoCotizacion":"1394.5"')), feedError(/tipoCotizacion is the string/));
    assert.throws(() => parseBcraRates(usd('"tipoPase":0.0,"tipoCotizacion":-1')), feedError(/not a number of pesos/));
    assert.throws(() => parseBcraRates(usd('"tipoPase":0.0,"tipoCotizacion":1,"x":1').replace('"2026-03-19"', '"19/03/2026"')), feedError(/fecha is the string "19\/03\/2026"/));
    assert.throws(() => parseBcraRates('{"status":400,"errorMessages":["fecha invalida"]}'), feedError(/status is the number 400/));
    assert.throws(() => parseBcraRates('[]'), feedError(/expected an object/));
    const twice = usd('"tipoPase":0.0,"tipoCotizacion":1').replace(/\]\}\}$/, ',{"codigoMoneda":"USD","descripcion":"X","tipoPase":0,"tipoCotizacion":2}]}}');
    assert.throws(() => parseBcraRates(twice), feedError(/USD is quoted twice on 2026-03-19/));
  });
});

describe('BCRA provider against a local stand-in', () => {
  let server: BankServer;
  const logged: string[] = [];
  before(async () => {
    server = await startBankServer(bcraStandIn);
  });
  after(() => server.close());
  const provider = (now: string) => createBcraProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0, log: { info: (_obj, msg) => logged.push(msg ?? '') } });

  it('latest: today (UTC), then a day back at a time to the last day with quotations', async () => {
    server.requests.length = 0;
    const document = await provider('2026-03-22T20:00:00Z').latest();
    assert.deepEqual(server.requests, ['2026-03-22', '2026-03-21', '2026-03-20'].map((d) => `/estadisticascambiarias/v1.0/Cotizaciones?fecha=${d}`));
    assert.deepEqual(document, parseBcraRates(byDay.get('2026-03-20')!.body.toString('utf8')));
    server.requests.length = 0;
    await provider('2026-03-19T20:00:00Z').latest();
    assert.deepEqual(server.requests, [recordings[0]!.pathAndQuery]);
  });

  it('latest fails when a week holds no quotations', async () => {
    await assert.rejects(provider('2026-05-01T20:00:00Z').latest(), feedError(/nothing published in the 6 days to 2026-05-01/));
  });

  it('a range: the recorded requests exactly, a day a request', async () => {
    server.requests.length = 0;
    const document = await provider('2026-03-22T20:00:00Z').series({ from: '2026-03-19', to: '2026-03-20' });
    assert.deepEqual(server.requests, recordings.map((r) => r.pathAndQuery));
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-19', '2026-03-20']);
  });

  it('five years: a paced request a weekday up to today, with progress lines', async () => {
    server.requests.length = 0;
    logged.length = 0;
    const document = await provider('2026-03-20T20:00:00Z').series({ from: '2021-03-21', to: '2026-04-30' });
    const asked = server.requests.map((path) => new URL(path, 'http://x').searchParams.get('fecha')!);
    assert.deepEqual(asked, weekdays('2021-03-21', '2026-03-20'));
    assert.equal(document.days.length, 2);
    assert.ok(logged.includes('loading history in paced requests') && logged.includes('history loaded'));
  });

  it('describes itself', () => {
    assert.deepEqual([BCRA_METADATA.base, BCRA_METADATA.kind, BCRA_METADATA.termsUrl], ['ARS', 'central bank', 'https://www.bcra.gob.ar/aviso-legal/']);
  });
});
