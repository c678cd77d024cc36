/// <reference lib="dom" />
/**
 * The developer portal at `/`, in Debian's Chromium against a live server on loopback serving the
 * shared ECB history: what a visitor sees is checked against what the API answers for the same
 * request (and the headline conversion against the ECB file itself), the CSV download against the
 * API's CSV, the stale marker against a failing upstream, accessibility with axe-core, and
 * screenshots at desktop and phone widths, light and dark, are written to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { PORTAL_CSP } from '../../src/http/routes/portal.js';
import { createTestApp, ECB_CSV, FIXED_NOW, unissuedKey, type TestApp } from '../helper.js';
import { D, formatRate, parseEcbCsv, perEur, rangeStart } from '../e2e/independent.js';
import { closeFakeFeeds, createFeedsService, startFakeFeeds, type FeedsService } from '../support/apps.js';
import { FEEDS_NOW, type FakeUpstreams } from '../support/upstreams.js';
import { chromiumAvailable, DESKTOP, launchBrowser, PHONE, screenshot, seriousViolations, watch, type Browser } from './browser.js';
import { apiOf, chartShown, historyAsked, manyShown, openWithKey, pickCurrency, pickerOptions, provenanceShown, statsShown, waitForConversion, type Api } from './portal-page.js';
import { listenApp } from '../support/ports.js';
import { issueKey, listeningTestApp } from '../support/apps.js';

const available = chromiumAvailable();

describe('the portal page, in Chromium, on the shared ECB history', { skip: !available }, () => {
  let test: TestApp;
  let browser: Browser;
  let api: Api;

  before(async () => {
    const listening = await listeningTestApp();
    test = listening.test;
    api = apiOf(listening.base, listening.key);
    browser = await launchBrowser({ now: FIXED_NOW });
  });

  after(async () => {
    await browser?.close();
    await test?.close();
  });

  it('is public and served with a strict CSP; its versioned assets, Chart.js included, come from this server and are cached for a year', async () => {
    const response = await fetch(`${api.base}/`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    assert.equal(csp, PORTAL_CSP);
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) assert.ok(csp.includes(directive), directive);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    const html = await response.text();
    // No inline script (the JSON data block is not executed), event handler attribute or style.
    for (const [tag] of html.matchAll(/<script\b[^>]*>/g)) assert.match(tag, /\ssrc="\/portal\/|\stype="application\/json"/, tag);
    assert.doesNotMatch(html, /\son[a-z]+=|\sstyle=|<style/);

    const assets = [...html.matchAll(/(?:src|href)="(\/portal\/[^"]+)"/g)].map((m) => m[1]!);
    assert.equal(new Set(assets).size, 4, assets.join(', '));
    for (const path of new Set(assets)) {
      const asset = await fetch(`${api.base}${path}`);
      assert.equal(asset.status, 200, path);
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable', path);
      assert.equal(asset.headers.get('x-content-type-options'), 'nosniff');
      const again = await fetch(`${api.base}${path}`, { headers: { 'If-None-Match': asset.headers.get('etag')! } });
      assert.equal(again.status, 304, path);
    }
    const chartPath = assets.find((p) => p.startsWith('/portal/chart.umd.min.'))!;
    const installed = readFileSync(join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js'), 'utf8');
    assert.equal(await (await fetch(`${api.base}${chartPath}`)).text(), installed, 'the installed Chart.js, unchanged');
    const unknown = await fetch(`${api.base}/portal/portal.0000.js`);
    assert.equal(unknown.status, 404);
    assert.match(unknown.headers.get('content-type')!, /^application\/problem\+json/);
  });

  it('converts a pair picked by name, with the rate and asOf the API gives, and keeps the key in local storage', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await page.goto(`${api.base}/`);
      // Without a key the page says what to do and calls nothing.
      assert.match((await page.textContent('#key-status'))!, /Paste an API key/);
      // No key stored: nothing to forget. The hint where the result goes is in the text's size, not the result's.
      assert.equal(await page.isVisible('#key-forget'), false);
      assert.equal(await page.textContent('#result-hint'), 'Paste an API key above to convert.');
      assert.equal(await page.isVisible('#result-hint'), true);
      const sizes = await page.evaluate(() => ({
        hint: parseFloat(getComputedStyle(document.getElementById('result-hint')!).fontSize),
        body: parseFloat(getComputedStyle(document.body).fontSize),
        result: parseFloat(getComputedStyle(document.getElementById('result-value')!).fontSize),
      }));
      assert.ok(sizes.hint <= sizes.body && sizes.hint < sizes.result / 1.5, JSON.stringify(sizes));
      assert.equal(await page.textContent('#result-value'), '');
      // The footer names no source before the API has listed the currencies and their providers.
      assert.equal(await page.isVisible('#reference-data'), false);
      await openWithKey(page, api.base, api.key);
      assert.equal(await page.isVisible('#key-forget'), true);
      assert.equal(await page.isVisible('#result-hint'), false);

      // The default pair, checked against the ECB file itself: 100 EUR at 1.1618 on 2026-03-05.
      const ecb = parseEcbCsv(ECB_CSV);
      const latest = ecb.days[ecb.days.length - 1]!;
      assert.equal(perEur(latest, 'USD')!.toString(), '1.1618');
      assert.equal(await page.getAttribute('#result-value', 'data-value'), '116.18');
      assert.equal(await page.textContent('#result-value'), '116.18 USD');
      assert.equal(await page.getAttribute('#rate-text', 'data-value'), '1.1618');
      assert.equal(await page.getAttribute('#as-of', 'datetime'), '2026-03-05T15:00:00Z');
      assert.equal(await page.textContent('#as-of'), 'Mar 5, 2026, 3:00 PM UTC');
      assert.equal(await page.isVisible('#fresh-marker'), true);
      assert.equal(await page.isVisible('#stale-marker'), false);

      await pickCurrency(page, 'from', 'pound', { code: 'GBP', name: 'Pound Sterling' });
      await pickCurrency(page, 'to', 'yen', { code: 'JPY', name: 'Yen' });
      // A picker used: the API's currency list came, and the footer names what serves them (the file provider here).
      await page.waitForSelector('#reference-data:not([hidden])');
      assert.equal(await page.textContent('#reference-data'), ' Reference data: an ECB file this installation supplies.');
      assert.doesNotMatch((await page.textContent('.site-footer'))!, /European Central Bank|other central banks/);
      await page.fill('#amount', '1234.5');
      const expected = await api.json('/api/v1/convert?from=GBP&to=JPY&amount=1234.5');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, expected.result);
      assert.equal(await page.textContent('#result-value'), `${expected.result.replace(/\B(?=(\d{3})+(?!\d))/g, ',')} JPY`);
      assert.equal(await page.textContent('#result-from'), '1,234.5 GBP =');
      assert.equal(await page.getAttribute('#rate-text', 'data-value'), expected.rate);
      assert.equal(await page.getAttribute('#as-of', 'datetime'), expected.asOf);
      assert.equal(expected.stale, false);
      assert.equal(await page.isVisible('#stale-marker'), false);

      // Keyboard only: the swap button, then a code typed and taken with Enter.
      await page.focus('#swap');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => new URLSearchParams(location.search).get('from') === 'JPY');
      assert.equal(await page.inputValue('#from-input'), 'JPY · Yen');
      await page.focus('#to-input');
      await page.keyboard.type('chf');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      const chf = await api.json('/api/v1/convert?from=JPY&to=CHF&amount=1234.5');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, chf.result);
      assert.equal(new URL(page.url()).search, '?from=JPY&to=CHF&amount=1234.5&range=1y');

      // A bad amount is marked and not sent.
      await page.fill('#amount', '12,5');
      assert.equal(await page.getAttribute('#amount', 'aria-invalid'), 'true');

      // The key survives a reload (local storage) and the page converts at once.
      await page.reload();
      await waitForConversion(page);
      assert.equal(await page.inputValue('#api-key'), api.key);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), chf.result);
      assert.match((await page.textContent('#key-status'))!, /of 100,000 requests left today/);

      assert.deepEqual(seen.errors, []);
      const foreign = seen.requests.filter((url) => !url.startsWith(`${api.base}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));
      assert.deepEqual(foreign, [], 'everything comes from this server');
    } finally {
      await page.close();
    }
  });

  it('fills the currency pickers from /api/v1/currencies, each name beside its code, those loaded on first use marked', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key);
      const expected = (await api.json('/api/v1/currencies')).currencies as Array<{ code: string; name: string; onRequest: boolean }>;
      assert.ok(expected.length > 25);
      const [answer] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/currencies'), page.click('#from-input')]);
      assert.equal(answer.status(), 200);
      assert.deepEqual((await answer.json()).currencies, expected, 'the page asked the API and got its list');
      await page.waitForSelector('#from-list:not([hidden])');
      const listed = expected.map((c) => ({ code: c.code, name: c.name, onRequest: c.onRequest }));
      await page.waitForFunction((count) => document.querySelectorAll('#from-list [role=option]').length === count, listed.length);
      assert.deepEqual(await pickerOptions(page, 'from'), listed);
      await page.keyboard.press('Escape');
      assert.equal(await page.inputValue('#from-input'), 'EUR · Euro');

      // What the pickers offer is what /currencies says, not the list embedded in the page: an
      // answer with three currencies now and one on first request is shown as exactly that.
      const other = await browser.context.newPage();
      try {
        await other.route('**/api/v1/currencies', async (route) => {
          const response = await route.fetch();
          const body = (await response.json()) as { currencies: Array<Record<string, unknown>> };
          const kept = body.currencies.filter((c) => ['EUR', 'JPY', 'USD'].includes(c['code'] as string));
          const naira = { code: 'NGN', name: 'Naira', minorUnits: 2, providers: ['frankfurter'], onRequest: true };
          await route.fulfill({ response, json: { currencies: [...kept, naira].sort((a, b) => (a['code'] as string).localeCompare(b['code'] as string)) } });
        });
        await openWithKey(other, api.base, api.key);
        await other.click('#to-input');
        await other.waitForFunction(() => document.querySelectorAll('#to-list [role=option]').length === 4);
        assert.deepEqual(await pickerOptions(other, 'to'), [
          { code: 'EUR', name: 'Euro', onRequest: false },
          { code: 'JPY', name: 'Yen', onRequest: false },
          { code: 'USD', name: 'US Dollar', onRequest: false },
          { code: 'NGN', name: 'Naira', onRequest: true },
        ]);
        assert.deepEqual(await other.$$eval('#to-list .group', (groups) => groups.map((g) => g.textContent)), ['Available now', 'More, loaded on first use']);
      } finally {
        await other.close();
      }
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  it('converts on a past day: a weekend or holiday gives the business day before, as /convert?date= answers, and says so', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=GBP&to=JPY&amount=250');
      assert.equal(await page.inputValue('#date'), '', 'no date: the latest rate');
      assert.equal(await page.isVisible('#date-latest'), false);
      assert.equal(await page.isVisible('#past-marker'), false);
      const latest = await api.json('/api/v1/convert?from=GBP&to=JPY&amount=250');
      assert.equal(await page.getAttribute('#result-value', 'data-value'), latest.result);

      // Saturday 28 February 2026: ECB published nothing; Friday the 27th is the answer.
      for (const [asked, published, sentence] of [
        ['2026-02-28', '2026-02-27', 'No rate was published on Sat, Feb 28, 2026 (a weekend or holiday): this is the rate of Fri, Feb 27, 2026, the latest day before it.'],
        ['2025-12-25', '2025-12-24', 'No rate was published on Thu, Dec 25, 2025 (a weekend or holiday): this is the rate of Wed, Dec 24, 2025, the latest day before it.'],
      ] as const) {
        await page.fill('#date', asked);
        const expected = await api.json(`/api/v1/convert?from=GBP&to=JPY&amount=250&date=${asked}`);
        assert.equal(expected.asOf.slice(0, 10), published);
        assert.notEqual(expected.result, latest.result);
        await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, expected.result);
        assert.equal(await page.getAttribute('#rate-text', 'data-value'), expected.rate);
        assert.equal(await page.getAttribute('#as-of', 'datetime'), expected.asOf);
        assert.match((await page.textContent('#as-of'))!, new RegExp(`^${published === '2026-02-27' ? 'Feb 27, 2026' : 'Dec 24, 2025'}, `));
        assert.equal(await page.textContent('#date-note'), sentence);
        assert.equal(await page.isVisible('#past-marker'), true);
        assert.equal(await page.isVisible('#fresh-marker'), false, 'a past day is not called live');
        assert.equal(new URL(page.url()).searchParams.get('date'), asked);
        assert.match((await page.textContent('#code-curl'))!, new RegExp(`amount=250&date=${asked}'`));
      }

      // A business day is its own answer: no note.
      await page.fill('#date', '2026-03-02');
      const monday = await api.json('/api/v1/convert?from=GBP&to=JPY&amount=250&date=2026-03-02');
      await page.waitForFunction((value) => document.getElementById('as-of')!.getAttribute('datetime') === value, monday.asOf);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), monday.result);
      assert.equal(await page.isVisible('#date-note'), false);

      // Before the stored history: the API's problem, plainly.
      await page.fill('#date', '1990-01-02');
      await page.waitForSelector('#convert-error:not([hidden])');
      const problem = await (await fetch(`${api.base}/api/v1/convert?from=GBP&to=JPY&amount=250&date=1990-01-02`, { headers: { 'X-Api-Key': api.key } })).json();
      assert.equal(problem.code, 'no_history');
      assert.equal(await page.textContent('#convert-error'), `${problem.title}: ${problem.detail}`);

      // "Latest" goes back to the live rate, and the address forgets the date.
      await page.click('#date-latest');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, latest.result);
      assert.equal(await page.inputValue('#date'), '');
      assert.equal(await page.isVisible('#fresh-marker'), true);
      assert.equal(await page.isVisible('#convert-error'), false);
      assert.equal(new URL(page.url()).searchParams.has('date'), false);
      assert.deepEqual(seen.errors.filter((e) => !/status of 404/.test(e)), []);
    } finally {
      await page.close();
    }
  });

  it('shows one amount in every currency as /api/v1/rates answers it, sorted, latest and on a past day', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=USD&to=CHF&amount=1500');
      assert.equal(await page.isVisible('#many-table'), false, 'closed until asked for');
      assert.equal(seen.requests.filter((url) => url.includes('/api/v1/rates')).length, 0, 'and not asked for until then');
      await page.click('#many-toggle');
      assert.equal(await page.getAttribute('#many-toggle', 'aria-expanded'), 'true');

      const names = new Map(((await api.json('/api/v1/currencies')).currencies as Array<{ code: string; name: string }>).map((c) => [c.code, c.name]));
      const check = async (query: string, from: string, picked = 'CHF') => {
        const expected = await api.json(`/api/v1/rates?${query}`);
        assert.ok(expected.rates.length > 25, query);
        const rows = await manyShown(page, expected);
        assert.deepEqual(
          rows.map(({ to, name, result, rate }) => ({ to, name, result, rate })),
          expected.rates.map((e: { to: string; result: string; rate: string }) => ({ to: e.to, name: names.get(e.to), result: e.result, rate: e.rate })),
          query,
        );
        const codes = rows.map((r) => r.to);
        assert.deepEqual(codes, [...codes].sort(), 'sorted by code');
        assert.ok(!codes.includes(from));
        assert.equal(await page.getAttribute('#many-rows tr.picked', 'data-code'), picked, 'the converter’s target stands out');
        return expected;
      };

      const now = await check('from=USD&amount=1500', 'USD');
      assert.match((await page.textContent('#many-caption'))!, /^1,500 USD in \d+ currencies, at the rates of Mar 5, 2026, 3:00 PM UTC\.$/);
      assert.ok(now.rates.every((e: { asOf: string }) => e.asOf === '2026-03-05T15:00:00Z'));

      // The amount, the source and a past day change the table; the target alone does not ask again.
      await page.fill('#amount', '20');
      await check('from=USD&amount=20', 'USD');
      await pickCurrency(page, 'from', 'pound', { code: 'GBP', name: 'Pound Sterling' });
      await check('from=GBP&amount=20', 'GBP');
      await page.fill('#date', '2026-02-28');
      await check('from=GBP&amount=20&date=2026-02-28', 'GBP');
      assert.equal(
        await page.textContent('#many-caption'),
        `20 GBP in ${(await api.json('/api/v1/rates?from=GBP&amount=20&date=2026-02-28')).rates.length} currencies, at the rates of Feb 27, 2026, 3:00 PM UTC. No rate was published on Sat, Feb 28, 2026 (a weekend or holiday): this is the rate of Fri, Feb 27, 2026, the latest day before it.`,
      );
      const asked = seen.requests.filter((url) => url.includes('/api/v1/rates')).length;
      await pickCurrency(page, 'to', 'yen', { code: 'JPY', name: 'Yen' });
      await page.waitForFunction(() => document.querySelector('#many-rows tr.picked')?.getAttribute('data-code') === 'JPY');
      assert.equal(seen.requests.filter((url) => url.includes('/api/v1/rates')).length, asked);

      // The open table is part of the address: a reload shows it again.
      assert.equal(new URL(page.url()).searchParams.get('table'), '1');
      await page.reload();
      await check('from=GBP&amount=20&date=2026-02-28', 'GBP', 'JPY');
      assert.equal(await page.isVisible('#many-table'), true);

      // An error from the API is said where the table is.
      await page.fill('#from-input', 'NGN');
      await page.press('#from-input', 'Enter');
      await page.waitForSelector('#many-error:not([hidden])');
      const problem = await (await fetch(`${api.base}/api/v1/rates?from=NGN&amount=20&date=2026-02-28`, { headers: { 'X-Api-Key': api.key } })).json();
      assert.equal(await page.textContent('#many-error'), `${problem.title}: ${problem.detail}`);
      assert.equal(await page.locator('#many-rows tr').count(), 0);

      await page.click('#many-toggle');
      assert.equal(await page.isVisible('#many-table'), false);
      assert.equal(new URL(page.url()).searchParams.has('table'), false);
    } finally {
      await page.close();
    }
  });

  it('switches ranges and shows the statistics and the points the API gives, best and worst marked on the chart', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=USD&to=CHF');
      for (const range of ['1y', '1m', '5y', '3m']) {
        if (range !== '1y') await page.click(`.range[data-range="${range}"]`);
        const expected = await api.json(`/api/v1/history?from=USD&to=CHF&range=${range}`);
        const shown = await statsShown(page, expected.stats.best);
        assert.deepEqual(
          { ...shown, bestDate: undefined, count: undefined },
          {
            best: expected.stats.best,
            worst: expected.stats.worst,
            average: expected.stats.average,
            changePct: String(expected.stats.changePct),
            currentVsAveragePct: String(expected.stats.currentVsAveragePct),
            bestDate: undefined,
            count: undefined,
          },
          range,
        );
        assert.equal(shown.count, `${expected.count.toLocaleString('en-US')} days`);
        assert.equal(await page.getAttribute(`.range[data-range="${range}"]`, 'aria-pressed'), 'true');
        assert.equal(await page.locator('.range[aria-pressed="true"]').count(), 1);
        const chart = await page.evaluate(() => {
          const instance = (window as any).Chart.getChart(document.getElementById('chart'));
          const marked = (index: number) => {
            const data = instance.data.datasets[index].data as Array<number | null>;
            const at = data.findIndex((v) => v !== null);
            return { date: instance.data.labels[at], value: data[at], count: data.filter((v) => v !== null).length };
          };
          return { labels: instance.data.labels, values: instance.data.datasets[0].data, best: marked(2), worst: marked(3), average: instance.data.datasets[1].data[0] };
        });
        assert.deepEqual(chart.labels, expected.points.map((p: { date: string }) => p.date), range);
        assert.deepEqual(chart.values, expected.points.map((p: { rate: string }) => Number(p.rate)));
        assert.deepEqual(chart.best, { date: expected.stats.bestDate, value: Number(expected.stats.best), count: 1 });
        assert.deepEqual(chart.worst, { date: expected.stats.worstDate, value: Number(expected.stats.worst), count: 1 });
        assert.equal(chart.average, Number(expected.stats.average));
        assert.match((await page.getAttribute('#chart', 'aria-label'))!, new RegExp(`best ${expected.stats.best.replace('.', '\\.')}`));
      }
      assert.equal(new URL(page.url()).searchParams.get('range'), '3m');
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  it('names the source of the shown rate: the provider, its day, the currency it is crossed through, and the published numbers when opened', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=USD&to=GBP');
      const ecb = parseEcbCsv(ECB_CSV);
      const latest = ecb.days[ecb.days.length - 1]!;
      const expected = await api.json('/api/v1/convert?from=USD&to=GBP&amount=100&expand=provenance');
      assert.deepEqual(expected.provenance.providers, ['file']);
      // USD and GBP both per euro in the file: the rate is their ratio, crossed through EUR.
      const shown = await provenanceShown(page, 'ECB file, Mar 5, 2026, through EUR');
      assert.deepEqual(shown, {
        line: 'ECB file, Mar 5, 2026, through EUR',
        day: latest.date,
        numbers: [`1 EUR = ${perEur(latest, 'USD')} USD`, `1 EUR = ${perEur(latest, 'GBP')} GBP`],
      });
      assert.equal(expected.provenance.day, latest.date);
      // The numbers are behind a disclosure the keyboard opens.
      assert.equal(await page.isVisible('#provenance-numbers'), false);
      await page.focus('#provenance summary');
      await page.keyboard.press('Enter');
      assert.equal(await page.isVisible('#provenance-numbers'), true);
      // With one provider there is no source to choose.
      assert.equal(await page.isVisible('#source-field'), false);

      // EUR is the file's base: no cross, one published number.
      await pickCurrency(page, 'from', 'EUR', { code: 'EUR', name: 'Euro' });
      assert.deepEqual(await provenanceShown(page, 'ECB file, Mar 5, 2026'), { line: 'ECB file, Mar 5, 2026', day: latest.date, numbers: [`1 EUR = ${perEur(latest, 'GBP')} GBP`] });
      // On a Saturday, the day the rate was published: Friday.
      await page.fill('#date', '2026-02-28');
      const friday = ecb.days.find((d) => d.date === '2026-02-27')!;
      assert.deepEqual(await provenanceShown(page, 'ECB file, Feb 27, 2026'), { line: 'ECB file, Feb 27, 2026', day: '2026-02-27', numbers: [`1 EUR = ${perEur(friday, 'GBP')} GBP`] });
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  it('charts the days between two dates, by day, week or month, as /history?start=&end=&group= answers; wrong dates are said and not asked for', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    const asked = () => seen.requests.filter((url) => new URL(url).pathname === '/api/v1/history');
    try {
      await openWithKey(page, api.base, api.key, '?from=EUR&to=USD');
      const year = await api.json('/api/v1/history?from=EUR&to=USD&range=1y');
      await chartShown(page, year);
      assert.equal(await page.isVisible('#custom-range'), false);

      // "Custom" starts from the range shown, counted back as the API counts it: the same points, now between two dates.
      const today = FIXED_NOW.slice(0, 10);
      const yearAgo = rangeStart(today, '1y');
      assert.equal(await historyAsked(page, () => page.click('.range[data-range="custom"]')), `?from=EUR&to=USD&start=${yearAgo}&end=${today}`);
      assert.equal(await page.getAttribute('.range[data-range="custom"]', 'aria-pressed'), 'true');
      assert.equal(await page.locator('.range[aria-pressed="true"]').count(), 1);
      assert.deepEqual([await page.inputValue('#range-start'), await page.inputValue('#range-end')], [yearAgo, today]);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'range-start');
      assert.deepEqual((await chartShown(page, year)).labels, year.points.map((p: { date: string }) => p.date));

      // Two dates, shown with the button: every ECB day between them, one point each.
      const ecb = parseEcbCsv(ECB_CSV);
      const days = ecb.days.filter((d) => d.date >= '2025-01-15' && d.date <= '2025-06-30');
      await page.fill('#range-start', '2025-01-15');
      await page.fill('#range-end', '2025-06-30');
      assert.equal(await historyAsked(page, () => page.click('#custom-range button[type=submit]')), '?from=EUR&to=USD&start=2025-01-15&end=2025-06-30');
      const daily = await api.json('/api/v1/history?from=EUR&to=USD&start=2025-01-15&end=2025-06-30');
      const shownDaily = await chartShown(page, daily);
      assert.deepEqual(shownDaily.labels, days.map((d) => d.date));
      assert.deepEqual(shownDaily.values, days.map((d) => Number(perEur(d, 'USD'))));
      assert.equal(shownDaily.count, `${days.length} days`);
      assert.match(shownDaily.summary, /^Daily EUR to USD rates, Jan 15, 2025 to Jun 30, 2025: best /);

      // Monthly: a point a month, dated its first day, the mean of its days (computed here from the ECB file).
      const months = [...new Set(days.map((d) => d.date.slice(0, 7)))].map((month) => {
        const inMonth = days.filter((d) => d.date.startsWith(month));
        const sum = inMonth.reduce((total, d) => total.plus(perEur(d, 'USD')!), new D(0));
        return { date: `${month}-01`, rate: formatRate(sum.div(inMonth.length)), days: inMonth.length };
      });
      assert.equal(months.length, 6);
      assert.equal(await historyAsked(page, () => page.click('.grouping[data-group="month"]')), '?from=EUR&to=USD&start=2025-01-15&end=2025-06-30&group=month');
      const monthly = await api.json('/api/v1/history?from=EUR&to=USD&start=2025-01-15&end=2025-06-30&group=month');
      assert.deepEqual(monthly.points, months);
      const shownMonthly = await chartShown(page, monthly);
      assert.deepEqual(shownMonthly.labels, months.map((m) => m.date));
      assert.deepEqual(shownMonthly.values, months.map((m) => Number(m.rate)));
      assert.equal(shownMonthly.count, `6 months (${days.length} days)`);
      const bestMonth = months.reduce((best, m) => (new D(m.rate).gte(best.rate) ? m : best));
      assert.equal(shownMonthly.best, bestMonth.rate);
      assert.equal(shownMonthly.bestDate, new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' }).format(new Date(bestMonth.date)));
      assert.match(shownMonthly.summary, /^Monthly average EUR to USD rates, Jan 2025 to Jun 2025: best /);
      assert.deepEqual(await page.$$eval('.grouping', (buttons) => buttons.map((b) => b.getAttribute('aria-pressed'))), ['false', 'false', 'true']);

      // Weekly: a point an ISO week, dated its Monday.
      assert.equal(await historyAsked(page, () => page.click('.grouping[data-group="week"]')), '?from=EUR&to=USD&start=2025-01-15&end=2025-06-30&group=week');
      const weekly = await api.json('/api/v1/history?from=EUR&to=USD&start=2025-01-15&end=2025-06-30&group=week');
      const shownWeekly = await chartShown(page, weekly);
      assert.deepEqual(shownWeekly.values, weekly.points.map((p: { rate: string }) => Number(p.rate)));
      assert.ok(shownWeekly.labels.every((day) => new Date(`${day}T00:00:00Z`).getUTCDay() === 1), 'Mondays');
      assert.equal(weekly.points.reduce((sum: number, p: { days: number }) => sum + p.days, 0), days.length);
      assert.equal(shownWeekly.count, `${weekly.count} weeks (${days.length} days)`);

      // The address, the CSV link and the code carry the dates and the grouping; a reload asks for the same.
      const query = 'from=EUR&to=USD&start=2025-01-15&end=2025-06-30&group=week';
      assert.equal(new URL(page.url()).search, '?from=EUR&to=USD&amount=100&range=custom&start=2025-01-15&end=2025-06-30&group=week');
      assert.equal(await page.getAttribute('#csv-link', 'href'), `/api/v1/history?${query}&format=csv`);
      assert.match((await page.textContent('#code-curl'))!, new RegExp(`/api/v1/history\\?${query}&format=csv'`));
      assert.equal(await historyAsked(page, () => page.reload()), `?${query}`);
      await chartShown(page, weekly);
      assert.deepEqual([await page.inputValue('#range-start'), await page.inputValue('#range-end')], ['2025-01-15', '2025-06-30']);

      // Dates the page can tell are wrong are said under them, marked, and not asked for.
      const before = asked().length;
      await page.fill('#range-start', '2025-07-01');
      await page.click('#custom-range button[type=submit]');
      await page.waitForSelector('#range-error:not([hidden])');
      assert.equal(await page.textContent('#range-error'), 'The start must be on or before the end.');
      assert.deepEqual([await page.getAttribute('#range-start', 'aria-invalid'), await page.getAttribute('#range-end', 'aria-invalid')], ['true', 'false']);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'range-start');
      await page.fill('#range-start', '2025-01-15');
      await page.fill('#range-end', '2026-03-07');
      await page.press('#range-end', 'Enter');
      await page.waitForFunction(() => document.getElementById('range-error')!.textContent!.startsWith('The end'));
      assert.equal(await page.textContent('#range-error'), 'The end cannot be after today (Mar 6, 2026, UTC).');
      assert.deepEqual([await page.getAttribute('#range-start', 'aria-invalid'), await page.getAttribute('#range-end', 'aria-invalid')], ['false', 'true']);
      assert.equal(asked().length, before, 'nothing asked for');
      assert.deepEqual((await chartShown(page, weekly)).labels, weekly.points.map((p: { date: string }) => p.date), 'the chart stays');

      // What only the API knows (how far back it keeps rates) is its problem, said under the dates.
      await page.fill('#range-start', '2020-01-02');
      await page.fill('#range-end', '2025-06-30');
      const refused = await fetch(`${api.base}/api/v1/history?from=EUR&to=USD&start=2020-01-02&end=2025-06-30&group=week`, { headers: { 'X-Api-Key': api.key } });
      assert.equal(refused.status, 400);
      const problem = await refused.json();
      assert.deepEqual([problem.code, problem.param], ['invalid_date', 'start']);
      assert.equal(await historyAsked(page, () => page.press('#range-start', 'Enter')), '?from=EUR&to=USD&start=2020-01-02&end=2025-06-30&group=week');
      await page.waitForFunction((detail) => document.getElementById('range-error')!.textContent!.endsWith(detail), problem.detail);
      assert.equal(await page.textContent('#range-error'), `${problem.title}: ${problem.detail}`);
      assert.equal(await page.getAttribute('#range-start', 'aria-invalid'), 'true');
      assert.equal(await page.isVisible('#history-error'), false);
      assert.equal(await page.getAttribute('#stat-best', 'data-value'), '');

      // A range again: the dates go, the grouping stays until Daily is pressed.
      assert.equal(await historyAsked(page, () => page.click('.range[data-range="1y"]')), '?from=EUR&to=USD&range=1y&group=week');
      assert.equal(await page.isVisible('#custom-range'), false);
      await chartShown(page, await api.json('/api/v1/history?from=EUR&to=USD&range=1y&group=week'));
      assert.equal(await historyAsked(page, () => page.click('.grouping[data-group=""]')), '?from=EUR&to=USD&range=1y');
      await chartShown(page, year);
      assert.equal(new URL(page.url()).search, '?from=EUR&to=USD&amount=100&range=1y');

      // Dates in an address are checked as typed ones are.
      const sent = asked().length;
      await page.goto(`${api.base}/?from=EUR&to=USD&range=custom&start=2025-07-01&end=2025-06-30`);
      await page.waitForSelector('#range-error:not([hidden])');
      assert.equal(await page.textContent('#range-error'), 'The start must be on or before the end.');
      assert.equal(asked().length, sent, 'nothing asked for');
      assert.deepEqual(seen.errors.filter((e) => !/status of 400/.test(e)), []);
    } finally {
      await page.close();
    }
  });

  it('downloads the CSV the API serves, under the API’s file name', async () => {
    const page = await browser.context.newPage();
    try {
      await openWithKey(page, api.base, api.key, '?from=GBP&to=JPY&range=6m');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv-link')]);
      assert.equal(download.suggestedFilename(), 'GBPJPY_6m.csv');
      const saved = readFileSync((await download.path())!, 'utf8');
      const expected = await api.text('/api/v1/history?from=GBP&to=JPY&range=6m&format=csv');
      assert.ok(expected.startsWith('date,rate\r\n'));
      assert.equal(saved, expected);
      assert.equal(await page.getAttribute('#csv-link', 'href'), '/api/v1/history?from=GBP&to=JPY&range=6m&format=csv', 'the link names the resource, without the key');
    } finally {
      await page.close();
    }
  });

  it('says so when the key is refused, and the API’s problem when a currency is not served', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${api.base}/`);
      await page.fill('#api-key', unissuedKey());
      await page.click('#key-form button[type=submit]');
      await page.waitForSelector('#convert-error:not([hidden])');
      assert.match((await page.textContent('#convert-error'))!, /This API key was not accepted/);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), '');

      await page.fill('#api-key', api.key);
      await page.click('#key-form button[type=submit]');
      await waitForConversion(page);
      assert.equal(await page.isVisible('#convert-error'), false);
      // NGN is ISO 4217 but the file provider does not quote it.
      await page.fill('#to-input', 'NGN');
      await page.press('#to-input', 'Enter');
      await page.waitForSelector('#convert-error:not([hidden])');
      assert.match((await page.textContent('#convert-error'))!, /^Unsupported currency: NGN is an ISO 4217 currency, but no configured rate provider quotes it\.$/);
      await page.click('#key-forget');
      assert.equal(await page.evaluate(() => localStorage.getItem('exrates.apiKey')), null);
    } finally {
      await page.close();
    }
  });

  it('calls a rate live only within its provider’s cadence on the service’s clock, whatever the browser’s reads; older, it shows the rate’s age instead', async () => {
    // The newest rate is of Thursday 2026-03-05, 15:00 UTC; ECB's cadence allows for a weekend and a holiday (96 hours).
    // Each service runs on a clock of its own (EXRATES_NOW); the browser's reads a time that would say otherwise.
    const seen: Record<string, { stale: boolean; live: boolean; aged: string | null }> = {};
    for (const [serviceNow, browserNow] of [
      ['2026-03-09T14:00:00Z', '2026-11-27T12:00:00Z'],
      ['2026-03-09T16:00:00Z', '2026-03-06T12:00:00Z'],
      ['2026-11-27T12:00:00Z', '2026-03-06T12:00:00Z'],
    ] as const) {
      const service = await createTestApp({ EXRATES_NOW: serviceNow });
      const page = await browser.context.newPage();
      try {
        const base = await listenApp(service.app);
        await page.clock.setFixedTime(browserNow);
        await openWithKey(page, base, await issueKey(service.deps, 'pro'));
        seen[serviceNow] = {
          stale: await page.isVisible('#stale-marker'),
          live: await page.isVisible('#fresh-marker'),
          aged: (await page.isVisible('#age-marker')) ? await page.textContent('#age-marker') : null,
        };
      } finally {
        await page.close();
        await service.close();
      }
    }
    await browser.context.clock.setFixedTime(FIXED_NOW);
    assert.deepEqual(seen, {
      '2026-03-09T14:00:00Z': { stale: false, live: true, aged: null },
      '2026-03-09T16:00:00Z': { stale: false, live: false, aged: 'Not live: 4 days old' },
      '2026-11-27T12:00:00Z': { stale: false, live: false, aged: 'Not live: 8 months old' },
    });
  });

  it('clears the result and the table when the amount turns bad, says why next to the field, and asks nothing for it', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=EUR&to=USD&amount=100&table=1');
      const rates = await api.json('/api/v1/rates?from=EUR&amount=100');
      await manyShown(page, rates);
      assert.equal(await page.isVisible('#amount-error'), false);
      for (const [typed, why] of [
        ['abc', 'Digits only, with one “.” as the decimal point (such as 1234.5).'],
        ['-5', 'The amount cannot be negative.'],
        ['1,5', 'Use “.” as the decimal point: 1.5.'],
        ['', 'Enter an amount.'],
        ['1.1234567890123', 'At most 12 decimals.'],
      ] as const) {
        // From a good conversion each time, as a visitor would come to it.
        await page.fill('#amount', '100');
        await waitForConversion(page);
        await page.waitForFunction(() => document.getElementById('many-rows')!.children.length > 0);
        await page.fill('#amount', typed);
        await page.waitForSelector('#amount-error:not([hidden])');
        assert.equal(await page.textContent('#amount-error'), why, typed);
        assert.equal(await page.getAttribute('#amount', 'aria-invalid'), 'true', typed);
        assert.deepEqual(
          await page.evaluate(() => [document.getElementById('result')!.dataset.empty, document.getElementById('result-value')!.textContent, document.getElementById('many-rows')!.children.length]),
          ['true', '', 0],
          typed,
        );
        assert.equal(await page.isVisible('#convert-error'), false, typed);
        // Nothing comes back to fill the result in after the figure would have settled.
        await page.waitForTimeout(600);
        assert.equal(await page.getAttribute('#result-value', 'data-value'), '', typed);
        assert.equal(new URL(page.url()).searchParams.get('amount'), '100', 'the address keeps the last good amount');
      }
      // A good amount again: the message goes, and the conversion and the table come back.
      await page.fill('#amount', '2.5');
      const expected = await api.json('/api/v1/convert?from=EUR&to=USD&amount=2.5');
      await page.waitForFunction((value) => document.getElementById('result-value')!.dataset.value === value, expected.result);
      assert.equal(await page.isVisible('#amount-error'), false);
      assert.equal(await page.getAttribute('#amount', 'aria-invalid'), 'false');
      await manyShown(page, await api.json('/api/v1/rates?from=EUR&amount=2.5'));
      const asked = seen.requests.filter((url) => url.includes('/api/v1/')).map((url) => new URL(url).searchParams.get('amount'));
      for (const bad of ['abc', '-5', '1,5', '', '1.1234567890123']) assert.ok(!asked.includes(bad), `no request for ${JSON.stringify(bad)}`);
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      it(`has no serious or critical accessibility violations and fits a ${label} screen (${colorScheme}); screenshot saved`, async () => {
        const page = await browser.context.newPage();
        try {
          await page.setViewportSize(viewport);
          await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
          await openWithKey(page, api.base, api.key, '?from=EUR&to=USD&amount=2500&range=1y');
          await statsShown(page, (await api.json('/api/v1/history?from=EUR&to=USD&range=1y')).stats.best);
          // With a past day and the table of every currency open, as a visitor may have them.
          await page.fill('#date', '2026-02-28');
          await page.waitForSelector('#date-note:not([hidden])');
          await page.click('#many-toggle');
          await manyShown(page, await api.json('/api/v1/rates?from=EUR&amount=2500&date=2026-02-28'));
          assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), colorScheme === 'dark');
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.equal(overflow, 0, 'no horizontal scrolling');
          assert.equal(await page.$eval('.many-scroll', (box) => box.scrollWidth - box.clientWidth), 0, 'the table fits its box');
          assert.deepEqual(await seriousViolations(page), []);
          await screenshot(page, `portal-${label}-${colorScheme}`);
          if (viewport === PHONE) {
            // The narrowest phones in use: still no sideways scrolling.
            await page.setViewportSize({ width: 360, height: 740 });
            await page.waitForFunction(() => document.documentElement.scrollWidth === document.documentElement.clientWidth);
          }
        } finally {
          await page.close();
        }
      });
    }
  }
});

/**
 * For the suite it is called in: a pro-key service on local stand-ins of the upstreams, with the
 * shared template's history, listening, and a browser; `env` is the service's extra environment.
 */
function servedOnFakeFeeds(env?: Record<string, string>): { fake: FakeUpstreams; service: FeedsService; browser: Browser; base: string } {
  const held = {} as { fake: FakeUpstreams; service: FeedsService; browser: Browser; base: string };
  before(async () => {
    const started = await startFakeFeeds();
    held.fake = started.fake;
    held.service = await createFeedsService(started.fake, { copyFrom: started.template, ...(env ? { env } : {}), tier: 'pro' });
    held.base = await listenApp(held.service.app);
    held.browser = await launchBrowser({ now: FEEDS_NOW });
  });
  after(async () => {
    await held.browser?.close();
    await held.service?.close();
    await closeFakeFeeds(held.fake);
  });
  return held;
}

describe('the portal’s stale marker, with an upstream that fails', { skip: !available }, () => {
  const served = servedOnFakeFeeds({ EXRATES_PROVIDERS: 'ecb' });

  it('shows "Stale" while the latest refresh failed and clears it after a good one', async () => {
    const { fake, service, browser, base } = served;
    const [good] = await service.deps.refresher.refreshAll();
    assert.equal(good!.ok, true);
    const page = await browser.context.newPage();
    try {
      await openWithKey(page, base, service.key);
      assert.equal(await page.isVisible('#stale-marker'), false);
      assert.equal(await page.isVisible('#fresh-marker'), true);

      await fake.ecb.setMode('http500');
      const [failed] = await service.deps.refresher.refreshAll();
      assert.equal(failed!.ok, false);
      await page.fill('#amount', '250');
      await page.waitForSelector('#stale-marker:not([hidden])');
      const api = (await service.get('/api/v1/convert?from=EUR&to=USD&amount=250')).body;
      assert.equal(api['stale'], true);
      assert.equal(await page.getAttribute('#result-value', 'data-value'), api['result']);
      assert.match((await page.textContent('#stale-marker'))!, /Stale/);
      assert.equal(await page.isVisible('#fresh-marker'), false);
      await page.setViewportSize(DESKTOP);
      await screenshot(page, 'portal-desktop-stale');

      await fake.ecb.setMode('ok');
      const [recovered] = await service.deps.refresher.refreshAll();
      assert.equal(recovered!.ok, true);
      await page.fill('#amount', '300');
      await page.waitForSelector('#fresh-marker:not([hidden])');
      assert.equal(await page.isVisible('#stale-marker'), false);
    } finally {
      await page.close();
    }
  });
});

describe('the portal’s pickers, with a provider that loads currencies on first request', { skip: !available }, () => {
  // ECB and Frankfurter, with only ECB's history stored: Frankfurter's other currencies are on request.
  const served = servedOnFakeFeeds();

  it('lists what /api/v1/currencies answers, those on request apart and marked so', async () => {
    const { service, browser, base } = served;
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      const expected = (await apiOf(base, service.key).json('/api/v1/currencies')).currencies as Array<{ code: string; name: string; onRequest: boolean }>;
      const onRequest = expected.filter((c) => c.onRequest);
      assert.ok(onRequest.length > 0 && onRequest.length < expected.length);
      await openWithKey(page, base, service.key);
      const [answer] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/currencies'), page.click('#to-input')]);
      assert.equal(answer.status(), 200);
      await page.waitForFunction((count) => document.querySelectorAll('#to-list [role=option]').length === count, expected.length);
      const listed = [...expected.filter((c) => !c.onRequest), ...onRequest].map((c) => ({ code: c.code, name: c.name, onRequest: c.onRequest }));
      assert.deepEqual(await pickerOptions(page, 'to'), listed);
      assert.deepEqual(await page.$$eval('#to-list .group', (groups) => groups.map((g) => g.textContent)), ['Available now', 'More, loaded on first use']);
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });
});

describe('the portal with the demo key on', { skip: !available }, () => {
  let test: TestApp;
  let browser: Browser;
  let base: string;

  before(async () => {
    test = await createTestApp({ EXRATES_DEMO_KEY_TIER: 'free', EXRATES_DEMO_QUOTA_PER_IP: '50' });
    base = await listenApp(test.app);
    browser = await launchBrowser({ now: FIXED_NOW });
  });

  after(async () => {
    await browser?.close();
    await test?.close();
  });

  it('converts and charts without a key of the visitor’s own, within the per-address quota', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      const sent: string[] = [];
      const paths: string[] = [];
      page.on('request', (request) => {
        if (!request.url().includes('/api/v1/')) return;
        sent.push(request.headers()['x-api-key'] ?? '');
        paths.push(new URL(request.url()).pathname);
      });
      await page.goto(`${base}/?from=EUR&to=GBP`);
      await waitForConversion(page);
      assert.equal(await page.inputValue('#api-key'), '', 'the demo key is not put in the key field');
      const expected = await apiOf(base, test.key).json('/api/v1/convert?from=EUR&to=GBP&amount=100');
      assert.equal(await page.getAttribute('#result-value', 'data-value'), expected.result);
      // Two requests, each counted: the conversion and the history; the page names the rate's source from what it embeds.
      await page.waitForFunction(() => document.getElementById('provenance-line')!.textContent!.startsWith('ECB file, ') && document.getElementById('stat-best')!.dataset.value !== '');
      assert.deepEqual([...paths].sort(), ['/api/v1/convert', '/api/v1/history']);
      await page.waitForFunction(() => /of 50 requests left today/.test(document.getElementById('key-status')!.textContent!));
      assert.match((await page.textContent('#key-status'))!, /^Using the demo key: 50 requests a day per visitor\. Paste your own key for more\. 4[89] of 50 requests left today\.$/);
      assert.ok(sent.every((key) => key === 'exr_demo_public'), sent.join(', '));
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });
});

describe('the portal with every year kept (EXRATES_HISTORY_YEARS=all)', { skip: !available }, () => {
  let test: TestApp;
  let browser: Browser;
  let api: Api;

  before(async () => {
    test = await createTestApp({ EXRATES_HISTORY_YEARS: 'all' });
    api = apiOf(await listenApp(test.app), await issueKey(test.deps, 'pro'));
    browser = await launchBrowser({ now: FIXED_NOW });
  });
  after(async () => {
    await browser?.close();
    await test?.close();
  });

  it('offers 10y and Max; Max charts every day since 1999-01-04 as the API answers it, and Custom starts there', async () => {
    const page = await browser.context.newPage();
    const seen = watch(page);
    try {
      await openWithKey(page, api.base, api.key, '?from=EUR&to=USD');
      assert.deepEqual(await page.locator('.range').evaluateAll((buttons) => buttons.map((b) => (b as HTMLElement).dataset.range)), ['1m', '3m', '6m', '1y', '5y', '10y', 'max', 'custom']);
      assert.equal(await historyAsked(page, () => page.click('.range[data-range="max"]')), '?from=EUR&to=USD&range=max');
      const expected = await api.json('/api/v1/history?from=EUR&to=USD&range=max');
      assert.equal(expected.points[0].date, '1999-01-04');
      const shown = await chartShown(page, expected);
      assert.equal(shown.labels.length, expected.count);
      assert.equal(new URL(page.url()).search, '?from=EUR&to=USD&amount=100&range=max');
      assert.equal(await historyAsked(page, () => page.click('.range[data-range="custom"]')), `?from=EUR&to=USD&start=1999-01-04&end=${FIXED_NOW.slice(0, 10)}`);
      assert.deepEqual(seen.errors, []);
    } finally {
      await page.close();
    }
  });
});
