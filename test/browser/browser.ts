/**
 * What the browser suites share: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), a fresh profile per suite, and the artifacts folder for screenshots.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { tempDir } from '../helper.js';
import { SERVICES_REQUIRED } from '../services.js';

export const CHROMIUM = process.env.EXRATES_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** True when Chromium is installed; in CI (or with EXRATES_REQUIRE_SERVICES=1) a missing one fails the suite. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (SERVICES_REQUIRED) throw new Error(`Chromium is required here but missing at ${CHROMIUM} (apt-get install chromium, or set EXRATES_TEST_CHROMIUM)`);
  console.log(`# SKIPPING browser suites: no Chromium at ${CHROMIUM} (apt-get install chromium, or set EXRATES_TEST_CHROMIUM)`);
  return false;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * `now`: the time the pages' clocks read (Date.now and new Date; timers run as usual), so that
 * the portal judges a rate's age on the clock the service started at (EXRATES_NOW), as a person
 * using the service at that time would.
 */
export async function launchBrowser(options: { now?: string } = {}): Promise<Browser> {
  const profile = tempDir('exrates-chromium-');
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: DESKTOP,
    locale: 'en-US',
    timezoneId: 'UTC',
    acceptDownloads: true,
  });
  context.setDefaultTimeout(10_000);
  // tsx compiles functions handed to page.evaluate with esbuild's keepNames, which wraps inner
  // named functions in a __name(fn, name) helper that exists only in Node: give pages a stand-in.
  await context.addInitScript('globalThis.__name ??= (fn) => fn;');
  if (options.now !== undefined) await context.clock.setFixedTime(options.now);
  return {
    context,
    async close() {
      await context.close();
      profile.remove();
    },
  };
}

export interface PageWatch {
  /** Every URL the page requested. */
  requests: string[];
  /** Console errors and uncaught exceptions (CSP refusals appear here). */
  errors: string[];
}

/** Records what a page requests and every error it reports. */
export function watch(page: Page): PageWatch {
  const seen: PageWatch = { requests: [], errors: [] };
  page.on('request', (request) => seen.requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') seen.errors.push(message.text());
  });
  page.on('pageerror', (error) => seen.errors.push(`uncaught: ${error.message}`));
  return seen;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = `${ARTIFACTS}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** axe-core's WCAG 2.1 A/AA rules; the serious and critical violations, described. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
