import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds } from '../support/apps.js';
import { parseMetrics, sampleKey } from '../support/prometheus.js';
import { ECB_DAILY_DAY, ECB_HISTORY_THROUGH, ecbDaysBetween, ecbRow, type FakeUpstreams } from '../support/upstreams.js';
import { settleUntil } from '../support/wait.js';
import { isoCurrency } from '../../src/core/currencies.js';

/** 61 months back from 2026-02-12: the retained window starts here. */
const RETENTION_START = '2021-01-12';
const DAILY = '/ecb/eurofxref-daily.xml';
const ZIP = '/ecb/eurofxref-hist.zip';
const FRANKFURTER_RATES = '/frankfurter/v2/rates';
const NINETY_DAYS = '/ecb/eurofxref-hist-90d.xml';
const EVERYTHING = { from: '2000-01-01', to: '2100-01-01' };

/** Quotes ECB published on the days in a range: withdrawn codes (HRK) until their withdrawal, as published. */
function ecbQuoteCount(from: string, to: string): number {
  return ecbDaysBetween(from, to)
    .map((day) => Object.keys(ecbRow(day)!.rates).filter((code) => {
      const currency = isoCurrency(code);
      return currency !== undefined && (currency.withdrawn === undefined || day < currency.withdrawn);
    }).length)
    .reduce((a, b) => a + b, 0);
}

let fake: FakeUpstreams;
let template: string;

before(async () => ({ fake, template } = await startFakeFeeds()));
after(() => closeFakeFeeds(fake));
beforeEach(() => fake.reset());

/** Lets the real I/O of a refresh finish while a faked clock stands still. */
const settleRefresh = (done: () => Promise<boolean>) => settleUntil(done, 'a refresh to finish', 5_000);

describe('refresh cycle', () => {
  it('loads the retained ECB history into an empty store, then adds the new day from the daily file', async () => {
    const service = await createFeedsService(fake);
    try {
      const [ecb, frankfurter] = await service.deps.refresher.refreshAll();
      assert.equal(ecb!.ok, true, ecb!.error);
      assert.equal(ecb!.latestDay, ECB_HISTORY_THROUGH);
      // Nothing backfilled yet, so the wide provider has nothing to ask for.
      assert.deepEqual([frankfurter!.ok, frankfurter!.quotes], [true, 0]);
      assert.equal(fake.calls(ZIP), 1);
      assert.equal(fake.calls(DAILY), 0);
      assert.equal(fake.frankfurter.calls(), 0);

      const rates = service.deps.rates;
      const expectedHistory = ecbQuoteCount(RETENTION_START, ECB_HISTORY_THROUGH);
      assert.equal(await rates.countQuotes(), expectedHistory);
      const stored = await rates.publishedDays('ecb', { from: '2000-01-01', to: '2100-01-01' });
      assert.deepEqual(stored, ecbDaysBetween(RETENTION_START, ECB_HISTORY_THROUGH));
      assert.equal(stored[0], RETENTION_START);
      const usdOn = async (day: string) => (await rates.quotesOn('ecb', day)).find((q) => q.quote === 'USD')?.rate;
      assert.equal(await usdOn('2026-02-10'), '1.1894');
      assert.equal(await usdOn('2021-01-12'), ecbRow('2021-01-12')!.rates['USD']);

      const before = await service.get('/api/v1/rate?from=EUR&to=USD');
      assert.equal(before.status, 200);
      assert.deepEqual(
        { rate: before.body.rate, asOf: before.body.asOf, stale: before.body.stale },
        { rate: '1.1894', asOf: '2026-02-10T15:00:00Z', stale: false },
      );

      const [next] = await service.deps.refresher.refreshAll();
      assert.equal(next!.ok, true, next!.error);
      assert.deepEqual([next!.latestDay, next!.days, next!.quotes], [ECB_DAILY_DAY, 1, 29]);
      assert.equal(fake.calls(DAILY), 1);
      assert.equal(fake.calls(ZIP), 1, 'a store that is up to date does not download the history again');
      assert.equal(await rates.countQuotes(), expectedHistory + 29);
      // The daily file writes fixed decimals; the text is kept as published.
      assert.equal(await usdOn(ECB_DAILY_DAY), '1.1900');

      const after = await service.get('/api/v1/rate?from=EUR&to=USD');
      assert.deepEqual(
        { rate: after.body.rate, asOf: after.body.asOf, stale: after.body.stale },
        { rate: '1.19', asOf: '2026-02-11T15:00:00Z', stale: false },
      );
    } finally {
      await service.close();
    }
  });

  it('runs one upstream request per provider when refreshes are asked for concurrently', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      assert.equal((await service.get('/api/v1/rate?from=EUR&to=NGN')).status, 200);
      fake.requests.length = 0;
      const baseline = { daily: fake.calls(DAILY), rates: fake.calls(FRANKFURTER_RATES) };
      // A slow answer keeps the first refresh in flight while the others are asked for.
      fake.ecb.delayMs = 200;
      fake.frankfurter.delayMs = 200;
      const refresher = service.deps.refresher;
      const [first, second, ecbAlone] = await Promise.all([
        refresher.refreshAll(),
        refresher.refreshAll(),
        refresher.refreshProvider(service.deps.providers[0]!),
      ]);
      assert.equal(fake.calls(DAILY) - baseline.daily, 1);
      assert.equal(fake.calls(FRANKFURTER_RATES) - baseline.rates, 1);
      // Every caller gets the outcome of the one refresh that ran.
      assert.equal(first[0], second[0]);
      assert.equal(first[1], second[1]);
      assert.equal(first[0], ecbAlone);
      assert.deepEqual([first[0]!.ok, first[0]!.latestDay, first[1]!.ok, first[1]!.quotes], [true, ECB_DAILY_DAY, true, 1]);

      // Sharing lasts only while a refresh is running: the next one asks again.
      await refresher.refreshAll();
      assert.equal(fake.calls(DAILY) - baseline.daily, 2);
      assert.equal(fake.calls(FRANKFURTER_RATES) - baseline.rates, 2);
    } finally {
      await service.close();
    }
  });

  it('answers rate, convert and history for stored currencies without calling upstream', async () => {
    const service = await createFeedsService(fake, { copyFrom: template });
    try {
      assert.equal((await service.get('/api/v1/rate?from=EUR&to=NGN')).status, 200);
      const calls = fake.totalCalls();
      const urls = [
        '/api/v1/rate?from=EUR&to=USD',
        '/api/v1/rate?from=gbp&to=jpy',
        '/api/v1/rate?from=NGN&to=CHF',
        '/api/v1/convert?from=USD&to=NGN&amount=250',
        '/api/v1/convert?from=EUR&to=EUR&amount=1',
        '/api/v1/history?from=EUR&to=USD&range=1m',
        '/api/v1/history?from=NGN&to=GBP&range=5y',
        '/api/v1/history?from=SEK&to=NOK&range=3m&format=csv',
      ];
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(urls.map((url) => service.get(url)));
        assert.deepEqual(
          answers.map((a) => a.status),
          urls.map(() => 200),
        );
      }
      assert.equal(fake.totalCalls(), calls);
    } finally {
      await service.close();
    }
  });

  it('refreshes on its own every EXRATES_REFRESH_SECONDS once started, and not after stop', async () => {
    const service = await createFeedsService(fake, { copyFrom: template, env: { EXRATES_REFRESH_SECONDS: '1' } });
    // The fetch machinery is set up before the clock is faked, so it keeps real timers.
    await (await fetch(`${fake.ecb.url}/eurofxref-daily.xml`)).arrayBuffer();
    const baseline = fake.calls(DAILY);
    const refreshes = () => fake.calls(DAILY) - baseline;
    const successes = async () =>
      parseMetrics(await service.deps.metricsText()).get(sampleKey('exrates_refresh_total', { provider: 'ecb', outcome: 'success' })) ?? 0;
    // Half a second past a wall-clock multiple of the interval: the first scheduled refresh is 500 ms away.
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-02-12T12:00:00.500Z') });
    try {
      await service.deps.refresher.start();
      assert.equal(refreshes(), 1, 'the refresh at start');
      mock.timers.tick(499);
      assert.equal(refreshes(), 1);
      mock.timers.tick(1);
      await settleRefresh(async () => (await successes()) === 2);
      assert.equal(refreshes(), 2, 'on the next multiple of the interval');
      mock.timers.tick(999);
      assert.equal(refreshes(), 2);
      mock.timers.tick(1);
      await settleRefresh(async () => (await successes()) === 3);
      assert.equal(refreshes(), 3, 'and every interval after it');

      await service.deps.refresher.stop();
      assert.equal(await service.deps.rates.latestDay('ecb'), ECB_DAILY_DAY);
      mock.timers.tick(10_000);
      await settleRefresh(async () => true);
      assert.equal(refreshes(), 3, 'a stopped refresher schedules nothing');
    } finally {
      mock.timers.reset();
      await service.close();
    }
  });

  it('backs off after failures, 15 s then doubling, and returns to the interval after a success', async () => {
    const service = await createFeedsService(fake, { copyFrom: template, env: { EXRATES_REFRESH_SECONDS: '600' } });
    // The fetch machinery is set up before the clock is faked, so it keeps real timers.
    await (await fetch(`${fake.ecb.url}/eurofxref-daily.xml`)).arrayBuffer();
    await fake.ecb.setMode('http500');
    const baseline = fake.calls(DAILY);
    const refreshes = () => fake.calls(DAILY) - baseline;
    const failures = async () =>
      parseMetrics(await service.deps.metrics.registry.metrics()).get(sampleKey('exrates_refresh_total', { provider: 'ecb', outcome: 'failure' })) ?? 0;
    const successes = async () =>
      parseMetrics(await service.deps.metrics.registry.metrics()).get(sampleKey('exrates_refresh_total', { provider: 'ecb', outcome: 'success' })) ?? 0;

    // One second after a wall-clock multiple of 600 s: the first refresh is 599 s away.
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-02-12T12:00:01Z') });
    try {
      service.deps.refresher.start();
      mock.timers.tick(598_999);
      assert.equal(refreshes(), 0);
      mock.timers.tick(1);
      await settleRefresh(async () => (await failures()) === 1);
      assert.equal(refreshes(), 1);

      for (const [n, backoff] of [
        [2, 15_000],
        [3, 30_000],
        [4, 60_000],
        [5, 120_000],
        [6, 240_000],
      ] as const) {
        mock.timers.tick(backoff - 1);
        assert.equal(refreshes(), n - 1, `no retry before ${backoff} ms`);
        mock.timers.tick(1);
        await settleRefresh(async () => (await failures()) === n);
        assert.equal(refreshes(), n, `retry ${n - 1} after ${backoff} ms`);
      }

      // The sixth failure was at 12:17:45; 480 s of backoff would overshoot the scheduled refresh at 12:20:00.
      await fake.ecb.setMode('ok');
      mock.timers.tick(134_999);
      assert.equal(refreshes(), 6);
      mock.timers.tick(1);
      await settleRefresh(async () => (await successes()) === 1);
      assert.equal(refreshes(), 7);

      // After a success the schedule is the plain interval again.
      mock.timers.tick(599_999);
      assert.equal(refreshes(), 7);
      mock.timers.tick(1);
      await settleRefresh(async () => (await successes()) === 2);
      assert.equal(refreshes(), 8);
    } finally {
      mock.timers.reset();
      await service.close();
    }
  });
});

describe('ECB history across a restart', () => {
  it('continues with the next day from the daily file, without a gap or a duplicate', async () => {
    const first = await createFeedsService(fake);
    const [loaded] = await first.deps.refresher.refreshAll();
    assert.equal(loaded!.latestDay, ECB_HISTORY_THROUGH);
    const loadedCount = await first.deps.rates.countQuotes();
    assert.equal(loadedCount, ecbQuoteCount(RETENTION_START, ECB_HISTORY_THROUGH));
    await first.close();

    const second = await createFeedsService(fake, { databaseFile: first.databaseFile });
    try {
      assert.equal(await second.deps.rates.countQuotes(), loadedCount);
      const [refreshed] = await second.deps.refresher.refreshAll();
      assert.deepEqual([refreshed!.ok, refreshed!.latestDay, refreshed!.quotes], [true, ECB_DAILY_DAY, 29]);
      assert.equal(fake.calls(ZIP), 1, 'the history was not downloaded again');
      assert.equal(fake.calls(DAILY), 1);

      const days = await second.deps.rates.publishedDays('ecb', EVERYTHING);
      assert.deepEqual(days, ecbDaysBetween(RETENTION_START, ECB_DAILY_DAY));
      assert.deepEqual(days.slice(-3), ['2026-02-09', '2026-02-10', '2026-02-11']);
      assert.equal(await second.deps.rates.countQuotes(), loadedCount + 29);
      const usd = (await second.deps.rates.series('ecb', ['USD'], { from: '2026-02-09', to: '2026-02-12' })).map((q) => [q.day, q.rate]);
      assert.deepEqual(usd, [
        ['2026-02-09', ecbRow('2026-02-09')!.rates['USD']],
        ['2026-02-10', '1.1894'],
        ['2026-02-11', '1.1900'],
      ]);
    } finally {
      await second.close();
    }

    // The same daily file after another restart rewrites its day in place.
    const third = await createFeedsService(fake, { databaseFile: first.databaseFile });
    try {
      const [again] = await third.deps.refresher.refreshAll();
      assert.equal(again!.ok, true);
      assert.equal(fake.calls(DAILY), 2);
      assert.equal(await third.deps.rates.countQuotes(), loadedCount + 29);
      assert.deepEqual(await third.deps.rates.publishedDays('ecb', EVERYTHING), ecbDaysBetween(RETENTION_START, ECB_DAILY_DAY));
      const rate = await third.get('/api/v1/rate?from=EUR&to=USD');
      assert.deepEqual([rate.body.rate, rate.body.asOf, rate.body.stale], ['1.19', '2026-02-11T15:00:00Z', false]);
    } finally {
      await third.close();
    }
  });

  it('fills a longer gap from the 90-day file after a restart', async () => {
    fake.ecb.historyThrough = '2026-01-30';
    const first = await createFeedsService(fake);
    const [loaded] = await first.deps.refresher.refreshAll();
    assert.equal(loaded!.latestDay, '2026-01-30');
    const loadedCount = await first.deps.rates.countQuotes();
    await first.close();

    // Meanwhile ECB published through 2026-02-11; more than four days are missing.
    fake.ecb.historyThrough = ECB_DAILY_DAY;
    const second = await createFeedsService(fake, { databaseFile: first.databaseFile });
    try {
      const [refreshed] = await second.deps.refresher.refreshAll();
      assert.equal(refreshed!.ok, true, refreshed!.error);
      assert.deepEqual([fake.calls(ZIP), fake.calls(NINETY_DAYS), fake.calls(DAILY)], [1, 1, 0]);
      assert.deepEqual(await second.deps.rates.publishedDays('ecb', EVERYTHING), ecbDaysBetween(RETENTION_START, ECB_DAILY_DAY));
      assert.equal(refreshed!.days, ecbDaysBetween('2026-01-31', ECB_DAILY_DAY).length);
      assert.equal(await second.deps.rates.countQuotes(), loadedCount + ecbQuoteCount('2026-01-31', ECB_DAILY_DAY));
      const jpy = await second.deps.rates.quotesOn('ecb', '2026-02-02');
      assert.equal(jpy.find((q) => q.quote === 'JPY')!.rate, ecbRow('2026-02-02')!.rates['JPY']);
    } finally {
      await second.close();
    }
  });

  it('keeps serving as stale after a restart when the last refresh failed, until one succeeds', async () => {
    const first = await createFeedsService(fake, { copyFrom: template });
    await fake.ecb.setMode('http500');
    await first.deps.refresher.refreshAll();
    assert.equal((await first.get('/api/v1/rate?from=EUR&to=USD')).body.stale, true);
    await first.close();

    const second = await createFeedsService(fake, { databaseFile: first.databaseFile });
    try {
      assert.equal((await second.get('/api/v1/rate?from=EUR&to=USD')).body.stale, true);
      await fake.ecb.setMode('ok');
      await second.deps.refresher.refreshAll();
      assert.equal((await second.get('/api/v1/rate?from=EUR&to=USD')).body.stale, false);
    } finally {
      await second.close();
    }
  });

  it('keeps a backfilled currency in the refresh after a restart, without backfilling it again', async () => {
    const first = await createFeedsService(fake, { copyFrom: template });
    assert.equal((await first.get('/api/v1/rate?from=EUR&to=GHS')).status, 200);
    await first.close();

    fake.requests.length = 0;
    const second = await createFeedsService(fake, { databaseFile: first.databaseFile });
    try {
      await second.deps.refresher.refreshAll();
      const asked = fake.requests.filter((u) => u.pathname === '/frankfurter/v2/rates').map((u) => Object.fromEntries(u.searchParams));
      assert.deepEqual(asked, [{ base: 'EUR', quotes: 'GHS' }]);
      assert.equal((await second.get('/api/v1/rate?from=GHS&to=EUR')).status, 200);
      assert.equal(fake.requests.filter((u) => u.pathname === '/frankfurter/v2/currencies').length, 0);
    } finally {
      await second.close();
    }
  });
});
