/** /docs (and the document it renders) states the refresh interval the server is configured with. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { every } from '../../src/http/routes/documents.js';
import { createTestApp } from '../helper.js';

test('the interval in words', () => {
  assert.deepEqual([600, 60, 90, 300, 3600, 7200, 86400].map(every), ['10 minutes', 'minute', '90 seconds', '5 minutes', 'hour', '2 hours', 'day']);
});

for (const [seconds, words] of [['600', '10 minutes'], ['300', '5 minutes'], ['3600', 'hour']] as const) {
  test(`EXRATES_REFRESH_SECONDS=${seconds}: the document says rates refresh every ${words}`, async () => {
    const t = await createTestApp({ EXRATES_REFRESH_SECONDS: seconds }, { load: false });
    try {
      const description = (await t.app.inject('/api/v1/openapi.json')).json().info.description as string;
      assert.ok(description.includes(`**Freshness.** Live rates refresh every ${words}. `), description.slice(0, 600));
    } finally {
      await t.close();
    }
  });
}
