/**
 * At start every provider loads at once, and each goes on to its regular refreshes as soon as its
 * own first load ends: a bank whose first load takes minutes (asked a day at a time) holds back
 * no other provider. Real HTTP stand-ins, a real SQLite store, the service's own refresher.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds } from '../support/apps.js';
import type { FakeUpstreams } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

let fake: FakeUpstreams;

before(async () => ({ fake } = await startFakeFeeds()));
after(() => closeFakeFeeds(fake));

describe('the first loads at start', () => {
  it('a provider whose first load hangs holds back no other provider’s scheduled refreshes', async () => {
    // Refreshes every second; the ECB never answers until its requests time out after 6 s.
    const service = await createFeedsService(fake, { env: { EXRATES_REFRESH_SECONDS: '1', EXRATES_UPSTREAM_TIMEOUT_MS: '6000' } });
    await fake.ecb.setMode('hang');
    const refreshes = (provider: string) => service.log.lines.filter((line) => line.msg === 'refresh done' && line.provider === provider).length;
    const begun = performance.now();
    const started = service.deps.refresher.start();
    try {
      // Frankfurter's first refresh and two more on the 1-second schedule, within 5 s: the ECB's
      // first load, which nothing answers, can end only when its request times out, after 6 s.
      await waitFor(() => refreshes('frankfurter') >= 3, 5_000, 'three refreshes of frankfurter', 50);
      assert.ok(performance.now() - begun < 6_000);
      assert.equal(refreshes('ecb'), 0, 'the ECB’s first load is still waiting');
      await started;
      assert.ok(performance.now() - begun >= 6_000, 'every first load has ended, the ECB’s by its timeout');
    } finally {
      await service.close();
    }
  });
});
