import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { rangesFor } from '../../core/history.js';
import { historyExtent } from '../../core/retention.js';
import type { RateBook, RateSnapshot } from '../../core/rates.js';
import { currencyCatalogue, quotedBy } from '../../core/served-currencies.js';
import { providerEntry } from '../../providers/registry.js';
import { sendCompressible, type HttpCaches } from '../caching.js';
import { notFound, sendProblem } from '../problem.js';

/**
 * The developer portal: one page at `/` that converts, charts history and shows code, calling the
 * public API from the browser. Its assets are files beside the code (`src/portal/`, copied to
 * `dist/portal/` by the build) and Chart.js from the installed package: nothing comes from a CDN.
 */

export interface PortalOptions {
  book: RateBook;
  /** Where compressed bodies are kept. */
  caches: HttpCaches;
  contactEmail: string;
  quota: { free: number; pro: number };
  /** A provider that loads currencies nobody stores yet on first request (Frankfurter, Open Exchange Rates). */
  wideCoverage: boolean;
  /** The demo key handed to the page, and the requests a visitor may make with it a day; unset when disabled. */
  demo?: { key: string; perAddress: number } | undefined;
}

interface Asset {
  /** Versioned path: the content hash is in the name, so it can be cached for a year. */
  path: string;
  body: string;
  etag: string;
  contentType: string;
}

/**
 * Where the portal's files are: `portal/` two levels above this module in src/ and in tsc's tree
 * of dist/, and one level above dist/cli/commands.js, the bundle that the `exrates` command runs
 * (scripts/build.mjs), which this module is part of.
 */
const PORTAL_DIRS = ['../../portal/', '../portal/'].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
const PORTAL_DIR = PORTAL_DIRS.find((dir) => existsSync(join(dir, 'portal.js'))) ?? PORTAL_DIRS[0]!;
/** The service's icon, also the logo of the /docs page. */
export const PORTAL_ICON = `${PORTAL_DIR}icon.svg`;
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Scripts, styles, images and API calls from this origin only; no inline script or style, no
 * framing, no plugins. Chart.js sets canvas sizes through the CSSOM, which style-src allows.
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function loadAsset(file: string, name: string, contentType: string): Asset {
  const body = readFileSync(file, 'utf8');
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  const dot = name.lastIndexOf('.');
  return { path: `/portal/${name.slice(0, dot)}.${hash}${name.slice(dot)}`, body, etag: `"${hash}"`, contentType };
}

function loadAssets(): Record<'script' | 'style' | 'icon' | 'chart', Asset> {
  const require = createRequire(import.meta.url);
  return {
    script: loadAsset(`${PORTAL_DIR}portal.js`, 'portal.js', 'text/javascript; charset=utf-8'),
    style: loadAsset(`${PORTAL_DIR}portal.css`, 'portal.css', 'text/css; charset=utf-8'),
    icon: loadAsset(PORTAL_ICON, 'icon.svg', 'image/svg+xml'),
    // The package exports no path to its browser build: it sits beside the CommonJS entry, in dist/.
    chart: loadAsset(join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'chart.umd.min.js', 'text/javascript; charset=utf-8'),
  };
}

/** JSON inside a data block: `<` is escaped so no string can close the script element. */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The oldest day any provider has stored: where the range `max` starts. */
function oldestStoredDay(snapshot: RateSnapshot): string | null {
  const firsts = [...snapshot.data.values()].map((data) => data.days[0]).filter((day) => day !== undefined);
  return firsts.length > 0 ? firsts.sort()[0]! : null;
}

function pageHeaders(reply: FastifyReply): void {
  reply.header('Content-Security-Policy', PORTAL_CSP);
  reply.header('Referrer-Policy', 'same-origin');
  reply.header('Cross-Origin-Opener-Policy', 'same-origin');
  reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
}

export function registerPortalRoutes(app: FastifyInstance, options: PortalOptions): void {
  const assets = loadAssets();
  const byPath = new Map(Object.values(assets).map((a) => [a.path, a]));
  const template = readFileSync(`${PORTAL_DIR}index.html`, 'utf8');
  let rendered: { generation: number; body: string } | undefined;

  async function renderPage(): Promise<string> {
    const snapshot = await options.book.snapshot();
    const generation = options.book.generation();
    if (rendered?.generation === generation) return rendered.body;
    const catalogue = currencyCatalogue(snapshot, { wideCoverage: options.wideCoverage });
    const pageConfig = {
      currencies: catalogue.served,
      onRequest: catalogue.onRequest,
      // What names a rate's source and fills the source picker, as /api/v1/providers lists it:
      // a page load then asks the API only for the conversion and the history.
      providers: options.book.providers.map((id) => {
        // Every configured provider is made from its registry entry (src/deps.ts).
        const { metadata } = providerEntry(id)!;
        return { id, name: metadata.name, kind: metadata.kind, currencies: quotedBy(snapshot, id) };
      }),
      contact: options.contactEmail,
      quota: options.quota,
      demo: options.demo ?? null,
      history: { ranges: rangesFor(options.book.historyYears), oldest: oldestStoredDay(snapshot) },
    };
    const body = template
      .replaceAll('{{script}}', assets.script.path)
      .replaceAll('{{style}}', assets.style.path)
      .replaceAll('{{icon}}', assets.icon.path)
      .replaceAll('{{chart}}', assets.chart.path)
      .replaceAll('{{contact}}', escapeHtml(options.contactEmail))
      .replaceAll('{{history}}', escapeHtml(historyExtent(options.book.historyYears)))
      .replace('{{config}}', jsonForHtml(pageConfig));
    rendered = { generation, body };
    return body;
  }

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    pageHeaders(reply);
    return sendCompressible(request, reply, options.caches, {
      body: await renderPage(),
      contentType: 'text/html; charset=utf-8',
      // Revalidated on every visit (the ETag makes that cheap): the currencies, and those each provider quotes, can change.
      cacheControl: 'no-cache',
    });
  });

  app.get('/portal/:file', { schema: { hide: true } }, async (request, reply) => {
    const asset = byPath.get(request.url.split('?')[0]!);
    if (!asset) return sendProblem(reply, notFound(request.method, request.url));
    return sendCompressible(request, reply, options.caches, {
      body: asset.body,
      etag: asset.etag,
      contentType: asset.contentType,
      cacheControl: IMMUTABLE,
    });
  });
}
