/// <reference lib="dom" />
/**
 * What the portal's browser suites do on the page: call the API beside it, open the page with a
 * key, wait for an answer to be shown and read it back, and pick a currency as a visitor does.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { closeFakeFeeds, createFeedsService } from '../support/apps.js';
import { startCentralBankStandIns, type WrongNumbers } from '../support/central-banks.js';
import { listenApp } from '../support/ports.js';
import { startFakeUpstreams } from '../support/upstreams.js';
import { launchBrowser, type Browser } from './browser.js';

export interface Api {
  base: string;
  key: string;
  json(path: string): Promise<any>;
  text(path: string): Promise<string>;
}

export function apiOf(base: string, key: string): Api {
  const call = async (path: string) => {
    const response = await fetch(`${base}${path}`, { headers: { 'X-Api-Key': key } });
    assert.equal(response.status, 200, `${path}: ${response.status}`);
    return response;
  };
  return { base, key, json: async (path) => (await call(path)).json(), text: async (path) => (await call(path)).text() };
}

export async function openWithKey(page: Page, base: string, key: string, query = ''): Promise<void> {
  await page.goto(`${base}/${query}`);
  await page.fill('#api-key', key);
  await page.click('#key-form button[type=submit]');
  await waitForConversion(page);
}

export async function waitForConversion(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('result-value')!.dataset.value !== '' && document.getElementById('result')!.getAttribute('aria-busy') === 'false');
}

/** Waits until the statistics show this answer's best rate, then reads every statistic's exact value. */
export async function statsShown(page: Page, best: string): Promise<Record<string, string>> {
  await page.waitForFunction((value) => document.getElementById('stat-best')!.dataset.value === value, best);
  return page.evaluate(() => {
    const value = (id: string) => document.getElementById(id)!.dataset.value!;
    return {
      best: value('stat-best'),
      worst: value('stat-worst'),
      average: value('stat-average'),
      changePct: value('stat-change'),
      currentVsAveragePct: value('stat-vs-average'),
      bestDate: document.getElementById('stat-best-date')!.textContent!,
      count: document.getElementById('stat-count')!.textContent!,
    };
  });
}

/** The currency picker's options as shown: code, name, and whether it is offered as loaded on first use. */
export async function pickerOptions(page: Page, side: 'from' | 'to'): Promise<Array<{ code: string; name: string; onRequest: boolean }>> {
  return page.$$eval(`#${side}-list [role=option]`, (options) =>
    options.map((o) => ({
      code: o.querySelector('b')!.textContent!,
      name: o.querySelector('span')!.textContent!,
      onRequest: /loaded on first use/.test(o.textContent!),
    })),
  );
}

/** Waits until the table shows this /api/v1/rates answer's amount, source and number of rows, then reads them. */
export async function manyShown(page: Page, expected: { from: string; amount: string; rates: Array<{ rate: string }> }): Promise<Array<{ to: string; name: string; result: string; rate: string; note: string }>> {
  const heading = `${expected.amount.replace(/\B(?=(\d{3})+(?!\d))/g, ',')} ${expected.from} in ${expected.rates.length} currencies`;
  // The answer has arrived when the caption names its amount, source and count, and the first row has its rate.
  await page.waitForFunction(
    ([start, rate]) =>
      document.getElementById('many-table')!.getAttribute('aria-busy') === 'false' &&
      document.getElementById('many-caption')!.textContent!.startsWith(start) &&
      document.querySelector<HTMLElement>('#many-rows tr td:nth-of-type(2)')?.dataset.value === rate,
    [heading, expected.rates[0]!.rate] as const,
  );
  return page.$$eval('#many-rows tr', (rows) =>
    rows.map((row) => {
      const cells = row.querySelectorAll('td');
      return {
        to: (row as HTMLElement).dataset.code!,
        name: row.querySelector('th span')!.textContent!,
        result: (cells[0] as HTMLElement).dataset.value!,
        rate: (cells[1] as HTMLElement).dataset.value!,
        note: cells[1]!.querySelector('small')?.textContent ?? '',
      };
    }),
  );
}

export async function pickCurrency(page: Page, side: 'from' | 'to', typed: string, expected: { code: string; name: string }): Promise<void> {
  const input = page.locator(`#${side}-input`);
  await input.click();
  await input.fill(typed);
  const option = page.locator(`#${side}-list [role=option]`).first();
  assert.equal(await option.getAttribute('data-code'), expected.code, `typing "${typed}" offers ${expected.code} first`);
  assert.match((await option.textContent())!, new RegExp(expected.name));
  assert.equal(await input.getAttribute('aria-expanded'), 'true');
  await input.press('Enter');
  assert.equal(await input.inputValue(), `${expected.code} · ${expected.name}`);
  assert.equal(await input.getAttribute('aria-expanded'), 'false');
}

/** Does `act` and answers the query of the /history request it makes, as sent. */
export async function historyAsked(page: Page, act: () => Promise<unknown>): Promise<string> {
  const [request] = await Promise.all([page.waitForRequest((r) => new URL(r.url()).pathname === '/api/v1/history'), act()]);
  return new URL(request.url()).search;
}

export interface ChartShown {
  labels: string[];
  values: number[];
  /** The statistics' count line, the best rate and its date as shown, and the chart's text alternative. */
  count: string;
  best: string;
  bestDate: string;
  summary: string;
}

/** Waits until the chart is drawn with this /history answer's dates, then reads it and the statistics beside it. */
export async function chartShown(page: Page, expected: { points: Array<{ date: string }>; stats: { best: string } }): Promise<ChartShown> {
  const dates = JSON.stringify(expected.points.map((p) => p.date));
  await page.waitForFunction(
    ([dates, best]) =>
      JSON.stringify((window as any).Chart.getChart(document.getElementById('chart'))?.data.labels) === dates && document.getElementById('stat-best')!.dataset.value === best,
    [dates, expected.stats.best] as const,
  );
  return page.evaluate(() => {
    const chart = (window as any).Chart.getChart(document.getElementById('chart'));
    return {
      labels: chart.data.labels,
      values: chart.data.datasets[0].data,
      count: document.getElementById('stat-count')!.textContent!,
      best: document.getElementById('stat-best')!.dataset.value!,
      bestDate: document.getElementById('stat-best-date')!.textContent!,
      summary: document.getElementById('chart')!.getAttribute('aria-label')!,
    };
  });
}

/** Waits until the line naming the shown rate's source reads `line`, then reads it and the published numbers below it. */
export async function provenanceShown(page: Page, line: string): Promise<{ line: string; day: string; numbers: string[] }> {
  await page.waitForFunction((line) => document.getElementById('provenance-line')!.textContent === line, line);
  return page.evaluate(() => ({
    line: document.getElementById('provenance-line')!.textContent!,
    day: document.querySelector('#provenance-line time')!.getAttribute('datetime')!,
    numbers: Array.from(document.querySelectorAll('#provenance-numbers li'), (item) => item.textContent!),
  }));
}

/** A portal served from the central banks' stand-ins, its API beside it, and a browser. */
export interface BanksPortal {
  api: Api;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The fake ECB (its history through `ecbThrough`) and the central banks' stand-ins of `banksDay`
 * (with `wrong` numbers, if any), a service with a pro key whose providers are `providers`, each
 * refreshed once and successfully, listening on loopback, and a browser whose clock reads `now`.
 */
export async function startBanksPortal(options: { ecbThrough: string; banksDay: string; wrong?: WrongNumbers; providers: string[]; now: string }): Promise<BanksPortal> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const fake = await startFakeUpstreams();
    closers.push(() => closeFakeFeeds(fake));
    fake.ecb.historyThrough = options.ecbThrough;
    const banks = await startCentralBankStandIns(options.banksDay, options.wrong);
    closers.push(() => banks.close());
    const service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: options.providers.join(','), EXRATES_NOW: options.now }, tier: 'pro' });
    closers.push(() => service.close());
    const outcomes = await service.deps.refresher.refreshAll();
    assert.deepEqual(
      outcomes.map((o) => [o.provider, o.ok]),
      options.providers.map((id) => [id, true]),
    );
    const api = apiOf(await listenApp(service.app), service.key);
    const browser = await launchBrowser({ now: options.now });
    closers.push(() => browser.close());
    return { api, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}
