import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { BNM_CURRENCIES, BNM_METADATA, createBnmProvider, parseBnmRates } from '../../src/providers/bnm.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recordings = recordingsOf('bnm');
const [newest, ...months] = recordings;
const monthOf = (pathAndQuery: string) => /^\/public\/exchange-rate\/([A-Z]{3})\/year\/2026\/month\/3\?session=0900$/.exec(pathAndQuery)![1]!;
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const META = '"meta":{"quote":"rm","session":"0900","last_updated":"2026-03-19 23:01:22","total_result":1}';
const one = (rate: string, code = 'USD', unit = '1') => `{"data":{"currency_code":"${code}","unit":${unit},"rate":[${rate}]},${META}}`;

describe('BNM parser on the recorded answers', () => {
  it('stores ringgit per unit units as the exact reciprocal, each 17-digit double read as the decimal it stands for', () => {
    const document = parseBnmRates(newest!.body.toString('utf8'));
    assert.deepEqual(document.days.map((d) => [d.day, d.asOf, Object.keys(d.rates).length]), [['2026-03-19', '2026-03-19T01:00:00Z', 27]]);
    const rates = document.days[0]!.rates;
    assert.equal(rates['USD'], '1/3.93');
    assert.equal(rates['JPY'], '1/0.024596');
    assert.equal(rates['XDR'], '1/5.3538');
    // Independently: each middle rate's literal, through decimal.js rounded to 4 decimals (the bank's), per unit.
    let checked = 0;
    for (const recording of recordings) {
      const text = recording.body.toString('utf8');
      const document = parseBnmRates(text);
      for (const block of text.split('"currency_code":').slice(1)) {
        const [, code, unit] = /^"([A-Z]{3})","unit":(\d+)/.exec(block)!;
        for (const [, day, middle] of block.matchAll(/"date":"([\d-]+)","buying_rate":[^,]*,"selling_rate":[^,]*,"middle_rate":([\d.]+)/g) as Iterable<[string, string, string]>) {
          const stored = document.days.find((d) => d.day === day)!.rates[code === 'SDR' ? 'XDR' : code!]!;
          assert.ok(new D(stored.slice(2)).eq(new D(middle).toDecimalPlaces(4).div(unit!)), `${code} ${day}: ${stored} for ${middle} per ${unit}`);
          checked += 1;
        }
      }
    }
    assert.equal(checked, 27 + 27 * 14);
  });

  it('reads the direction and the units right: within 2% of the ECB\'s crosses on the common days (09:00 in Kuala Lumpur, 14:15 in Frankfurt)', () => {
    const comparison = compareWithEcb({ provider: 'bnm', base: 'MYR', days: months.flatMap((m) => parseBnmRates(m.body.toString('utf8')).days) }, 0.02);
    assert.deepEqual(comparison.far, []);
    assert.ok(comparison.checked >= 40, `${comparison.checked}`);
    for (const code of ['USD', 'EUR', 'JPY', 'IDR', 'KRW', 'THB']) assert.ok(comparison.currencies.has(code), code);
  });

  it('rejects malformed answers with a clear error', () => {
    const ok = '{"date":"2026-03-02","buying_rate":3.92,"selling_rate":3.94,"middle_rate":3.9300000000000002}';
    const cases: Array<[string, RegExp]> = [
      ['', /the body is empty/],
      ['<html>Forbidden</html>', /HTML or XML page/],
      ['[]', /expected an object with data/],
      [one(ok).replace('"quote":"rm"', '"quote":"fx"'), /meta.quote is the string "fx", not "rm"/],
      [one(ok, 'usd'), /currency_code is the string "usd"/],
      [one(ok, 'MYR'), /currency_code is the string "MYR"/],
      [one(ok, 'USD', '"1"'), /USD: unit is the string "1"/],
      [one(ok, 'JPY', '7'), /3.93 per 7 units has no exact per-unit decimal/],
      [one(ok.replace('2026-03-02', '02/03/2026')), /USD: a rate dated the string "02\/03\/2026"/],
      [one(ok.replace('3.9300000000000002', '0')), /USD on 2026-03-02: middle_rate is the number 0/],
      [one(ok.replace('3.9300000000000002', '"3.93"')), /middle_rate is the string "3.93"/],
      [one(`${ok},${ok}`), /USD is quoted twice on 2026-03-02/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseBnmRates(body), feedError(pattern), body.slice(0, 100));
    assert.deepEqual(parseBnmRates(one(ok.replace('3.9300000000000002', 'null'))).days, []);
  });
});

describe('BNM provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url, request) => {
      // The API answers only clients that ask for its versioned media type.
      if (request.headers['accept'] !== 'application/vnd.BNM.API.v1+json') return { status: 406, body: '{"message":"Not Acceptable"}', contentType: 'application/json' };
      const exact = recordings.find((r) => r.pathAndQuery === `${url.pathname}${url.search}`);
      if (exact) return { body: exact.body, contentType: exact.contentType };
      // Another month of a currency: the API's answer without rates in it.
      const m = /^\/public\/exchange-rate\/([A-Z]{3})\/year\/\d{4}\/month\/\d{1,2}$/.exec(url.pathname);
      if (!m || url.searchParams.get('session') !== '0900') return undefined;
      return { body: `{"data":{"currency_code":"${m[1]}","unit":1,"rate":[]},${META}}`, contentType: 'application/json' };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createBnmProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 1 });

  it('latest: the recorded request, the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-20T10:44:55Z').latest();
    assert.deepEqual(server.requests, [newest!.pathAndQuery]);
    assert.deepEqual(latest.days, parseBnmRates(newest!.body.toString('utf8')).days);
  });

  it('a month: the recorded requests, a currency each in turn, as one document', async () => {
    server.requests.length = 0;
    const document = await provider('2026-03-20T10:45:00Z').series({ from: '2026-03-01', to: '2026-03-20' });
    assert.deepEqual([...server.requests].sort(), months.map((m) => m.pathAndQuery).sort());
    assert.deepEqual(server.requests.map(monthOf), BNM_CURRENCIES);
    assert.equal(document.days.length, 14);
    assert.equal(Object.keys(document.days.at(-1)!.rates).length, 27);
  });

  it('the first 5-year load: a month a span, every currency a request, up to today, logged as a paced load', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-03-20T10:45:00Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-04-30' };
    const document = await provider('2026-03-20T10:45:00Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    // 2021-02-18 to 2026-03-20: 62 months touched.
    assert.equal(server.requests.length, 62 * 27);
    assert.equal(server.requests[0], '/public/exchange-rate/AED/year/2021/month/2?session=0900');
    assert.equal(server.requests.at(-1), '/public/exchange-rate/VND/year/2026/month/3?session=0900');
    assert.equal(document.days.length, 14);
    assert.deepEqual([lines[0]!.msg, lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['loading history in paced requests', 'bnm', 62]);
    assert.equal(lines.at(-1)!.msg, 'history loaded');
  });

  it('fails on an error answer', async () => {
    await assert.rejects(provider('2026-03-20T10:44:55Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('declares the first day its history reaches, for a load of every year', () => {
    assert.equal(provider('2026-03-20T10:45:00Z').firstDay, '2021-01-04');
  });

  it('describes itself', () => {
    assert.deepEqual([BNM_METADATA.base, BNM_METADATA.kind, BNM_METADATA.label], ['MYR', 'central bank', 'BNM']);
    assert.match(BNM_METADATA.schedule, /09:00 Kuala Lumpur session/);
  });
});
