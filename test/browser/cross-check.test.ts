/// <reference lib="dom" />
/**
 * The portal when the cross-check sets a preferred provider's number aside, on local stand-ins
 * (6 March 2026): the NBP, preferred, publishes its dollar ×1000, and the ECB, the NBU and the CNB
 * agree with each other. EUR→USD is then the ECB's number, and the source says, beside its line
 * and opened, which number was not used and why; with source=nbp (that provider's numbers as
 * published) nothing is set aside. The number shown is checked against the recorded bytes, the
 * reason against the API; axe-core and the phone layout with the details open.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nbpOn, TIMES_1000, wrongNbpDollar } from '../support/central-banks.js';
import { chromiumAvailable, PHONE, screenshot, seriousViolations, watch, type Browser } from './browser.js';
import { openWithKey, provenanceShown, startBanksPortal, type Api, type BanksPortal } from './portal-page.js';

const available = chromiumAvailable();
const DAY = '2026-03-05';
const NOW = '2026-03-06T12:00:00Z';
/** What the NBP's stand-in publishes for the dollar on DAY: zlotys per dollar, ×1000. */
const WRONG = TIMES_1000(nbpOn(DAY, 'USD'));
/** A decimal as the page groups it (en-US). */
const grouped = (text: string) => text.replace(/^\d+/, (whole) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, ','));

const setAsideShown = (page: import('playwright-core').Page) =>
  page.evaluate(() => ({
    flag: document.getElementById('provenance-flag')!.hidden ? null : document.getElementById('provenance-flag')!.textContent,
    items: Array.from(document.querySelectorAll('#provenance-set-aside li'), (item) => ({ text: item.textContent, day: item.querySelector('time')?.getAttribute('datetime') })),
    listHidden: document.getElementById('provenance-set-aside')!.hidden,
  }));

describe('the portal when the cross-check sets the NBP’s dollar aside', { skip: !available }, () => {
  let portal: BanksPortal;
  let browser: Browser;
  let api: Api;

  before(async () => {
    portal = await startBanksPortal({ ecbThrough: DAY, banksDay: '2026-03-06', wrong: { nbp: wrongNbpDollar(TIMES_1000) }, providers: ['nbp', 'ecb', 'nbu', 'cnb'], now: NOW });
    ({ api, browser } = portal);
  });

  after(() => portal?.close());

  it('names the number not used beside the source, and, opened, the number as published and the reason', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      const answer = await api.json('/api/v1/convert?from=EUR&to=USD&amount=100&expand=provenance');
      assert.deepEqual(answer.provenance.providers, ['ecb']);
      assert.equal(answer.provenance.setAside.length, 1);
      const [setAside] = answer.provenance.setAside;
      assert.deepEqual([setAside.provider, setAside.currency, setAside.day, setAside.base, setAside.rate], ['nbp', 'USD', DAY, 'PLN', `1/${WRONG}`]);

      await openWithKey(page, api.base, api.key, '?from=EUR&to=USD');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, answer.result);
      assert.equal((await provenanceShown(page, 'European Central Bank, Mar 5, 2026')).day, DAY);
      // Closed, the summary says a number was set aside; opened, which and why, the way round the NBP published it.
      assert.equal(await page.textContent('#provenance summary'), 'Source: European Central Bank, Mar 5, 2026 · a number set aside');
      assert.equal(await page.isVisible('#provenance-set-aside'), false);
      await page.click('#provenance summary');
      assert.equal(await page.isVisible('#provenance-set-aside'), true);
      assert.deepEqual(await setAsideShown(page), {
        flag: ' · a number set aside',
        items: [{ text: `Not used: Narodowy Bank Polski’s 1 USD = ${grouped(WRONG)} PLN on Mar 5, 2026 — ${setAside.reason}`, day: DAY }],
        listHidden: false,
      });
      assert.match(setAside.reason, /3 of them agree, so it is not served/);

      // The NBP asked for by name: its numbers as published, nothing set aside, nothing said.
      const fromNbp = await api.json('/api/v1/convert?from=EUR&to=USD&amount=100&source=nbp&expand=provenance');
      assert.equal(fromNbp.provenance.setAside, undefined);
      await page.selectOption('#source', 'nbp');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, fromNbp.result);
      await provenanceShown(page, 'Narodowy Bank Polski, Mar 5, 2026, through PLN');
      assert.deepEqual(await setAsideShown(page), { flag: null, items: [], listHidden: true });
      assert.equal(await page.textContent('#provenance summary'), 'Source: Narodowy Bank Polski, Mar 5, 2026, through PLN');
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  it('with the reason open, fits a phone screen with no serious accessibility violations; screenshot saved', async () => {
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize(PHONE);
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await openWithKey(page, api.base, api.key, '?from=EUR&to=USD');
      await provenanceShown(page, 'European Central Bank, Mar 5, 2026');
      await page.click('#provenance summary');
      await page.waitForSelector('#provenance-set-aside li');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'no horizontal scrolling');
      assert.deepEqual(await seriousViolations(page), []);
      await screenshot(page, 'portal-set-aside-phone');
    } finally {
      await page.close();
    }
  });
});
