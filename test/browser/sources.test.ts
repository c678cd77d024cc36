/// <reference lib="dom" />
/**
 * The portal with two providers whose numbers differ, the ECB and the Czech National Bank, on
 * local stand-ins serving their recorded documents: the line naming a shown rate's source, the
 * source picker and what choosing a source changes (the conversion, the table, the history and the
 * code), checked against the API and against the CNB's recorded document itself; the message when
 * the chosen source does not quote a currency; and the layout at desktop and phone widths, with
 * axe-core, screenshots written to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recorded } from '../support/central-banks.js';
import { FEEDS_NOW } from '../support/upstreams.js';
import { D, formatRate } from '../e2e/independent.js';
import { chromiumAvailable, DESKTOP, PHONE, screenshot, seriousViolations, watch, type Browser } from './browser.js';
import { chartShown, historyAsked, manyShown, openWithKey, pickCurrency, provenanceShown, startBanksPortal, waitForConversion, type Api, type BanksPortal } from './portal-page.js';

const available = chromiumAvailable();

/** The ECB's newest day; the CNB publishes its rates for the day they are fixed, today. */
const ECB_DAY = '2026-02-11';
const TODAY = '2026-02-12';
const CNB = recorded('cnb/01.json').toString('utf8');
/** The CNB's row for a currency on a day, as published: koruna per `amount` units. */
function cnbRow(day: string, code: string): { amount: string; rate: string } {
  const m = new RegExp(`\\{"currencyCode":"${code}","amount":(\\d+),"validFor":"${day}","rate":([0-9.]+)\\}`).exec(CNB);
  if (!m) throw new Error(`no CNB rate of ${code} on ${day}`);
  return { amount: m[1]!, rate: m[2]! };
}

const optionsOf = (page: import('playwright-core').Page) => page.$$eval('#source option', (options) => options.map((o) => [(o as HTMLOptionElement).value, o.textContent]));

describe('the portal with two providers that differ: the ECB and the Czech National Bank', { skip: !available }, () => {
  let portal: BanksPortal;
  let browser: Browser;
  let api: Api;

  before(async () => {
    portal = await startBanksPortal({ ecbThrough: ECB_DAY, banksDay: TODAY, providers: ['ecb', 'cnb'], now: FEEDS_NOW });
    ({ api, browser } = portal);
  });

  after(() => portal?.close());

  it('names each rate’s source, and a source chosen changes the conversion, the table, the history and the code', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=USD&to=GBP');
      // Any source: the ECB, preferred, quotes both; its USD and GBP per euro, crossed through EUR.
      const preferred = await api.json('/api/v1/convert?from=USD&to=GBP&amount=100&expand=provenance');
      assert.deepEqual(preferred.provenance.providers, ['ecb']);
      assert.equal((await provenanceShown(page, 'European Central Bank, Feb 11, 2026, through EUR')).day, ECB_DAY);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), preferred.result);

      // The picker: any source, then each provider quoting both currencies, in order of preference.
      assert.equal(await page.isVisible('#source-field'), true);
      assert.deepEqual(await optionsOf(page), [
        ['', 'Any source (preferred)'],
        ['ecb', 'European Central Bank'],
        ['cnb', 'Czech National Bank'],
      ]);
      assert.equal(await page.textContent('#source-help'), 'Any source: each currency from its own central bank where one is configured, else from the first provider that quotes it.');

      // The CNB: its own koruna rates of the two, on its day, asked for with source=cnb.
      const usd = cnbRow(TODAY, 'USD');
      const gbp = cnbRow(TODAY, 'GBP');
      assert.deepEqual([usd.amount, gbp.amount], ['1', '1']);
      const rate = formatRate(new D(usd.rate).div(gbp.rate));
      const fromCnb = await api.json('/api/v1/convert?from=USD&to=GBP&amount=100&source=cnb&expand=provenance');
      assert.equal(fromCnb.rate, rate);
      assert.notEqual(fromCnb.result, preferred.result, 'the two sources differ');
      const [asked] = await Promise.all([
        page.waitForRequest((r) => new URL(r.url()).pathname === '/api/v1/convert'),
        historyAsked(page, () => page.selectOption('#source', 'cnb')).then((query) => assert.equal(query, '?from=USD&to=GBP&range=1y&source=cnb')),
      ]);
      assert.equal(new URL(asked.url()).search, '?from=USD&to=GBP&amount=100&source=cnb&expand=provenance');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, fromCnb.result);
      assert.equal(await page.getAttribute('#rate-text', 'data-value'), rate);
      assert.deepEqual(await provenanceShown(page, 'Czech National Bank, Feb 12, 2026, through CZK'), {
        line: 'Czech National Bank, Feb 12, 2026, through CZK',
        day: TODAY,
        numbers: [`1 USD = ${usd.rate} CZK`, `1 GBP = ${gbp.rate} CZK`],
      });
      assert.equal(await page.textContent('#source-help'), 'Only the numbers Czech National Bank publishes, on its days.');
      assert.equal(await page.isVisible('#fresh-marker'), true);

      // The history is the CNB's, and so are the address and the code.
      const history = await api.json('/api/v1/history?from=USD&to=GBP&range=1y&source=cnb');
      assert.deepEqual((await chartShown(page, history)).values, history.points.map((p: { rate: string }) => Number(p.rate)));
      assert.equal(new URL(page.url()).searchParams.get('source'), 'cnb');
      assert.match((await page.textContent('#code-curl'))!, /convert\?from=USD&to=GBP&amount=100&source=cnb'/);
      assert.match((await page.textContent('#code-python'))!, /"amount": "100", "source": "cnb"\}/);

      // The table: every currency the CNB quotes, XDR among them (the ECB quotes none).
      await page.click('#many-toggle');
      const table = await api.json('/api/v1/rates?from=USD&amount=100&source=cnb');
      const rows = await manyShown(page, table);
      assert.deepEqual(rows.map((r) => [r.to, r.rate]), table.rates.map((e: { to: string; rate: string }) => [e.to, e.rate]));
      assert.ok(rows.some((r) => r.to === 'XDR'));
      assert.ok(seen.requests.some((url) => url.endsWith('/api/v1/rates?from=USD&amount=100&source=cnb')));

      // A reload keeps the source; "Any source" goes back to the ECB's answer.
      await page.reload();
      await waitForConversion(page);
      assert.equal(await page.inputValue('#source'), 'cnb');
      assert.equal(await page.getAttribute('#result-value', 'data-value'), fromCnb.result);
      await page.selectOption('#source', '');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, preferred.result);
      assert.equal((await provenanceShown(page, 'European Central Bank, Feb 11, 2026, through EUR')).day, ECB_DAY);
      assert.equal(new URL(page.url()).searchParams.has('source'), false);
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  it('offers only the sources that quote both currencies, and says so plainly when the chosen one does not', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      // The SDR: only the CNB quotes it, so it serves the pair whole.
      await openWithKey(page, api.base, api.key, '?from=USD&to=XDR');
      assert.equal((await provenanceShown(page, 'Czech National Bank, Feb 12, 2026, through CZK')).day, TODAY);
      await page.waitForFunction(() => document.querySelectorAll('#source option').length === 2);
      assert.deepEqual(await optionsOf(page), [
        ['', 'Any source (preferred)'],
        ['cnb', 'Czech National Bank'],
      ]);

      // The ECB asked for anyway (an address can name it): it stays chosen, marked, and said so where each answer would be.
      await page.goto(`${api.base}/?from=USD&to=XDR&source=ecb`);
      const message = 'European Central Bank does not quote XDR: choose another source, or “Any source (preferred)”.';
      await page.waitForFunction((text) => document.getElementById('convert-error')!.textContent === text && document.getElementById('history-error')!.textContent === text, message);
      const problem = await (await fetch(`${api.base}/api/v1/convert?from=USD&to=XDR&amount=100&source=ecb`, { headers: { 'X-Api-Key': api.key } })).json();
      assert.deepEqual([problem.code, problem.param], ['unsupported_currency', 'to']);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), '');
      assert.equal(await page.isVisible('#provenance'), false);
      await page.waitForFunction(() => document.querySelectorAll('#source option').length === 3);
      assert.deepEqual(await optionsOf(page), [
        ['', 'Any source (preferred)'],
        ['cnb', 'Czech National Bank'],
        ['ecb', 'European Central Bank (does not quote XDR)'],
      ]);
      assert.equal(await page.inputValue('#source'), 'ecb');
      assert.equal(await page.getAttribute('#source', 'aria-invalid'), 'true');
      assert.equal(await page.textContent('#source-help'), 'European Central Bank does not quote XDR now: choose another source, or “Any source (preferred)”.');

      // Keyboard only: the picker, one step up, is the CNB; the answers come back.
      const fromCnb = await api.json('/api/v1/convert?from=USD&to=XDR&amount=100&source=cnb');
      await page.focus('#source');
      await page.keyboard.press('ArrowUp');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, fromCnb.result);
      assert.equal(await page.inputValue('#source'), 'cnb');
      assert.equal(await page.isVisible('#convert-error'), false);
      await page.waitForSelector('#history-error', { state: 'hidden' });
      assert.equal(await page.getAttribute('#source', 'aria-invalid'), 'false');

      // A source chosen first, then a currency it does not quote: the same message.
      await pickCurrency(page, 'to', 'GBP', { code: 'GBP', name: 'Pound Sterling' });
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, (await api.json('/api/v1/convert?from=USD&to=GBP&amount=100&source=cnb')).result);
      await page.selectOption('#source', 'ecb');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, (await api.json('/api/v1/convert?from=USD&to=GBP&amount=100&source=ecb')).result);
      await page.fill('#to-input', 'XDR');
      await page.press('#to-input', 'Enter');
      await page.waitForFunction((text) => document.getElementById('convert-error')!.textContent === text, message);
      assert.equal(await page.inputValue('#source'), 'ecb');
      assert.equal(await page.textContent('#source-help'), 'European Central Bank does not quote XDR now: choose another source, or “Any source (preferred)”.');
      assert.deepEqual(seen.errors.filter((e) => !/status of 400/.test(e)), []);
    } finally {
      await page.close();
    }
  });

  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`with a source chosen, its numbers open and a monthly chart between two dates, fits a ${label} screen with no serious accessibility violations; screenshot saved`, async () => {
      const page = await browser.context.newPage();
      try {
        await page.setViewportSize(viewport);
        await page.emulateMedia({ reducedMotion: 'reduce' });
        await openWithKey(page, api.base, api.key, '?from=USD&to=GBP&source=cnb&range=custom&start=2025-02-12&end=2026-02-12&group=month&table=1');
        await provenanceShown(page, 'Czech National Bank, Feb 12, 2026, through CZK');
        await page.click('#provenance summary');
        await chartShown(page, await api.json('/api/v1/history?from=USD&to=GBP&start=2025-02-12&end=2026-02-12&group=month&source=cnb'));
        await manyShown(page, await api.json('/api/v1/rates?from=USD&amount=100&source=cnb'));
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'no horizontal scrolling');
        for (const id of ['source', 'range-start', 'range-end']) {
          const box = await page.locator(`#${id}`).boundingBox();
          assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width, `#${id} within the screen`);
        }
        assert.deepEqual(await seriousViolations(page), []);
        await screenshot(page, `portal-sources-${label}`);
      } finally {
        await page.close();
      }
    });
  }
});
