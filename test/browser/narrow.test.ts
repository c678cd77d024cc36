/**
 * The portal and /docs on a 390 px phone: nothing cut, no link dropped. Screenshots go to
 * test-artifacts/ (portal-390.png, docs-390.png).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, FIXED_NOW, type TestApp } from '../helper.js';
import { listenApp } from '../support/ports.js';
import { chromiumAvailable, launchBrowser, PHONE, screenshot, type Browser } from './browser.js';

const available = chromiumAvailable();

describe('at 390 px wide', { skip: !available }, () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  before(async () => {
    t = await createTestApp({ EXRATES_DEMO_KEY_TIER: 'pro', EXRATES_REFRESH_SECONDS: '300' });
    base = await listenApp(t.app);
    browser = await launchBrowser({ now: FIXED_NOW });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the portal shows every header link and each currency picker whole', async () => {
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize(PHONE);
      await page.goto(`${base}/?from=EUR&to=USD&amount=2500`);
      await page.waitForFunction(() => (document.getElementById('to-input') as HTMLInputElement).value === 'USD · US Dollar');
      const links = await page.$$eval('.nav-links a', (anchors) =>
        anchors.map((a) => {
          const box = a.getBoundingClientRect();
          return { href: a.getAttribute('href'), shown: box.width > 0 && box.left >= 0 && box.right <= document.documentElement.clientWidth };
        }),
      );
      assert.deepEqual(links, [
        { href: '/docs', shown: true },
        { href: '#code', shown: true },
        { href: '/api/v1/openapi.json', shown: true },
      ]);
      // Every currency the portal can show, in the picker as it shows it: no label wider than its box.
      const { currencies } = JSON.parse((await page.textContent('#portal-config')) ?? '{}') as { currencies: Array<{ code: string; name: string }> };
      assert.ok(currencies.length > 25);
      const cut = await page.evaluate((labels) => {
        const found: string[] = [];
        for (const id of ['from-input', 'to-input']) {
          const input = document.getElementById(id) as HTMLInputElement;
          const shown = input.value;
          for (const label of labels) {
            input.value = label;
            if (input.scrollWidth > input.clientWidth) found.push(`${id}: ${label}`);
          }
          input.value = shown;
        }
        return found;
      }, currencies.map((c) => `${c.code} · ${c.name}`));
      assert.deepEqual(cut, []);
      // From shares its row with the swap button; To, alone on its row, spans all of it.
      const rows = await page.evaluate(() => {
        const width = (selector: string) => Math.round(document.querySelector(selector)!.getBoundingClientRect().width);
        const from = document.querySelector('.combo[data-side="from"]')!.getBoundingClientRect();
        const swap = document.getElementById('swap')!.getBoundingClientRect();
        return { grid: width('#convert-form'), to: width('.combo[data-side="to"]'), fromAndSwap: Math.round(swap.right - from.left) };
      });
      assert.equal(rows.to, rows.grid, `the To picker (${rows.to} px) fills its row (${rows.grid} px)`);
      assert.equal(rows.fromAndSwap, rows.grid);
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'no sideways scrolling');
      await screenshot(page, 'portal-390');
    } finally {
      await page.close();
    }
  });

  it('the portal on a past day, with the table of every currency open, still needs no sideways scrolling', async () => {
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize(PHONE);
      await page.goto(`${base}/?from=EUR&to=USD&amount=123456789.5&date=2026-02-28&table=1`);
      await page.waitForSelector('#date-note:not([hidden])');
      await page.waitForFunction(() => document.getElementById('many-rows')!.children.length > 25 && document.getElementById('many-table')!.getAttribute('aria-busy') === 'false');
      assert.equal(await page.inputValue('#date'), '2026-02-28');
      // The widest figures the table holds: the amount in rupiah, and a rate of many digits.
      assert.match((await page.textContent('#many-rows tr[data-code="IDR"] td'))!, /^2,4\d\d,\d{3},\d{3},\d{3}\.\d\d$/);
      const widths = await page.evaluate(() => {
        const box = document.querySelector('.many-scroll')!;
        const cells = Array.from(document.querySelectorAll('#many-table th, #many-table td')).filter((cell) => cell.scrollWidth > cell.clientWidth).map((cell) => cell.textContent);
        return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, table: box.scrollWidth - box.clientWidth, cut: cells };
      });
      assert.deepEqual(widths, { page: 0, table: 0, cut: [] }, 'nothing wider than the screen, the table or its cells');
      await screenshot(page, 'portal-390-table');
    } finally {
      await page.close();
    }
  });

  it('/docs links the OpenAPI document and states the configured refresh interval', async () => {
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize(PHONE);
      await page.goto(`${base}/docs`);
      const link = page.locator('.swagger-ui .info a[href="/api/v1/openapi.json"]');
      await link.waitFor({ state: 'visible' });
      assert.equal(await link.textContent(), '/api/v1/openapi.json');
      assert.match((await page.locator('.swagger-ui .info').textContent()) ?? '', /Live rates refresh every 5 minutes\./);
      assert.equal(await page.locator('.swagger-ui .info a[href$="/docs/json"]').isVisible(), false);
      await screenshot(page, 'docs-390');
    } finally {
      await page.close();
    }
  });
});
