/// <reference lib="dom" />
/**
 * The API reference at /docs, in Chromium against a live server: it renders from installed files
 * only, shows the copy-paste examples, and "try it" with a key given under Authorize reaches this
 * server and shows its answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helper.js';
import { chromiumAvailable, DESKTOP, launchBrowser, screenshot, watch, type Browser } from './browser.js';
import { listeningTestApp } from '../support/apps.js';

const available = chromiumAvailable();

describe('the API reference at /docs, in Chromium', { skip: !available }, () => {
  let test: TestApp;
  let browser: Browser;
  let base: string;
  let key: string;

  before(async () => {
    ({ test, base, key } = await listeningTestApp());
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await test?.close();
  });

  it('renders the document with its examples, and "try it" runs against this server with the authorized key', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await page.setViewportSize(DESKTOP);
      const response = await page.goto(`${base}/docs`);
      assert.equal(response!.status(), 200);
      const csp = response!.headers()['content-security-policy']!;
      assert.match(csp, /connect-src 'self'/);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/);
      await page.waitForSelector('.swagger-ui .info .title');
      assert.match((await page.textContent('.swagger-ui .info .title'))!, /exrates/);

      // The examples: curl, TypeScript with openapi-typescript + openapi-fetch, Python requests.
      const info = (await page.textContent('.swagger-ui .info .description'))!;
      assert.match(info, /curl -s -H "X-Api-Key: \$EXRATES_KEY"/);
      assert.match(info, /npx openapi-typescript http:\/\/localhost:8080\/api\/v1\/openapi\.json/);
      assert.match(info, /import createClient from 'openapi-fetch'/);
      assert.match(info, /import requests/);
      assert.equal(await page.locator('.swagger-ui .info .description pre').count(), 3);

      // Authorize with the key (header scheme).
      await page.click('.swagger-ui .auth-wrapper .authorize');
      const headerScheme = page.locator('.swagger-ui .modal-ux .auth-container').filter({ hasText: 'X-Api-Key' });
      await headerScheme.locator('input').fill(key);
      await headerScheme.locator('button.authorize').click();
      await page.click('.swagger-ui .modal-ux .btn-done');

      // Try getRate.
      const operation = page.locator('#operations-rates-getRate');
      await operation.locator('.opblock-summary').click();
      await operation.locator('tr[data-param-name="from"] input').fill('GBP');
      await operation.locator('tr[data-param-name="to"] input').fill('usd');
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      assert.equal((await status.textContent())!.trim(), '200');
      const body = JSON.parse((await operation.locator('.live-responses-table .response-col_description pre.microlight').first().textContent())!);
      const direct = await (await fetch(`${base}/api/v1/rate?from=GBP&to=usd`, { headers: { 'X-Api-Key': key } })).json();
      assert.deepEqual(body, direct);
      assert.equal(body.pair, 'GBPUSD');
      const tried = seen.requests.filter((url) => url.includes('/api/v1/rate?'));
      assert.deepEqual(tried, [`${base}/api/v1/rate?from=GBP&to=usd`], 'the request went to this server');

      await screenshot(page, 'docs-desktop');
      assert.deepEqual(seen.errors, []);
      const foreign = seen.requests.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('data:'));
      assert.deepEqual(foreign, [], 'everything comes from this server');
    } finally {
      await page.close();
    }
  });
});
