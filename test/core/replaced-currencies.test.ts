/**
 * Currencies replaced at a legal fixed ratio: the table, and the answers on the shared ECB history
 * (clock at 2026-03-06T12:00:00Z), where BGN was quoted until 2025-12-31 and HRK until 2022-12-30.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isoCurrency } from '../../src/core/currencies.js';
import { pairSpans, REPLACED_CURRENCIES, replacementOn, throughSuccessors } from '../../src/core/replaced-currencies.js';
import { createTestApp, type TestApp } from '../helper.js';
import { ecbDaysBetween, ecbRow } from '../support/upstreams.js';

/** a / b rounded half-to-even to 8 significant digits, in BigInt, independently of src/core/decimal.ts. */
function quotient8(a: string, b: string): string {
  const parse = (t: string) => {
    const [i, f = ''] = t.split('.');
    return { n: BigInt(i! + f), s: f.length };
  };
  const x = parse(a);
  const y = parse(b);
  // value = (x.n / 10^x.s) / (y.n / 10^y.s); scale it to have at least 8 integer digits, then round.
  for (let shift = 0; ; shift++) {
    const num = x.n * 10n ** BigInt(y.s + shift);
    const den = y.n * 10n ** BigInt(x.s);
    const q = num / den;
    if (q < 10_000_000n) continue;
    // q has exactly 8 digits here (shift grows one at a time).
    const r = num - q * den;
    const twice = 2n * r;
    const rounded = twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
    const digits = rounded.toString().padStart(shift + 1, '0');
    const text = shift === 0 ? digits : `${digits.slice(0, digits.length - shift) || '0'}.${digits.slice(-shift)}`;
    return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  }
}

describe('the table of replaced currencies', () => {
  it('holds the legal ratios, each from its day, with a reference, every code valid ISO 4217', () => {
    const bgn = replacementOn('BGN', '2026-01-01')!;
    assert.deepEqual([bgn.successor, bgn.ratio], ['EUR', '1.95583']);
    assert.equal(replacementOn('BGN', '2025-12-31'), undefined);
    assert.equal(replacementOn('HRK', '2023-01-01')?.ratio, '7.53450');
    assert.equal(replacementOn('SLL', '2022-07-01')?.successor, 'SLE');
    assert.equal(replacementOn('ANG', '2025-03-31')?.successor, 'XCG');
    assert.equal(replacementOn('EUR', '2026-01-01'), undefined);
    for (const r of REPLACED_CURRENCIES) {
      assert.ok(isoCurrency(r.code), r.code);
      assert.ok(isoCurrency(r.successor) && isoCurrency(r.successor)!.withdrawn === undefined, `${r.code}'s successor ${r.successor} is current`);
      assert.match(r.ratio, /^\d+(\.\d+)?$/, r.code);
      assert.ok(r.reference.length > 20, r.code);
    }
  });

  it('turns a pair into its successors and the exact factor', () => {
    const eurBgn = throughSuccessors('EUR', 'BGN', '2026-03-05')!;
    assert.deepEqual([eurBgn.from, eurBgn.to, eurBgn.factor], ['EUR', 'EUR', { num: 195583n, den: 100000n }]);
    const bgnHrk = throughSuccessors('BGN', 'HRK', '2026-03-05')!;
    // 7.53450 HRK per EUR over 1.95583 BGN per EUR.
    assert.deepEqual([bgnHrk.from, bgnHrk.to, bgnHrk.replaced.map((r) => r.code)], ['EUR', 'EUR', ['BGN', 'HRK']]);
    assert.equal(bgnHrk.factor.num * 195583n, bgnHrk.factor.den * 753450n);
    assert.equal(throughSuccessors('EUR', 'USD', '2026-03-05'), undefined);
    assert.equal(throughSuccessors('EUR', 'BGN', '2025-12-31'), undefined);
  });

  it('splits a range where a replacement takes effect', () => {
    assert.deepEqual(
      pairSpans('EUR', 'BGN', '2025-12-01', '2026-01-31').map((s) => [s.start, s.end, s.through?.to]),
      [
        ['2025-12-01', '2025-12-31', undefined],
        ['2026-01-01', '2026-01-31', 'EUR'],
      ],
    );
    assert.deepEqual(pairSpans('EUR', 'USD', '2025-12-01', '2026-01-31').map((s) => [s.start, s.end, s.through]), [['2025-12-01', '2026-01-31', undefined]]);
    assert.equal(pairSpans('HRK', 'BGN', '2022-12-01', '2026-01-31').length, 3);
  });
});

describe('answers for replaced currencies, on the shared ECB history', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': t.key } });

  it('answers a live rate of a replaced currency at the legal ratio through its successor, saying so', async () => {
    const response = await get('/api/v1/rate?from=EUR&to=BGN&expand=provenance');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.rate, '1.95583');
    assert.equal(body.pair, 'EURBGN');
    assert.equal(body.asOf, '2026-03-05T15:00:00Z');
    assert.deepEqual(body.provenance.replaced.map((r: { currency: string; successor: string; ratio: string; from: string }) => [r.currency, r.successor, r.ratio, r.from]), [
      ['BGN', 'EUR', '1.95583', '2026-01-01'],
    ]);
    // The ECB's USD of 2026-03-05, through the euro: one division, rounded once.
    const usd = ecbRow('2026-03-05')!.rates['USD']!;
    assert.equal((await get('/api/v1/rate?from=BGN&to=USD')).json().rate, quotient8(usd, '1.95583'));
    assert.equal((await get('/api/v1/rate?from=HRK&to=EUR')).json().rate, quotient8('1', '7.5345'));
    assert.equal((await get('/api/v1/rate?from=BGN&to=HRK')).json().rate, quotient8('7.5345', '1.95583'));
    // Without provenance asked for, nothing of it is shown.
    assert.equal((await get('/api/v1/rate?from=EUR&to=BGN')).json().provenance, undefined);
  });

  it('converts at the rate of the same answer', async () => {
    const body = (await get('/api/v1/convert?from=BGN&to=EUR&amount=100')).json();
    assert.equal(body.rate, quotient8('1', '1.95583'));
    assert.equal(body.result, '51.13');
  });

  it("answers a replaced currency's dates before its replacement with the market numbers, as published", async () => {
    const day = '2022-06-15';
    const hrk = ecbRow(day)!.rates['HRK']!;
    const body = (await get(`/api/v1/rate?from=EUR&to=HRK&date=${day}&expand=provenance`)).json();
    assert.equal(body.rate, hrk);
    assert.equal(body.provenance.replaced, undefined);
    assert.equal(body.provenance.numbers[0].rate, hrk);
    const later = (await get('/api/v1/rate?from=EUR&to=HRK&date=2023-01-02')).json();
    assert.equal(later.rate, '7.5345');
  });

  it('serves a history across the replacement: market numbers before, the legal ratio from the day on', async () => {
    const response = await get('/api/v1/history?from=EUR&to=HRK&start=2022-12-01&end=2023-01-31');
    assert.equal(response.statusCode, 200, response.body);
    const { points } = response.json() as { points: Array<{ date: string; rate: string }> };
    const published = ecbDaysBetween('2022-12-01', '2022-12-31').map((d) => ({ date: d, rate: ecbRow(d)!.rates['HRK']! }));
    const fixed = ecbDaysBetween('2023-01-01', '2023-01-31').map((d) => ({ date: d, rate: '7.5345' }));
    assert.deepEqual(points, [...published, ...fixed]);
    // A pair of two replaced currencies, each from its own day: HRK fixed from 2023, BGN from 2026.
    const both = (await get('/api/v1/history?from=BGN&to=HRK&start=2025-12-30&end=2026-01-05')).json() as { points: Array<{ date: string; rate: string }> };
    const bgn = ecbRow('2025-12-30')!.rates['BGN']!;
    assert.deepEqual(both.points[0], { date: '2025-12-30', rate: quotient8('7.5345', bgn) });
    assert.deepEqual(both.points.at(-1), { date: '2026-01-05', rate: quotient8('7.5345', '1.95583') });
  });

  it('lists each replaced currency in /currencies with its successor, ratio and day, served as its successor is', async () => {
    type Listed = { code: string; servedBy: string | null; providers: string[]; firstDate?: string; lastDate?: string; onRequest: boolean; replacedBy?: { successor: string; ratio: string; from: string; reference: string } };
    const listed = (await get('/api/v1/currencies')).json().currencies as Listed[];
    const entry = (code: string) => listed.find((c) => c.code === code);
    const eur = entry('EUR')!;
    const bgn = entry('BGN')!;
    assert.deepEqual(bgn.replacedBy, { successor: 'EUR', ratio: '1.95583', from: '2026-01-01', reference: replacementOn('BGN', '2026-01-01')!.reference });
    assert.deepEqual([bgn.servedBy, bgn.providers, bgn.lastDate, bgn.onRequest], [eur.servedBy, eur.providers, eur.lastDate, false]);
    // Its market numbers before the euro are history it can still be asked for.
    assert.ok(bgn.firstDate! <= eur.firstDate!);
    assert.equal(entry('HRK')?.replacedBy?.ratio, '7.53450');
    // A currency in force has no replacedBy; one whose successor nobody quotes is not listed.
    assert.equal(eur.replacedBy, undefined);
    assert.equal(entry('USD')!.replacedBy, undefined);
    for (const c of listed.filter((x) => x.replacedBy !== undefined)) assert.ok(entry(c.replacedBy!.successor), `${c.code}'s successor ${c.replacedBy!.successor} is listed`);
    assert.equal(entry('SLL'), undefined);
    // The list of many rates names only the currencies in force.
    const many = (await get('/api/v1/rates?from=EUR')).json() as { rates: Array<{ to: string }> };
    assert.ok(!many.rates.some((r) => r.to === 'BGN' || r.to === 'HRK'));
  });
});
