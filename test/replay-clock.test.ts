/**
 * EXRATES_NOW starts the service's clock, which then runs: days end and quotas renew on it. The
 * machine's time is driven by node:test's mocked Date, so the half minute to midnight passes at
 * once, and the clock is the one createDeps makes from the configuration.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log.js';
import { issueKey, loadAll, tempDir, testConfig } from './helper.js';

test('EXRATES_NOW starts the clock, which then runs: a quota used up just before midnight is renewed just after it', async () => {
  const dir = tempDir();
  // The machine's time, held until the test moves it.
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-11-28T09:00:00Z') });
  const deps = await createDeps(testConfig(dir.path, { EXRATES_NOW: '2026-03-06T23:59:30Z', EXRATES_QUOTA_FREE: '1' }), { log: createLogger('silent') });
  const app = await buildApp(deps);
  try {
    await loadAll(deps);
    await app.ready();
    const key = await issueKey(deps, 'free');
    const rate = () => app.inject({ url: '/api/v1/rate?from=EUR&to=USD', headers: { 'X-Api-Key': key } });

    assert.equal(deps.clock.now().toISOString(), '2026-03-06T23:59:30.000Z');
    assert.equal((await rate()).statusCode, 200);
    const refused = await rate();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '30', 'the clock started at 23:59:30: midnight is 30 s away');

    mock.timers.tick(29_999);
    assert.equal(deps.clock.now().toISOString(), '2026-03-06T23:59:59.999Z', 'the clock runs with the machine');
    assert.equal((await rate()).statusCode, 429, 'still the same day');

    mock.timers.tick(1);
    const renewed = await rate();
    assert.equal(renewed.statusCode, 200, renewed.body);
    assert.equal(renewed.headers['x-ratelimit-remaining'], '0');
  } finally {
    mock.timers.reset();
    await app.close();
    await deps.close();
    dir.remove();
  }
});
