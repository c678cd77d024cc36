/// <reference lib="dom" />
/**
 * The API reference at /docs, in Chromium against a live server: it renders from installed files
 * only, under the portal's header, opens with a short introduction and the copy-paste examples
 * before the details, and "try it" with a key given under Authorize reaches this server and shows
 * its answer; on a phone nothing is wider than the screen.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helper.js';
import { chromiumAvailable, DESKTOP, launchBrowser, PHONE, screenshot, watch, type Browser } from './browser.js';
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

  it('has the portal\'s header, a link back to the portal, and a short introduction before the details, at 1280 and 390 px', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const page = await browser.context.newPage();
      const seen = watch(page);
      try {
        await page.setViewportSize(viewport);
        await page.goto(`${base}/docs`);
        await page.waitForSelector('.swagger-ui .info .title');
        const header = page.locator('header.exr-header');
        assert.equal(await header.count(), 1);
        assert.equal((await header.locator('.exr-brand').textContent())!.trim(), 'exrates');
        assert.equal((await header.locator('.exr-title').textContent())!.trim(), 'API reference');
        assert.equal(await header.locator('.exr-brand').getAttribute('href'), '/');
        assert.equal(await header.locator('nav a', { hasText: 'Portal' }).getAttribute('href'), '/');
        assert.ok(await header.locator('.exr-brand img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the icon loads');
        // Swagger UI's own top bar (its logo and dark-mode bulb) is gone.
        assert.equal(await page.locator('.swagger-ui .topbar').isVisible(), false);

        // The header is one row: every item on the brand's line, none wrapped below it.
        const boxes = await header.locator('.exr-brand, .exr-title, nav li').evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom, right: r.right })));
        const [brand, ...rest] = boxes;
        for (const box of rest) assert.ok(box.top < brand!.bottom && box.bottom > brand!.top, `${viewport.width} px: a header item wrapped (${JSON.stringify(boxes)})`);
        assert.ok(Math.max(...boxes.map((b) => b.right)) <= viewport.width, `${viewport.width} px: the header fits (${JSON.stringify(boxes)})`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.equal(overflow, 0, `${viewport.width} px: no horizontal scroll`);

        // The introduction: what the API is, how to get a key, the base URL; then the examples, then the details.
        const info = (await page.textContent('.swagger-ui .info .description'))!;
        assert.match(info, /^\s*Live mid-market exchange rates/);
        const [key, baseUrl, examples, details] = ['Key: ask keys@example.org', 'Base URL: /api/v1 on this server', 'Examples', 'Details'].map((text) => info.indexOf(text));
        assert.ok(key! > 0 && key! < baseUrl! && baseUrl! < examples! && examples! < details!, `intro, examples, details in order: ${info.slice(0, 400)}`);
        assert.ok(info.indexOf('Mid-market rates.') > details!, 'the long explanations come after the introduction and the examples');

        await screenshot(page, `docs-header-${viewport.width}`);
        assert.deepEqual(seen.errors, []);
      } finally {
        await page.close();
      }
    }
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
