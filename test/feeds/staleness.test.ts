import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds, type FeedsService } from '../support/apps.js';
import { withoutUrls } from '../../src/http/routes/ops.js';
import { shortError } from '../../src/core/refresh.js';
import { parseMetrics, sampleKey } from '../support/prometheus.js';
import {
  ECB_DAILY_DAY,
  ECB_HISTORY_THROUGH,
  FAILURE_MODES,
  FEEDS_NOW,
  frankfurterRate,
  FUTURE_DAY,
  type FailureMode,
  type FakeUpstreams,
} from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';
import { listenApp } from '../support/ports.js';

const FAILED_AT = new Date(FEEDS_NOW).toISOString();
const DAILY = '/ecb/eurofxref-daily.xml';
const UPSTREAM_DELAY_MS = 3_000;
/** Far below the upstream delay: a request that waited on the refresh could not come in under it. */
const REQUEST_BUDGET_MS = 500;

/** What the recorded error says for each way the ECB feed can fail. */
const ECB_ERRORS: Record<FailureMode, RegExp> = {
  http500: /eurofxref-daily\.xml: HTTP 500/,
  hang: /eurofxref-daily\.xml: no complete answer within 600 ms/,
  truncated: /XML is not well-formed/,
  'zero-rate': /2026-02-11, USD: the rate is zero/,
  negative: /USD: "-1\.1900" is not a plain decimal/,
  'non-numeric': /USD: "NaN" is not a plain decimal/,
  'future-date': /rates dated 2026-02-13 are in the future \(today is 2026-02-12\)/,
  partial: /2026-02-11 lists 3 currencies against 29 on 2026-02-10; refusing a partial document/,
  refused: /eurofxref-daily\.xml: fetch failed: ECONNREFUSED/,
};

/** The same for Frankfurter, refreshing GHS, KES and NGN. */
const FRANKFURTER_ERRORS: Record<FailureMode, RegExp> = {
  http500: /v2\/rates\?base=EUR&quotes=GHS,KES,NGN: HTTP 500/,
  hang: /v2\/rates\?base=EUR&quotes=GHS,KES,NGN: no complete answer within 600 ms/,
  truncated: /invalid or truncated JSON/,
  'zero-rate': /NGN\): rate is .*not a positive number/,
  negative: /NGN\): rate is .*not a positive number/,
  'non-numeric': /NGN\): rate is .*not a positive number/,
  'future-date': /rates dated 2026-02-13 are in the future/,
  partial: /answered for 1 of the 3 currencies asked; refusing a partial document/,
  refused: /v2\/rates\?base=EUR&quotes=GHS,KES,NGN: fetch failed: ECONNREFUSED/,
};

let fake: FakeUpstreams;
/** ECB history through 2026-02-10. */
let ecbOnly: string;
/** The same plus GHS, KES and NGN backfilled from Frankfurter. */
let withExotics: string;

before(async () => {
  ({ fake, template: ecbOnly } = await startFakeFeeds());
  const service = await createFeedsService(fake, { copyFrom: ecbOnly });
  for (const code of ['NGN', 'KES', 'GHS']) {
    const answer = await service.get(`/api/v1/rate?from=EUR&to=${code}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
  await service.close();
  withExotics = service.databaseFile;
});
after(() => closeFakeFeeds(fake));
beforeEach(() => fake.reset());

async function metrics(service: FeedsService): Promise<Map<string, number>> {
  return parseMetrics(await service.deps.metricsText());
}

async function readiness(service: FeedsService, provider: string) {
  const answer = await service.app.inject({ method: 'GET', url: '/readyz' });
  const body = answer.json() as { status: string; providers: Array<Record<string, unknown>> };
  return { status: answer.statusCode, body, provider: body.providers.find((p) => p['id'] === provider)! };
}

/** A short upstream timeout where the upstream hangs, so the test does not wait long for it. */
const timeoutFor = (mode: FailureMode): Record<string, string> => (mode === 'hang' ? { EXRATES_UPSTREAM_TIMEOUT_MS: '600' } : {});

const refreshCount = (m: Map<string, number>, provider: string, outcome: string) =>
  m.get(sampleKey('exrates_refresh_total', { provider, outcome })) ?? 0;

describe('a failing ECB refresh', () => {
  for (const mode of FAILURE_MODES) {
    it(`${mode}: stores nothing, serves ECB rates as stale, counts and reports the failure until a good refresh`, async () => {
      const service = await createFeedsService(fake, { copyFrom: ecbOnly, env: timeoutFor(mode) });
      try {
        const rates = service.deps.rates;
        const countBefore = await rates.countQuotes();
        const newestBefore = await rates.quotesOn('ecb', ECB_HISTORY_THROUGH);
        assert.equal(newestBefore.length, 29);

        await fake.ecb.setMode(mode);
        const [ecb] = await service.deps.refresher.refreshAll();
        assert.equal(ecb!.ok, false);
        assert.match(ecb!.error!, ECB_ERRORS[mode]);

        assert.equal(await rates.countQuotes(), countBefore);
        assert.deepEqual(await rates.quotesOn('ecb', ECB_HISTORY_THROUGH), newestBefore);
        assert.deepEqual(await rates.quotesOn('ecb', ECB_DAILY_DAY), []);
        assert.deepEqual(await rates.quotesOn('ecb', FUTURE_DAY), []);
        assert.equal(await rates.latestDay('ecb'), ECB_HISTORY_THROUGH);

        const logged = service.log.lines.find((l) => l['provider'] === 'ecb' && l['msg'] === 'refresh failed; serving stored rates as stale');
        assert.ok(logged, 'the failure is logged');
        assert.equal(logged['level'], 40);
        // The console names the upstream by its host; the URL asked stays in the recorded error.
        assert.equal(logged['err'], shortError(ecb!.error!));
        assert.doesNotMatch(String(logged['err']), /https?:\/\/|eurofxref-daily\.xml/);

        const rate = await service.get('/api/v1/rate?from=EUR&to=USD');
        assert.equal(rate.status, 200);
        assert.deepEqual(rate.body, { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1894', asOf: '2026-02-10T15:00:00Z', stale: true });
        const convert = await service.get('/api/v1/convert?from=GBP&to=USD&amount=100');
        assert.equal(convert.status, 200);
        // 1.1894 / 0.8695 = 1.36791259…, and 100 × 1.3679126 rounded to cents.
        assert.deepEqual(
          { rate: convert.body.rate, result: convert.body.result, stale: convert.body.stale },
          { rate: '1.3679126', result: '136.79', stale: true },
        );

        let m = await metrics(service);
        assert.equal(refreshCount(m, 'ecb', 'failure'), 1);
        assert.equal(refreshCount(m, 'ecb', 'success'), 0);
        assert.equal(m.get('exrates_stale_responses_total'), 2);

        const ready = await readiness(service, 'ecb');
        assert.equal(ready.status, 200, 'stored rates can still be served');
        assert.equal(ready.provider['stale'], true);
        assert.equal(ready.provider['latestDay'], ECB_HISTORY_THROUGH);
        assert.equal(ready.provider['lastFailureAt'], FAILED_AT);
        // /readyz is public: the error without the upstream's origin and query (test/http/edge.test.ts).
        assert.equal(ready.provider['lastError'], withoutUrls(ecb!.error!));

        await fake.ecb.setMode('ok');
        const [recovered] = await service.deps.refresher.refreshAll();
        assert.equal(recovered!.ok, true, recovered!.error);
        assert.equal(await rates.countQuotes(), countBefore + 29);
        const fresh = await service.get('/api/v1/rate?from=EUR&to=USD');
        assert.deepEqual(
          { rate: fresh.body.rate, asOf: fresh.body.asOf, stale: fresh.body.stale },
          { rate: '1.19', asOf: '2026-02-11T15:00:00Z', stale: false },
        );
        m = await metrics(service);
        assert.equal(refreshCount(m, 'ecb', 'success'), 1);
        assert.equal(m.get('exrates_stale_responses_total'), 2);
        const readyAgain = await readiness(service, 'ecb');
        assert.equal(readyAgain.provider['stale'], false);
        assert.equal(readyAgain.provider['lastSuccessAt'], FAILED_AT);
        assert.equal(readyAgain.provider['latestDay'], ECB_DAILY_DAY);
      } finally {
        await service.close();
      }
    });
  }

  it('stays stale over repeated failures, each one counted', async () => {
    const service = await createFeedsService(fake, { copyFrom: ecbOnly });
    try {
      await fake.ecb.setMode('http500');
      for (let i = 0; i < 3; i++) await service.deps.refresher.refreshAll();
      assert.equal(fake.calls(DAILY), 3);
      assert.equal((await service.get('/api/v1/rate?from=CHF&to=SEK')).body.stale, true);
      assert.equal(refreshCount(await metrics(service), 'ecb', 'failure'), 3);
    } finally {
      await service.close();
    }
  });
});

describe('a failing Frankfurter refresh', () => {
  for (const mode of FAILURE_MODES) {
    it(`${mode}: keeps its stored rates and makes them stale, while ECB pairs stay fresh`, async () => {
      const service = await createFeedsService(fake, { copyFrom: withExotics, env: timeoutFor(mode) });
      try {
        const rates = service.deps.rates;
        const window = { from: '2026-02-01', to: '2026-02-28' };
        const exoticBefore = await rates.series('frankfurter', ['GHS', 'KES', 'NGN'], window);
        // Eight weekdays from 2026-02-02 to 2026-02-11, three currencies each.
        assert.equal(exoticBefore.length, 3 * 8);
        const countBefore = await rates.countQuotes();

        await fake.frankfurter.setMode(mode);
        const [ecb, frankfurter] = await service.deps.refresher.refreshAll();
        assert.equal(ecb!.ok, true, ecb!.error);
        assert.equal(frankfurter!.ok, false);
        assert.match(frankfurter!.error!, FRANKFURTER_ERRORS[mode]);

        assert.deepEqual(await rates.series('frankfurter', ['GHS', 'KES', 'NGN'], window), exoticBefore);
        assert.equal(await rates.countQuotes(), countBefore + 29, 'only ECB’s new day was stored');

        const ecbPair = await service.get('/api/v1/rate?from=USD&to=JPY');
        assert.deepEqual({ status: ecbPair.status, stale: ecbPair.body.stale, asOf: ecbPair.body.asOf }, { status: 200, stale: false, asOf: '2026-02-11T15:00:00Z' });
        const exotic = await service.get('/api/v1/rate?from=USD&to=NGN');
        assert.deepEqual({ status: exotic.status, stale: exotic.body.stale }, { status: 200, stale: true });
        const twoExotics = await service.get('/api/v1/rate?from=KES&to=GHS');
        assert.deepEqual({ status: twoExotics.status, stale: twoExotics.body.stale }, { status: 200, stale: true });

        const m = await metrics(service);
        assert.equal(refreshCount(m, 'frankfurter', 'failure'), 1);
        assert.equal(refreshCount(m, 'ecb', 'success'), 1);
        assert.equal(refreshCount(m, 'ecb', 'failure'), 0);
        const ready = await readiness(service, 'frankfurter');
        assert.equal(ready.provider['stale'], true);
        assert.equal(ready.provider['lastError'], withoutUrls(frankfurter!.error!));
        assert.equal((await readiness(service, 'ecb')).provider['stale'], false);

        await fake.frankfurter.setMode('ok');
        const [, recovered] = await service.deps.refresher.refreshAll();
        assert.equal(recovered!.ok, true, recovered!.error);
        assert.equal((await service.get('/api/v1/rate?from=USD&to=NGN')).body.stale, false);
      } finally {
        await service.close();
      }
    });
  }

  it('does not hold up the ECB refresh while it hangs', async () => {
    const service = await createFeedsService(fake, { copyFrom: withExotics, env: { EXRATES_UPSTREAM_TIMEOUT_MS: '1000' } });
    try {
      await fake.frankfurter.setMode('hang');
      const started = performance.now();
      let settled = false;
      const refreshing = service.deps.refresher.refreshAll().finally(() => {
        settled = true;
      });
      while ((await service.deps.rates.latestDay('ecb')) !== ECB_DAILY_DAY) {
        assert.equal(settled, false, 'ECB’s new day was not stored while Frankfurter hung');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(settled, false, 'ECB’s new day is stored while Frankfurter still hangs');
      const [ecb, frankfurter] = await refreshing;
      assert.equal(ecb!.ok, true);
      assert.match(frankfurter!.error!, /no complete answer within 1000 ms/);
      assert.ok(performance.now() - started >= 950, 'the Frankfurter request ran into its timeout');
    } finally {
      await service.close();
    }
  });
});

describe('a pair only Frankfurter takes part in', () => {
  it('EUR→NGN is Frankfurter’s own newest rate, fresh while ECB fails', async () => {
    const service = await createFeedsService(fake, { copyFrom: withExotics });
    try {
      await fake.ecb.setMode('http500');
      const [ecb, frankfurter] = await service.deps.refresher.refreshAll();
      assert.deepEqual([ecb!.ok, frankfurter!.ok], [false, true]);
      // Frankfurter published EUR→NGN for 2026-02-11 and refreshed fine; ECB quotes neither NGN nor this pair.
      const answer = await service.get('/api/v1/rate?from=EUR&to=NGN');
      assert.equal(answer.status, 200);
      assert.deepEqual(
        { rate: answer.body.rate, asOf: answer.body.asOf, stale: answer.body.stale },
        { rate: frankfurterRate('NGN', '2026-02-11'), asOf: '2026-02-11T00:00:00Z', stale: false },
      );
    } finally {
      await service.close();
    }
  });
});

describe('an empty store', () => {
  it('answers 503 feed_unavailable with Retry-After while no upstream can be reached, then serves once one can', async () => {
    const service = await createFeedsService(fake);
    try {
      await fake.ecb.setMode('refused');
      await fake.frankfurter.setMode('refused');
      const [ecb] = await service.deps.refresher.refreshAll();
      assert.match(ecb!.error!, /ECONNREFUSED/);
      assert.equal(await service.deps.rates.countQuotes(), 0);

      for (const url of ['/api/v1/rate?from=EUR&to=USD', '/api/v1/convert?from=GBP&to=JPY&amount=5', '/api/v1/history?from=USD&to=CHF', '/api/v1/rate?from=EUR&to=NGN']) {
        const answer = await service.get(url);
        assert.equal(answer.status, 503, url);
        assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
        assert.equal(answer.body.code, 'feed_unavailable');
        assert.match(String(answer.headers['retry-after']), /^[1-9][0-9]*$/);
      }
      const ready = await readiness(service, 'ecb');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'no rates loaded');
      assert.match(String(ready.provider['lastError']), /ECONNREFUSED/);

      await fake.ecb.setMode('ok');
      await fake.frankfurter.setMode('ok');
      const [loaded] = await service.deps.refresher.refreshAll();
      assert.equal(loaded!.ok, true, loaded!.error);
      const rate = await service.get('/api/v1/rate?from=EUR&to=USD');
      assert.deepEqual({ status: rate.status, rate: rate.body.rate, stale: rate.body.stale }, { status: 200, rate: '1.1894', stale: false });
      assert.equal((await readiness(service, 'ecb')).status, 200);
    } finally {
      await service.close();
    }
  });

  it('answers 503 while ECB is down even with Frankfurter up, since Frankfurter does not list ECB’s currencies', async () => {
    const service = await createFeedsService(fake);
    try {
      await fake.ecb.setMode('http500');
      await service.deps.refresher.refreshAll();
      const answer = await service.get('/api/v1/rate?from=EUR&to=USD');
      assert.equal(answer.status, 503);
      assert.equal(answer.body.code, 'feed_unavailable');
      assert.match(String(answer.headers['retry-after']), /^[1-9][0-9]*$/);
      assert.equal(fake.frankfurter.calls('/v2/rates'), 0);
    } finally {
      await service.close();
    }
  });
});

async function timedGet(base: string, key: string, path: string): Promise<{ ms: number; status: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
  const body = (await response.json()) as Record<string, unknown>;
  return { ms: performance.now() - started, status: response.status, body };
}

describe('a slow upstream during a refresh', () => {
  it('does not hold up requests for stored pairs, nor start a second refresh', async () => {
    const service = await createFeedsService(fake, { copyFrom: ecbOnly, env: { EXRATES_UPSTREAM_TIMEOUT_MS: '10000' } });
    try {
      const base = await listenApp(service.app);
      assert.equal((await timedGet(base, service.key, '/api/v1/rate?from=EUR&to=NGN')).status, 200);

      fake.ecb.delayMs = UPSTREAM_DELAY_MS;
      const started = performance.now();
      let settled = false;
      const refreshing = service.deps.refresher.refreshAll().finally(() => {
        settled = true;
      });
      await waitFor(() => fake.calls(DAILY) === 1, 2_000, 'the refresh to reach ECB');

      const paths = [
        '/api/v1/rate?from=EUR&to=USD',
        '/api/v1/rate?from=GBP&to=NGN',
        '/api/v1/convert?from=CHF&to=JPY&amount=250.5',
        '/api/v1/history?from=USD&to=SEK&range=3m',
      ];
      const timings: number[] = [];
      for (let round = 0; round < 5; round++) {
        for (const path of paths) {
          const answer = await timedGet(base, service.key, path);
          assert.equal(answer.status, 200, path);
          timings.push(answer.ms);
        }
        const burst = await Promise.all(paths.map((path) => timedGet(base, service.key, path)));
        for (const answer of burst) timings.push(answer.ms);
        // Asking again while a refresh runs joins it rather than starting another.
        void service.deps.refresher.refreshAll();
      }
      assert.equal(settled, false, 'the refresh is still waiting on ECB');
      assert.ok(performance.now() - started < UPSTREAM_DELAY_MS, 'all requests were answered within the delay');
      assert.equal(timings.length, 40);
      assert.ok(Math.max(...timings) < REQUEST_BUDGET_MS, `slowest request took ${Math.round(Math.max(...timings))} ms`);
      const during = await timedGet(base, service.key, '/api/v1/rate?from=EUR&to=USD');
      assert.deepEqual([during.body.rate, during.body.stale], ['1.1894', false]);

      const [ecb] = await refreshing;
      assert.ok(performance.now() - started >= UPSTREAM_DELAY_MS - 50);
      assert.deepEqual([ecb!.ok, ecb!.latestDay], [true, ECB_DAILY_DAY]);
      assert.equal(fake.calls(DAILY), 1, 'one upstream request for the refresh and every call that joined it');
      const fresh = await timedGet(base, service.key, '/api/v1/rate?from=EUR&to=USD');
      assert.deepEqual([fresh.body.rate, fresh.body.asOf, fresh.body.stale], ['1.19', '2026-02-11T15:00:00Z', false]);
    } finally {
      await service.close();
    }
  });

  it('does not hold up requests while an upstream hangs until its timeout', async () => {
    const service = await createFeedsService(fake, { copyFrom: ecbOnly, env: { EXRATES_UPSTREAM_TIMEOUT_MS: '800' } });
    try {
      const base = await listenApp(service.app);
      assert.equal((await timedGet(base, service.key, '/api/v1/rate?from=EUR&to=KES')).status, 200);
      await fake.ecb.setMode('hang');
      await fake.frankfurter.setMode('hang');
      const refreshing = service.deps.refresher.refreshAll();
      await waitFor(() => fake.ecb.calls() === 1 && fake.frankfurter.calls('/v2/rates') === 2, 1_000, 'both refreshes to reach upstream');
      for (const path of ['/api/v1/rate?from=KES&to=USD', '/api/v1/convert?from=EUR&to=KES&amount=10', '/api/v1/history?from=KES&to=GBP&range=1m']) {
        const answer = await timedGet(base, service.key, path);
        assert.equal(answer.status, 200, path);
        assert.ok(answer.ms < REQUEST_BUDGET_MS, `${path} took ${Math.round(answer.ms)} ms`);
      }
      const outcomes = await refreshing;
      assert.deepEqual(
        outcomes.map((o) => o.ok),
        [false, false],
      );
      const stale = await timedGet(base, service.key, '/api/v1/rate?from=KES&to=USD');
      assert.deepEqual([stale.status, stale.body.stale], [200, true]);
    } finally {
      await service.close();
    }
  });
});
