/**
 * The ECB's whole history behind EXRATES_HISTORY_YEARS=all, from its stand-in (the history file
 * zipped, as the ECB serves it): a store of five years gains the years before them at the first
 * start after the setting is raised, from one download, and later starts ask for nothing more,
 * its first day (1999-01-04) being reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, startFakeFeeds } from '../support/apps.js';
import type { FakeUpstreams } from '../support/upstreams.js';

const ALL = { EXRATES_HISTORY_YEARS: 'all', EXRATES_PROVIDERS: 'ecb' };

describe('the ECB with EXRATES_HISTORY_YEARS raised to all', () => {
  let fake: FakeUpstreams;
  let template: string;

  before(async () => {
    ({ fake, template } = await startFakeFeeds());
  });
  after(() => closeFakeFeeds(fake));

  it('loads the years before the stored five once, from one download, and says so; a restart asks for nothing more', async () => {
    const zip = '/ecb/eurofxref-hist.zip';
    const first = await createFeedsService(fake, { copyFrom: template, env: ALL });
    const storedFrom = await first.deps.rates.oldestDay('ecb');
    assert.ok(storedFrom! > '2021-01-01', String(storedFrom));
    const before = fake.calls(zip);
    const [outcome] = await first.deps.refresher.refreshAll();
    assert.equal(outcome?.ok, true, outcome?.error);
    assert.equal(fake.calls(zip) - before, 1);
    assert.equal(await first.deps.rates.oldestDay('ecb'), '1999-01-04');
    const messages = first.log.lines.map((line) => line['msg']);
    assert.ok(messages.includes(`history of ecb stored from ${storedFrom}: continuing the load back to 1999-01-04`), messages.join(' | '));
    const history = await first.get('/api/v1/history?from=EUR&to=USD&start=1999-01-04&end=1999-01-08');
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.deepEqual(history.body['points'], [
      { date: '1999-01-04', rate: '1.1789' },
      { date: '1999-01-05', rate: '1.179' },
      { date: '1999-01-06', rate: '1.1743' },
      { date: '1999-01-07', rate: '1.1632' },
      { date: '1999-01-08', rate: '1.1659' },
    ]);
    await first.close();

    const again = await createFeedsService(fake, { databaseFile: first.databaseFile, env: ALL });
    try {
      const calls = fake.calls(zip);
      const [refreshed] = await again.deps.refresher.refreshAll();
      assert.equal(refreshed?.ok, true, refreshed?.error);
      assert.equal(fake.calls(zip), calls);
      assert.ok(!again.log.lines.some((line) => String(line['msg']).includes('continuing the load')));
    } finally {
      await again.close();
    }
  });

  it('with the default, a store of five years stays as it is', async () => {
    const service = await createFeedsService(fake, { copyFrom: template, env: { EXRATES_PROVIDERS: 'ecb' } });
    try {
      const storedFrom = await service.deps.rates.oldestDay('ecb');
      const before = fake.calls('/ecb/eurofxref-hist.zip');
      const [outcome] = await service.deps.refresher.refreshAll();
      assert.equal(outcome?.ok, true, outcome?.error);
      assert.equal(fake.calls('/ecb/eurofxref-hist.zip'), before);
      assert.equal(await service.deps.rates.oldestDay('ecb'), storedFrom);
    } finally {
      await service.close();
    }
  });
});
