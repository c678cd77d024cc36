import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds, type FeedsService } from '../support/apps.js';
import { parseMetrics, sampleKey } from '../support/prometheus.js';
import {
  ECB_DAILY_DAY,
  ecbDaysBetween,
  ecbRow,
  FRANKFURTER_LATEST,
  frankfurterRate,
  weekdaysBetween,
  type FailureMode,
  type FakeUpstreams,
} from '../support/upstreams.js';

const RATES = '/frankfurter/v2/rates';
const CURRENCIES = '/frankfurter/v2/currencies';
/** 61 months before 2026-02-12: where a backfilled series starts. */
const RETENTION_START = '2021-01-12';

// An exact oracle, independent of src/core/decimal.ts: decimal texts as scaled BigInts.

function scaled(text: string): { units: bigint; scale: number } {
  const [whole, fraction = ''] = text.split('.');
  return { units: BigInt(whole! + fraction), scale: fraction.length };
}

function formatUnits(units: bigint, scale: number): string {
  if (scale <= 0) return (units * 10n ** BigInt(-scale)).toString();
  const digits = units.toString().padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return text.replace(/\.?0+$/, '');
}

function roundHalfEven(num: bigint, den: bigint): bigint {
  const q = num / den;
  const twice = 2n * (num % den);
  return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
}

/** a ÷ b rounded half-to-even to 8 significant digits, trailing zeros removed. */
function divideTo8(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  const num = x.units * 10n ** BigInt(y.scale);
  const den = y.units * 10n ** BigInt(x.scale);
  let k = 0;
  const at = (k: number) => (k >= 0 ? (num * 10n ** BigInt(k)) / den : num / (den * 10n ** BigInt(-k)));
  while (at(k) >= 100_000_000n) k--;
  while (at(k) < 10_000_000n) k++;
  const units = k >= 0 ? roundHalfEven(num * 10n ** BigInt(k), den) : roundHalfEven(num, den * 10n ** BigInt(-k));
  return formatUnits(units, k);
}

/** amount × rate rounded half-to-even to a number of decimals, written with exactly that many. */
function multiplyTo(amount: string, rate: string, decimals: number): string {
  const a = scaled(amount);
  const r = scaled(rate);
  const units = roundHalfEven(a.units * r.units * 10n ** BigInt(decimals), 10n ** BigInt(a.scale + r.scale));
  if (decimals === 0) return units.toString();
  const digits = units.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

const ecbRate = (code: string, day: string) => ecbRow(day)!.rates[code]!;

let fake: FakeUpstreams;
let template: string;

before(async () => ({ fake, template } = await startFakeFeeds()));
after(() => closeFakeFeeds(fake));

describe('the oracle', () => {
  it('rounds half to even at the eighth significant digit', () => {
    assert.equal(divideTo8('1', '3'), '0.33333333');
    assert.equal(divideTo8('2', '3'), '0.66666667');
    assert.equal(divideTo8('123456785', '1'), '123456780');
    assert.equal(divideTo8('123456795', '1'), '123456800');
    assert.equal(divideTo8('1.19', '1'), '1.19');
    assert.equal(divideTo8('1', '16536'), '0.000060474117');
    assert.equal(multiplyTo('100', '1.3679126', 2), '136.79');
    assert.equal(multiplyTo('2.5', '1', 0), '2');
  });
});

describe('the first requests for a currency nobody stores yet', () => {
  let service: FeedsService;

  before(async () => {
    await fake.reset();
    service = await createFeedsService(fake, { copyFrom: template });
    // ECB's newest day then matches Frankfurter's, so every answer below is from 2026-02-11.
    const [ecb] = await service.deps.refresher.refreshAll();
    assert.equal(ecb!.latestDay, ECB_DAILY_DAY);
    await fake.reset();
  });
  after(() => service.close());

  it('share one backfill across 20 concurrent rate, convert and history requests, and all agree', async () => {
    const urls = [
      ...Array<string>(4).fill('/api/v1/rate?from=EUR&to=NGN'),
      ...Array<string>(3).fill('/api/v1/rate?from=NGN&to=USD'),
      ...Array<string>(2).fill('/api/v1/rate?from=GBP&to=NGN'),
      ...Array<string>(3).fill('/api/v1/convert?from=EUR&to=NGN&amount=100'),
      ...Array<string>(2).fill('/api/v1/convert?from=NGN&to=JPY&amount=100000'),
      ...Array<string>(3).fill('/api/v1/history?from=EUR&to=NGN&range=1y'),
      ...Array<string>(2).fill('/api/v1/history?from=NGN&to=GBP&range=5y'),
      '/api/v1/history?from=EUR&to=NGN&range=1m&format=csv',
    ];
    assert.equal(urls.length, 20);
    const answers = await Promise.all(urls.map((url) => service.get(url)));
    for (const [i, answer] of answers.entries()) assert.equal(answer.status, 200, `${urls[i]}: ${JSON.stringify(answer.body)}`);

    assert.equal(fake.calls(RATES), 1, 'one series request for all of them');
    assert.equal(fake.calls(CURRENCIES), 1);
    const series = fake.requests.find((u) => u.pathname === RATES)!;
    assert.deepEqual(Object.fromEntries(series.searchParams), { base: 'EUR', quotes: 'NGN', from: RETENTION_START, to: '2026-02-12' });

    const byUrl = (url: string) => answers.filter((_a, i) => urls[i] === url).map((a) => a.body);
    const ngn = frankfurterRate('NGN', ECB_DAILY_DAY);
    assert.equal(ngn, '1642.43');

    for (const body of byUrl('/api/v1/rate?from=EUR&to=NGN')) {
      assert.deepEqual(body, { pair: 'EURNGN', from: 'EUR', to: 'NGN', rate: ngn, asOf: body.asOf, stale: false });
      assert.match(String(body.asOf), /^2026-02-11T/);
    }
    for (const body of byUrl('/api/v1/rate?from=NGN&to=USD')) assert.equal(body.rate, divideTo8(ecbRate('USD', ECB_DAILY_DAY), ngn));
    for (const body of byUrl('/api/v1/rate?from=GBP&to=NGN')) assert.equal(body.rate, divideTo8(ngn, '0.86990'));
    for (const body of byUrl('/api/v1/convert?from=EUR&to=NGN&amount=100')) {
      assert.deepEqual([body.rate, body.result], [ngn, '164243.00']);
    }
    const ngnJpy = divideTo8(ecbRate('JPY', ECB_DAILY_DAY), ngn);
    for (const body of byUrl('/api/v1/convert?from=NGN&to=JPY&amount=100000')) {
      assert.deepEqual([body.rate, body.result], [ngnJpy, multiplyTo('100000', ngnJpy, 0)]);
    }

    const year = byUrl('/api/v1/history?from=EUR&to=NGN&range=1y');
    // Frankfurter publishes EUR→NGN itself, on its own calendar: TARGET holidays such as Good Friday included.
    const yearDays = weekdaysBetween('2025-02-12', ECB_DAILY_DAY);
    assert.ok(yearDays.includes('2025-04-18') && !ecbDaysBetween('2025-02-12', ECB_DAILY_DAY).includes('2025-04-18'));
    for (const body of year) {
      const points = body.points as Array<{ date: string; rate: string }>;
      assert.deepEqual(
        points,
        yearDays.map((date) => ({ date, rate: frankfurterRate('NGN', date) })),
      );
      assert.equal(body.count, yearDays.length);
    }
    const fiveYears = byUrl('/api/v1/history?from=NGN&to=GBP&range=5y');
    const fiveYearDays = ecbDaysBetween('2021-02-12', ECB_DAILY_DAY);
    for (const body of fiveYears) {
      // Each point crosses ECB's GBP and Frankfurter's NGN of that same day.
      assert.deepEqual(
        body.points,
        fiveYearDays.map((date) => ({ date, rate: divideTo8(ecbRate('GBP', date), frankfurterRate('NGN', date)) })),
      );
    }
    const csv = String(byUrl('/api/v1/history?from=EUR&to=NGN&range=1m&format=csv')[0]!.text);
    const monthDays = weekdaysBetween('2026-01-12', ECB_DAILY_DAY);
    assert.equal(csv, `date,rate\r\n${monthDays.map((d) => `${d},${frankfurterRate('NGN', d)}\r\n`).join('')}`);

    const stored = await service.deps.rates.series('frankfurter', ['NGN'], { from: '2000-01-01', to: '2100-01-01' });
    const expectedDays = weekdaysBetween(RETENTION_START, ECB_DAILY_DAY);
    assert.equal(stored.length, expectedDays.length);
    assert.deepEqual(
      stored.map((q) => [q.day, q.rate]),
      expectedDays.map((d) => [d, frankfurterRate('NGN', d)]),
    );
    assert.ok(expectedDays.length > 5 * 260, 'about five years of weekdays');

    const metrics = parseMetrics(await service.deps.metricsText());
    assert.equal(metrics.get(sampleKey('exrates_backfills_total', { provider: 'frankfurter', outcome: 'stored' })), 1);
  });

  it('answers later requests for the currency without upstream calls', async () => {
    const calls = fake.totalCalls();
    for (const url of [
      '/api/v1/rate?from=NGN&to=EUR',
      '/api/v1/rate?from=CHF&to=NGN',
      '/api/v1/convert?from=NGN&to=USD&amount=5000',
      '/api/v1/history?from=NGN&to=JPY&range=3m',
      '/api/v1/history?from=NGN&to=NGN&range=1m',
    ]) {
      assert.equal((await service.get(url)).status, 200, url);
    }
    assert.equal(fake.totalCalls(), calls);
  });

  it('then asks for the currency in every refresh, latest only', async () => {
    fake.requests.length = 0;
    const [, frankfurter] = await service.deps.refresher.refreshAll();
    assert.equal(frankfurter!.ok, true, frankfurter!.error);
    const asked = fake.requests.filter((u) => u.pathname === RATES);
    assert.equal(asked.length, 1);
    assert.deepEqual(Object.fromEntries(asked[0]!.searchParams), { base: 'EUR', quotes: 'NGN' });

    // A second backfilled currency joins the same refresh request.
    assert.equal((await service.get('/api/v1/convert?from=EUR&to=KES&amount=1')).status, 200);
    fake.requests.length = 0;
    await service.deps.refresher.refreshAll();
    const both = fake.requests.filter((u) => u.pathname === RATES);
    assert.equal(both.length, 1);
    assert.deepEqual(Object.fromEntries(both[0]!.searchParams), { base: 'EUR', quotes: 'KES,NGN' });
  });
});

describe('cross rates between ECB and Frankfurter', () => {
  beforeEach(() => fake.reset());

  it('use the newest day both published when ECB is a day behind, never mixing days', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      // ECB holds 2026-02-10 as newest; Frankfurter has published 2026-02-11 too.
      const day = '2026-02-10';
      const ngn = frankfurterRate('NGN', day);
      assert.notEqual(ngn, frankfurterRate('NGN', ECB_DAILY_DAY));
      const gbpNgn = await service.get('/api/v1/rate?from=GBP&to=NGN');
      assert.equal(gbpNgn.body.rate, divideTo8(ngn, ecbRate('GBP', day)));
      assert.match(String(gbpNgn.body.asOf), /^2026-02-10T/);
      const ngnGbp = await service.get('/api/v1/rate?from=NGN&to=GBP');
      assert.equal(ngnGbp.body.rate, divideTo8(ecbRate('GBP', day), ngn));
      assert.match(String(ngnGbp.body.asOf), /^2026-02-10T/);
    } finally {
      await service.close();
    }
  });

  it('use the newest day both published when Frankfurter is behind', async () => {
    fake.frankfurter.latestDay = '2026-02-06';
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      await service.deps.refresher.refreshAll();
      const day = '2026-02-06';
      const answer = await service.get('/api/v1/rate?from=GBP&to=KES');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.rate, divideTo8(frankfurterRate('KES', day), ecbRate('GBP', day)));
      assert.match(String(answer.body.asOf), /^2026-02-06T/);
      const ghs = await service.get('/api/v1/rate?from=GHS&to=KES');
      // Both from Frankfurter: the plain ratio of its own two rates that day.
      assert.equal(ghs.body.rate, divideTo8(frankfurterRate('KES', day), frankfurterRate('GHS', day)));
    } finally {
      await service.close();
    }
  });
});

describe('a currency no provider quotes', () => {
  beforeEach(() => fake.reset());

  it('is 400 unsupported_currency, asking upstream once at most', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      const first = await service.get('/api/v1/rate?from=EUR&to=XAU');
      assert.equal(first.status, 400);
      assert.deepEqual([first.body.code, first.body.param], ['unsupported_currency', 'to']);
      assert.equal(fake.calls(CURRENCIES), 1);
      assert.equal(fake.calls(RATES), 0);

      const calls = fake.totalCalls();
      for (const url of [
        '/api/v1/rate?from=EUR&to=XAU',
        '/api/v1/rate?from=xau&to=USD',
        '/api/v1/convert?from=AFN&to=EUR&amount=3',
        '/api/v1/history?from=USD&to=AFN',
      ]) {
        const answer = await service.get(url);
        assert.deepEqual([answer.status, answer.body.code], [400, 'unsupported_currency'], url);
      }
      assert.equal(fake.totalCalls(), calls, 'no further upstream calls');

      const notIso = await service.get('/api/v1/rate?from=EUR&to=XYZ');
      assert.deepEqual([notIso.status, notIso.body.code], [400, 'invalid_currency']);
      assert.equal(fake.totalCalls(), calls);
    } finally {
      await service.close();
    }
  });
});

describe('a backfill while Frankfurter fails', () => {
  beforeEach(() => fake.reset());

  it('answers 503 feed_unavailable with Retry-After, stores nothing, and succeeds once Frankfurter is back', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      const count = await service.deps.rates.countQuotes();
      await fake.frankfurter.setMode('refused');
      for (const url of ['/api/v1/rate?from=EUR&to=NGN', '/api/v1/convert?from=NGN&to=USD&amount=1', '/api/v1/history?from=GBP&to=NGN']) {
        const answer = await service.get(url);
        assert.equal(answer.status, 503, url);
        assert.equal(answer.body.code, 'feed_unavailable');
        assert.match(String(answer.headers['retry-after']), /^[1-9][0-9]*$/);
      }
      assert.equal(await service.deps.rates.countQuotes(), count);
      const metrics = parseMetrics(await service.deps.metricsText());
      assert.equal(metrics.get(sampleKey('exrates_backfills_total', { provider: 'frankfurter', outcome: 'failure' })), 3);

      await fake.frankfurter.setMode('ok');
      const answer = await service.get('/api/v1/rate?from=EUR&to=NGN');
      // EUR→NGN is Frankfurter's own rate, so its newest day counts even while ECB's is older.
      assert.deepEqual([answer.status, answer.body.rate], [200, frankfurterRate('NGN', FRANKFURTER_LATEST)]);
    } finally {
      await service.close();
    }
  });

  const failing: FailureMode[] = ['http500', 'hang', 'truncated', 'zero-rate', 'negative', 'non-numeric', 'refused'];
  it(`answers 503 for a series that fails (${failing.join(', ')}) once the currency list is known, storing nothing`, async () => {
    const service = await createFeedsService(fake, { copyFrom: template, env: { EXRATES_UPSTREAM_TIMEOUT_MS: '600' } });
    try {
      assert.equal((await service.get('/api/v1/rate?from=EUR&to=NGN')).status, 200);
      const count = await service.deps.rates.countQuotes();
      for (const mode of failing) {
        await fake.frankfurter.setMode(mode);
        const answer = await service.get('/api/v1/rate?from=USD&to=KES');
        assert.deepEqual([answer.status, answer.body.code], [503, 'feed_unavailable'], mode);
        assert.match(String(answer.headers['retry-after']), /^[1-9][0-9]*$/);
        assert.equal(await service.deps.rates.countQuotes(), count, mode);
      }
      await fake.frankfurter.setMode('ok');
      const answer = await service.get('/api/v1/rate?from=EUR&to=KES');
      assert.deepEqual([answer.status, answer.body.rate], [200, frankfurterRate('KES', FRANKFURTER_LATEST)]);
    } finally {
      await service.close();
    }
  });

  it('treats an empty series for a listed currency as a feed failure, not as an unsupported currency', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      // Frankfurter lists NGN, but this answer to the five-year request is an empty array.
      await fake.frankfurter.setMode('partial');
      const failed = await service.get('/api/v1/rate?from=EUR&to=NGN');
      assert.equal(fake.calls(RATES), 1);
      assert.equal(await service.deps.rates.latestDay('frankfurter'), null);
      assert.deepEqual([failed.status, failed.body.code], [503, 'feed_unavailable']);

      // A passing upstream problem must not make a listed currency unsupported for an hour.
      await fake.frankfurter.setMode('ok');
      const answer = await service.get('/api/v1/rate?from=EUR&to=NGN');
      assert.deepEqual([answer.status, answer.body.rate], [200, frankfurterRate('NGN', FRANKFURTER_LATEST)]);
    } finally {
      await service.close();
    }
  });

  it('drops a row dated in the future from a backfilled series and keeps the rest', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      await fake.frankfurter.setMode('future-date');
      const answer = await service.get('/api/v1/rate?from=EUR&to=GHS');
      assert.equal(answer.status, 200);
      const stored = await service.deps.rates.series('frankfurter', ['GHS'], { from: '2026-02-01', to: '2100-01-01' });
      // The newest row (2026-02-11) came back dated 2026-02-13; everything else is as published.
      assert.deepEqual(
        stored.map((q) => [q.day, q.rate]),
        weekdaysBetween('2026-02-02', '2026-02-10').map((d) => [d, frankfurterRate('GHS', d)]),
      );
    } finally {
      await service.close();
    }
  });
});
