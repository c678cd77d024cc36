import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { CBU_METADATA, createCbuProvider, parseCbuRates } from '../../src/providers/cbu.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { cbuByDay, cbuRecordings, cbuStandIn } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recordings = cbuRecordings;
const byDay = cbuByDay;

describe('CBU parser, on the recorded documents', () => {
  it('cbu/01-03.json (1 to 3 April, 75 currencies each): sums per Nominal units, written as strings, made exact per-unit rates', () => {
    for (const [day, recording] of byDay) {
      const text = recording.body.toString('utf8');
      const document = parseCbuRates(text);
      assert.equal(document.base, 'UZS');
      assert.deepEqual(document.days.map((d) => d.day), [day]);
      const entries = JSON.parse(text) as Array<{ Ccy: string; Nominal: string; Rate: string }>;
      assert.equal(entries.length, 75);
      const rates = document.days[0]!.rates;
      assert.equal(Object.keys(rates).length, 75);
      for (const entry of entries) {
        // The strings are read independently with decimal.js.
        assert.ok(new Decimal(rates[entry.Ccy]!.slice(2)).eq(new Decimal(entry.Rate).div(entry.Nominal)), `${day} ${entry.Ccy}`);
      }
      assert.equal(validateDocument(document, clockAt('2026-04-08T12:00:00Z')).document.days.length, 1);
    }
    const first = parseCbuRates(byDay.get('2026-04-01')!.body.toString('utf8')).days[0]!.rates;
    assert.equal(first['USD'], '1/12194.21');
    assert.equal(first['IDR'], '1/0.718');
    assert.equal(first['IRR'], '1/0.009');
    assert.equal(first['HUF'], '1/36.20');
  });

  it('a malformed document is refused whole', () => {
    const usd = (fields: string) => `[{"id":69,"Code":"840","Ccy":"USD",${fields}}]`;
    assert.deepEqual(parseCbuRates(usd('"Nominal":"1","Rate":"12194.21","Date":"01.04.2026"')).days[0]!.rates, { USD: '1/12194.21' });
    assert.throws(() => parseCbuRates(usd('"Nominal":"1","Rate":12194.21,"Date":"01.04.2026"')), feedError(/Rate is the number 12194\.21, not a string/));
    assert.throws(() => parseCbuRates(usd('"Nominal":1,"Rate":"12194.21","Date":"01.04.2026"')), feedError(/Nominal is the number 1/));
    assert.throws(() => parseCbuRates(usd('"Nominal":"1","Rate":"12 194,21","Date":"01.04.2026"')), feedError(/is not a plain decimal/));
    assert.throws(() => parseCbuRates(usd('"Nominal":"1","Rate":"0.00","Date":"01.04.2026"')), feedError(/the rate is zero/));
    assert.throws(() => parseCbuRates(usd('"Nominal":"0","Rate":"1","Date":"01.04.2026"')), feedError(/not a whole number of units/));
    assert.throws(() => parseCbuRates(usd('"Nominal":"1","Rate":"1","Date":"2026-04-01"')), feedError(/Date is the string "2026-04-01", not DD\.MM\.YYYY/));
    assert.throws(() => parseCbuRates('{"error":"x"}'), feedError(/expected an array/));
    assert.throws(() => parseCbuRates('<!DOCTYPE html><html></html>'), feedError(/HTML or XML page/));
    const entry = '{"Ccy":"USD","Nominal":"1","Rate":"1","Date":"01.04.2026"}';
    assert.throws(() => parseCbuRates(`[${entry},${entry}]`), feedError(/USD is quoted twice on 2026-04-01/));
    assert.deepEqual(parseCbuRates('[]').days, []);
  });
});

describe('CBU provider against a local stand-in', () => {
  let server: BankServer;
  const logged: string[] = [];
  before(async () => {
    server = await startBankServer(cbuStandIn);
  });
  after(() => server.close());
  const provider = (now: string) => createCbuProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0, log: { info: (_obj, msg) => logged.push(msg ?? '') } });

  it('latest: the rates in force today (UTC), the recorded request exactly', async () => {
    server.requests.length = 0;
    const document = await provider('2026-04-02T12:00:00Z').latest();
    assert.deepEqual(server.requests, [recordings[1]!.pathAndQuery]);
    assert.deepEqual(document, parseCbuRates(recordings[1]!.body.toString('utf8')));
  });

  it('a range: a request a weekday up to today, an answer dated another day left out', async () => {
    server.requests.length = 0;
    const document = await provider('2026-04-06T12:00:00Z').series({ from: '2026-03-30', to: '2026-04-10' });
    assert.deepEqual(server.requests, ['2026-03-30', '2026-03-31', '2026-04-01', '2026-04-02', '2026-04-03', '2026-04-06'].map((d) => `/en/arkhiv-kursov-valyut/json/all/${d}/`));
    assert.deepEqual(document.days.map((d) => d.day), ['2026-04-01', '2026-04-02', '2026-04-03']);
  });

  it('five years: a paced request a weekday, with progress lines', async () => {
    server.requests.length = 0;
    logged.length = 0;
    const document = await provider('2026-04-03T12:00:00Z').series({ from: '2021-04-04', to: '2026-04-30' });
    const calendarDays = (Date.parse('2026-04-03') - Date.parse('2021-04-04')) / 86_400_000 + 1;
    const weekdays = Array.from({ length: calendarDays }, (_, i) => new Date(Date.parse('2021-04-04') + i * 86_400_000)).filter((d) => d.getUTCDay() % 6 !== 0).length;
    assert.equal(server.requests.length, weekdays);
    assert.ok(server.requests.every((path) => new Date(`${/\d{4}-\d{2}-\d{2}/.exec(path)![0]}T00:00:00Z`).getUTCDay() % 6 !== 0));
    assert.equal(server.requests.at(-1), '/en/arkhiv-kursov-valyut/json/all/2026-04-03/');
    assert.equal(document.days.length, 3);
    assert.ok(logged.includes('loading history in paced requests') && logged.includes('history loaded'));
  });

  it('describes itself', () => {
    assert.deepEqual([CBU_METADATA.base, CBU_METADATA.kind, CBU_METADATA.termsUrl], ['UZS', 'central bank', null]);
  });
});
