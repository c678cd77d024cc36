/**
 * /readyz and old rates: a provider whose newest day lies further back than EXRATES_OLD_RATES_DAYS
 * is still served, so the instance stays ready, but the answer warns, naming the provider and the
 * day (the shared ECB history ends on 2026-03-05).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/apps.js';

describe('/readyz with rates older than EXRATES_OLD_RATES_DAYS', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ EXRATES_NOW: '2026-03-20T12:00:00Z', EXRATES_OLD_RATES_DAYS: '7' });
  });
  after(async () => {
    await t.close();
  });

  it('stays 200 and ready, and warns naming the provider and its newest day', async () => {
    const ready = await t.app.inject('/readyz');
    assert.equal(ready.statusCode, 200);
    const body = ready.json<{ status: string; providers: Array<{ id: string; latestDay: string }>; warnings?: string[] }>();
    assert.equal(body.status, 'ready');
    assert.deepEqual(
      body.providers.map((p) => [p.id, p.latestDay]),
      [['file', '2026-03-05']],
    );
    assert.deepEqual(body.warnings, [
      'the newest file rates are of 2026-03-05, 15 days before today (2026-03-20), and are served as the latest: give the provider a current source, or set EXRATES_NOW to replay that time (warned past EXRATES_OLD_RATES_DAYS=7)',
    ]);
  });
});
