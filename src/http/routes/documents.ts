import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import { stringify } from 'yaml';
import type { Config } from '../../config.js';
import { DEMO_KEY } from '../../core/demo-key.js';
import { historyExtent } from '../../core/retention.js';
import { grouped } from '../../core/text.js';
import { PORTAL_ICON } from './portal.js';

/** The refresh interval in words, as configured (EXRATES_REFRESH_SECONDS): "10 minutes", "hour", "90 seconds". */
export function every(seconds: number): string {
  const units: Array<[number, string]> = [[86_400, 'day'], [3_600, 'hour'], [60, 'minute'], [1, 'second']];
  const [size, unit] = units.find(([size]) => seconds % size === 0)!;
  const count = seconds / size;
  return count === 1 ? unit : `${grouped(count)} ${unit}s`;
}

/**
 * The document's description: a short introduction (what the API is, how to get a key, where it
 * answers), the examples, then the details.
 */
function description(config: Config): string {
  return [
    `Live mid-market exchange rates for any pair of ISO 4217 currencies, exact conversion of decimal amounts, and ${historyExtent(config.historyYears)} with statistics (any dates, or weekly and monthly averages), as JSON, CSV or NDJSON.`,
    '',
    `- **Key:** ask ${config.contactEmail} for one, and send it in the \`X-Api-Key\` header. Free keys make ${grouped(config.quota.free)} requests a day.`,
    '- **Base URL:** `/api/v1` on this server, for example `http://localhost:8080/api/v1/rate?from=EUR&to=USD`.',
    '- **Errors:** `application/problem+json` with a stable `code`.',
    '',
    ...EXAMPLES,
    '',
    '## Details',
    '',
    '**Mid-market rates.** Rates are mid-market reference rates. Money received from a bank or transfer service includes that provider\'s margin, which is not reflected here. The service makes no forecasts and publishes no forward-looking data; historical volatility is available through the history statistics.',
    '',
    `**Freshness.** Live rates refresh every ${every(config.refreshSeconds)}. When the upstream feed is unavailable, the last stored rate is served with \`stale: true\`. \`asOf\` is the time the provider says the rate applies (ECB: 16:00 Frankfurt time on the reference date; Open Exchange Rates: its timestamp; providers that publish dates only, such as Frankfurter: 00:00 UTC of that date), never the time of fetching. A cross of rates from two providers uses the same date for both and the earlier asOf. The first request for an exotic currency may take longer while its history is backfilled.`,
    '',
    '**Numbers.** Amounts and rates are decimal strings, never floating-point numbers; arithmetic is integer-exact. A cross rate is computed exactly through the provider base (GBP→JPY = JPY per EUR / GBP per EUR) and rounded once, half-to-even, to 8 significant digits, trailing zeros removed. A conversion result is amount × the returned rate, rounded half-to-even to the target currency\'s ISO 4217 minor units (8 decimals for currencies without minor units). History statistics are computed from the points exactly as served: best = highest rate (most `to` per `from`), worst = lowest, the most recent date winning ties; average = exact mean rounded to 8 significant digits; changePct = (last − first) / first × 100; currentVsAveragePct = (last − mean) / mean × 100 with the exact mean; both rounded half-to-even to 4 decimals.',
    '',
    '**Currencies.** Codes are matched case-insensitively and answered in upper case. A code that is not ISO 4217 is `invalid_currency`; a valid code that no configured provider quotes is `unsupported_currency`. `from` equal to `to` gives rate "1". The codes are ISO 4217 as amended (XCG included); a withdrawn code (HRK, BGN, ANG…) stays valid for its history.',
    '',
    '**Replaced currencies.** A currency replaced by another at a ratio fixed by law (BGN by EUR at 1.95583 from 2026-01-01, HRK by EUR at 7.53450 from 2023-01-01, the other euro changeovers, SLL by SLE at 1,000, ANG by XCG at 1, and the other redenominations) is answered from that day on through its successor at exactly that ratio, rounded once, live, on a `date` and in history points; `provenance.replaced` names the successor, the ratio, the day and the legal reference. Before the day, its market numbers are served as published.',
    '',
    '**Legal parities.** The providers of kind `peg` (`peg-eur`, `peg-usd`, `peg-zar`, `peg-inr`, `peg-gbp`, `peg-sgd`) publish the parities fixed by law or treaty against their base, every calendar day, exact (XOF 655.957 per EUR, AED 3.6725 per USD, 1,000 XPF = 8.38 EUR). `source=peg` answers from the one that fixes both currencies of a pair; a pair fixed against two different anchors is `unsupported_currency`. By default they come after the banks: they serve a pegged currency no bank quotes and are otherwise comparators in the cross-check.',
    '',
    `**Sources and cross-checks.** Each currency comes from its own central bank where one is configured (the configured bank whose base it is: the CNB for CZK), otherwise from the first provider, in the order of /providers (${config.providers.join(', ')}), that quotes it; a pair one provider quotes whole is that provider's two numbers of one day. Every number a provider published, on every stored day, is compared, exactly, with every other provider that quotes the same currency, through a currency both quote (a number dated ahead of another provider's newest day with that provider's latest). One more than ${config.crossCheckPercent}% from the median of the others is shown in /providers (\`crossCheck\`); when at least three others agree with each other it is not served without \`source\` (the next provider's is, and \`expand=provenance\` lists it in \`setAside\`); with fewer it is served, and \`provenance\` lists it in \`flagged\`. \`source=<id>\` always answers that provider's numbers as published.`,
    '',
    `**Keys and quotas.** Every /api/v1 endpoint needs an API key in the \`X-Api-Key\` header, as \`Authorization: Bearer <key>\`, or in the \`apikey\` query parameter; when more than one is sent, the first of these wins. Keys are requested by e-mail from ${config.contactEmail}; ask the same address for the pro tier. Daily quotas per key: free ${grouped(config.quota.free)}, pro ${grouped(config.quota.pro)} requests, resetting at 00:00 UTC. Every request with a valid key to a path under /api/ counts, whatever its status (a 404 for a path that names no endpoint and a 405 for another method included), except one refused with 429 and /usage (which reads the count without adding to it); each answer carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds), and a 429 also Retry-After. A 401 carries WWW-Authenticate.`,
    ...(config.demoKey
      ? [
          '',
          `**Demo key.** The portal at / calls this API with the public demo key \`${DEMO_KEY}\`, which anyone may use for trying things out: ${grouped(config.demoKey.perAddress)} requests per UTC day per client address (an IPv4 address or an IPv6 /64), within the ${config.demoKey.tier} tier's ${grouped(config.quota[config.demoKey.tier])} a day that all its users share. Its X-RateLimit-* headers count the address's requests. For anything more, ask for a key of your own.`,
        ]
      : []),
    '',
    '**Rate limits.** Every answer to a valid key carries its quota twice, from the one reading that counted it: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (Unix seconds), and the IETF fields of draft-ietf-httpapi-ratelimit-headers, `RateLimit-Policy: "daily";q=<limit>;w=86400` and `RateLimit: "daily";r=<left>;t=<seconds until 00:00 UTC>`; on a 429, `t` is the same instant as Retry-After. CORS exposes all of them to browsers.',
    '',
    '**Caching.** rate, convert, rates and currencies: `Cache-Control: private, max-age=<seconds until the next refresh, at most 600>`; a past `date` whose answer can no longer change: `private, max-age=31536000, immutable`; history: `private, max-age=3600`; usage and every error: `no-store`. Every answer that reads a key, errors included, has `Vary: X-Api-Key, Authorization` (rate, convert, rates, currencies, providers and usage also `Accept`, which can make them a 406; history also `Accept-Encoding`, and `Accept` without `format`), so no shared cache hands one key\'s answer to another. Every 200 except from usage has a strong ETag (a compressed body has its own); a matching If-None-Match gets 304, and so does, when no If-None-Match is sent, an If-Modified-Since at or after Last-Modified; a 304 still counts against the quota. Last-Modified follows asOf (history: the last point\'s). History is compressed with gzip or br when accepted.',
    '',
    '**Dates.** `date=YYYY-MM-DD` on rate, convert and rates answers the latest day on or before it on which both currencies have a published rate: the same value as that day\'s history point, with that day\'s fixing time as asOf and stale false. Malformed or after today (UTC): 400 `invalid_date`; before the oldest stored day: 404 `no_history`.',
    '',
    '**Errors.** Every error is `application/problem+json` (RFC 9457) with `type`, `title`, `status`, `detail` and a stable `code`; validation errors add `param`. Codes: invalid_currency, unsupported_currency, unsupported_source, invalid_amount, invalid_range, invalid_format, invalid_date, missing_parameter (400); unauthorized (401); no_history, not_found (404); method_not_allowed (405, with Allow: GET, HEAD); not_acceptable (406: the Accept header admits none of the endpoint\'s media types); quota_exceeded (429); and for a request that cannot be taken as sent, malformed_request (400), request_timeout (408), payload_too_large (413: a body longer than the route reads, refused from Content-Length before it is read), unsupported_media_type (415), header_too_large (431); internal_error (500); feed_unavailable, service_unavailable (503, with Retry-After). Unknown query parameters are ignored; a parameter given twice is a 400.',
  ].join('\n');
}

const EXAMPLES_HEADING = '## Examples';

/** Copy-paste examples, shown below the introduction of /docs (its "try it" sends requests to this server). */
const EXAMPLES = [
  EXAMPLES_HEADING,
  '',
  'To try an operation below: **Authorize** with your key, open the operation, **Try it out**, **Execute**; the request goes to this server. The [portal](/) converts and charts in the browser. Replace `http://localhost:8080` with this server\'s address.',
  '',
  '**curl**',
  '',
  '```sh',
  'curl -s -H "X-Api-Key: $EXRATES_KEY" \'http://localhost:8080/api/v1/convert?from=GBP&to=JPY&amount=100\'',
  'curl -s --compressed -H "X-Api-Key: $EXRATES_KEY" \'http://localhost:8080/api/v1/history?from=USD&to=CHF&range=1y&format=csv\' > USDCHF_1y.csv',
  'curl -s -H "X-Api-Key: $EXRATES_KEY" \'http://localhost:8080/api/v1/rates?from=EUR&to=USD,GBP,JPY&amount=100&date=2026-03-02\'',
  'curl -s -H "X-Api-Key: $EXRATES_KEY" \'http://localhost:8080/api/v1/usage\'',
  '```',
  '',
  '**TypeScript**, with types generated from this document by openapi-typescript and requests made by openapi-fetch (`npm install openapi-fetch`):',
  '',
  '```ts',
  '// npx openapi-typescript http://localhost:8080/api/v1/openapi.json -o exrates.d.ts',
  "import createClient from 'openapi-fetch';",
  "import type { paths } from './exrates.d.ts';",
  '',
  "const exrates = createClient<paths>({ baseUrl: 'http://localhost:8080', headers: { 'X-Api-Key': process.env.EXRATES_KEY } });",
  '',
  "const { data, error } = await exrates.GET('/api/v1/convert', { params: { query: { from: 'GBP', to: 'JPY', amount: '100' } } });",
  'if (error) throw new Error(`${error.code}: ${error.detail}`); // a typed problem document',
  'console.log(data.result, data.rate, data.asOf, data.stale);',
  '',
  "const history = await exrates.GET('/api/v1/history', { params: { query: { from: 'USD', to: 'CHF', range: '1y' } } });",
  "const past = await exrates.GET('/api/v1/rates', { params: { query: { from: 'EUR', to: 'USD,GBP,JPY', amount: '100', date: '2026-03-02' } } });",
  'for (const entry of past.data?.rates ?? []) console.log(entry.to, entry.result, entry.asOf);',
  'console.log(history.data?.stats.best, history.data?.stats.bestDate);',
  '```',
  '',
  '**Python**, with requests:',
  '',
  '```python',
  'import os',
  'from decimal import Decimal',
  'import requests',
  '',
  'session = requests.Session()',
  'session.headers["X-Api-Key"] = os.environ["EXRATES_KEY"]',
  '',
  'response = session.get("http://localhost:8080/api/v1/convert", params={"from": "GBP", "to": "JPY", "amount": "100"}, timeout=10)',
  'if not response.ok:',
  '    problem = response.json()  # application/problem+json',
  '    raise RuntimeError(f"{problem[\'code\']}: {problem[\'detail\']}")',
  'conversion = response.json()',
  'print(Decimal(conversion["result"]), conversion["to"], "stale" if conversion["stale"] else "")',
  '```',
];

export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'exrates',
        version: '1.0.0',
        description: description(config),
        contact: { name: 'API keys and the pro tier', email: config.contactEmail },
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This server' }],
      tags: [
        { name: 'rates', description: 'Live rates and conversion' },
        { name: 'history', description: 'Daily history and statistics' },
        { name: 'keys', description: "The calling key's quota" },
        { name: 'operations', description: 'Health, readiness and metrics for operators: public, no key' },
      ],
      components: {
        securitySchemes: {
          // One scheme, so that a generated client sends the key once; the other ways of sending it are alternatives, described here.
          ApiKeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Api-Key',
            description: 'API key, `exr_…`. Also taken as `Authorization: Bearer <key>`, or, for clients that cannot set headers, as the `apikey` query parameter; X-Api-Key wins.',
          },
          MetricsToken: { type: 'http', scheme: 'bearer', description: 'EXRATES_METRICS_TOKEN, for a Prometheus scraper of /metrics on the public port.' },
        },
      },
      security: [{ ApiKeyHeader: [] }],
    },
    hideUntagged: true,
    transformObject: (documents) => headWithoutBodies((documents as { openapiObject: OpenApiDocument }).openapiObject),
    // HEAD is answered wherever GET is: the document says so.
    exposeHeadRoutes: true,
    // Shared shapes keep their names in components.schemas (Rate, Problem…), not def-0, def-1…
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  };
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { operationId?: string; responses?: Record<string, { content?: unknown }> }>>;
}

/**
 * A HEAD answers the headers of its GET and no body: its responses declare none (clients and
 * validating proxies would expect one otherwise), and its operation has an id of its own.
 */
function headWithoutBodies(document: OpenApiDocument): OpenApiDocument {
  for (const item of Object.values(document.paths ?? {})) {
    if (!item.head) continue;
    const head = structuredClone(item.head);
    if (head.operationId !== undefined && head.operationId === item.get?.operationId) head.operationId = `${head.operationId}-head`;
    for (const response of Object.values(head.responses ?? {})) delete response.content;
    item.head = head;
  }
  return document;
}

/**
 * The /docs page (Swagger UI from the installed package): "try it" sends requests to this server,
 * with the key given under Authorize and kept in the browser. Its own CSP, without the package
 * default's upgrade-insecure-requests, which would send "try it" to https on a server run over
 * plain HTTP.
 */
export function docsPageOptions(): FastifySwaggerUiOptions {
  const icon = readFileSync(PORTAL_ICON);
  return {
    routePrefix: '/docs',
    uiConfig: {
      deepLinking: true,
      tryItOutEnabled: true,
      persistAuthorization: true,
      displayRequestDuration: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      url: '/api/v1/openapi.json',
    },
    validatorUrl: false,
    // The package redirects /docs/static/index.html to the page by editing the URL, which a query
    // string defeats: /docs/static/index.html?x was sent to itself, forever. It goes to the page.
    uiHooks: {
      onRequest: (request, reply, done) => {
        if (request.url.split('?')[0] === '/docs/static/index.html') return void reply.redirect('/docs/');
        done();
      },
    },
    // The page's own copy of the document (at /docs/json) says, last in its introduction, where the
    // document lives; the one at /api/v1/openapi.json is left as it is.
    transformSpecification: (document: Record<string, unknown>) => {
      const info = document.info as { description?: string };
      info.description = (info.description ?? '').replace(`\n\n${EXAMPLES_HEADING}`, `\n${DOCUMENT_LINKS}\n\n${EXAMPLES_HEADING}`);
      return document;
    },
    // Swagger UI's own top bar, with this logo, is hidden (DOCS_CSS); the portal's header takes its place (DOCS_HEADER_JS).
    logo: { type: 'image/svg+xml', content: icon, href: '/', target: '_self' },
    theme: {
      title: 'exrates · API reference',
      favicon: [{ filename: 'icon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: icon }],
      css: [{ filename: 'exrates.css', content: DOCS_CSS }],
      js: [{ filename: 'header.js', content: DOCS_HEADER_JS }],
    },
    staticCSP: {
      'default-src': "'self'",
      'base-uri': "'self'",
      'connect-src': "'self'",
      'font-src': "'self' data:",
      'form-action': "'self'",
      'frame-ancestors': "'self'",
      'img-src': "'self' data:",
      'object-src': "'none'",
      'script-src': "'self'",
      'script-src-attr': "'none'",
      // Swagger UI writes one inline style element at run time; scripts stay 'self' only.
      'style-src': "'self' 'unsafe-inline'",
    },
  };
}

const DOCUMENT_LINKS =
  '- **This page** renders the OpenAPI 3.1 document at [/api/v1/openapi.json](/api/v1/openapi.json) (also as [YAML](/api/v1/openapi.yaml)), for code generators and API tools.';

/**
 * The portal's header (src/portal/index.html: the icon and name linking to the portal, then the
 * links), with the portal's colours, light and dark, where Swagger UI's top bar was; that bar and
 * its URL box go, since this page documents this server only. Swagger UI marks dark mode on <html>
 * as the system asks, so the header follows that mark. The link to the page's own copy
 * (/docs/json) goes too: the description links the document itself.
 */
const DOCS_CSS = [
  '.swagger-ui .topbar { display: none; }',
  '.swagger-ui .info hgroup.main > a[href$="/docs/json"] { display: none; }',
  '.swagger-ui .info .markdown pre { max-width: 100%; overflow-x: auto; }',
  '.exr-header { --surface: #ffffff; --border: #dfe3ec; --text: #141824; --muted: #5b6475; border-bottom: 1px solid var(--border); background: var(--surface); font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }',
  'html.dark-mode .exr-header { --surface: #161b24; --border: #2b3444; --text: #e7ebf3; --muted: #a3adbf; }',
  '.exr-header .exr-row { box-sizing: border-box; max-width: 1460px; margin: 0 auto; padding: 0 20px; display: flex; align-items: center; gap: 1rem; min-height: 60px; }',
  '.exr-header .exr-brand { display: inline-flex; align-items: center; gap: .55rem; color: var(--text); text-decoration: none; font-weight: 700; font-size: 1.15rem; letter-spacing: -0.02em; white-space: nowrap; }',
  '.exr-header .exr-title { color: var(--muted); font-weight: 550; font-size: .95rem; white-space: nowrap; }',
  '.exr-header nav { margin-left: auto; }',
  '.exr-header ul { display: flex; gap: 1.25rem; list-style: none; margin: 0; padding: 0; }',
  '.exr-header ul a { color: var(--muted); text-decoration: none; font-weight: 550; font-size: .95rem; white-space: nowrap; }',
  '.exr-header ul a:hover { color: var(--text); }',
  // On a phone the same row, a little tighter: nothing wraps below the name.
  '@media (max-width: 640px) { .exr-header .exr-row { gap: .6rem; padding: 0 12px; } .exr-header .exr-brand { font-size: 1.05rem; gap: .4rem; } .exr-header .exr-title, .exr-header ul a { font-size: .85rem; } .exr-header ul { gap: .7rem; } }',
].join('\n');

/** Puts the portal's header above the page, in plain DOM calls (the page's CSP allows scripts from this server only). */
const DOCS_HEADER_JS = `(() => {
  const make = (tag, props, children = []) => {
    const node = Object.assign(document.createElement(tag), props);
    node.append(...children);
    return node;
  };
  const icon = make('img', { src: '/docs/static/theme/icon.svg', alt: '', width: 28, height: 28 });
  const brand = make('a', { className: 'exr-brand', href: '/', title: 'The exrates portal' }, [icon, make('span', { textContent: 'exrates' })]);
  const title = make('span', { className: 'exr-title', textContent: 'API reference' });
  const links = make('ul', {}, [
    make('li', {}, [make('a', { href: '/', textContent: 'Portal' })]),
    make('li', {}, [make('a', { href: '/api/v1/openapi.json', textContent: 'OpenAPI' })]),
  ]);
  const nav = make('nav', {}, [links]);
  nav.setAttribute('aria-label', 'Main');
  const header = make('header', { className: 'exr-header' }, [make('div', { className: 'exr-row' }, [brand, title, nav])]);
  document.body.insertBefore(header, document.body.firstChild);
})();
`;

export function registerDocumentRoutes(app: FastifyInstance): void {
  let json: string | undefined;
  let yaml: string | undefined;
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    json ??= JSON.stringify(app.swagger());
    return reply.type('application/json; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(json);
  });
  app.get('/api/v1/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => {
    yaml ??= stringify(app.swagger());
    return reply.type('application/yaml; charset=utf-8').header('Cache-Control', 'public, max-age=300').send(yaml);
  });
}
