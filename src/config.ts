import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import proxyAddr from '@fastify/proxy-addr';
import { closest } from 'fastest-levenshtein';
import Type, { type TSchema } from 'typebox';
import Value from 'typebox/value';
import { expandFamilies, PROVIDER_FAMILIES, PROVIDER_REGISTRY, providerEntry, type ProviderEntry } from './providers/registry.js';
import { DEFAULT_HISTORY_YEARS, type HistoryYears } from './core/retention.js';
import { parseRedisUrl } from './storage/redis-url.js';

/** Every provider id, in the registry's order (src/providers/registry.ts). */
export const PROVIDER_IDS: readonly string[] = PROVIDER_REGISTRY.map((entry) => entry.id);
export type ProviderId = string;
/** What EXRATES_PROVIDERS may name: a provider, or a family of them (`peg`). */
export const PROVIDER_NAMES: readonly string[] = [...PROVIDER_IDS, ...PROVIDER_FAMILIES.keys()];
/** The providers used when EXRATES_PROVIDERS is not set: first-hand sources only, a family by its name. */
const DEFAULT_PROVIDERS = [...new Set(PROVIDER_REGISTRY.filter((entry) => entry.byDefault).map((entry) => entry.family ?? entry.id))];
/** URL settings older than the EXRATES_<ID>_URL rule, each described by hand below. */
const DESCRIBED_URL_SETTINGS = new Set(['EXRATES_ECB_URL', 'EXRATES_FRANKFURTER_URL', 'EXRATES_OXR_URL']);

function defaultUrlOf(id: string): string {
  return providerEntry(id)!.defaultUrl!;
}

/** An EXRATES_<ID>_URL setting for each provider that has an origin and no hand-written setting. */
function providerUrlSettings(): Record<string, TSchema> {
  const settings: Record<string, TSchema> = {};
  const described = (entry: ProviderEntry): entry is ProviderEntry & { urlVariable: string; defaultUrl: string } =>
    entry.urlVariable !== undefined && entry.defaultUrl !== undefined && !DESCRIBED_URL_SETTINGS.has(entry.urlVariable);
  for (const entry of PROVIDER_REGISTRY.filter(described)) {
    settings[entry.urlVariable] = Type.String({
      pattern: '^https?://[^/?#]+/?$',
      expected: 'an http:// or https:// origin: scheme, host and optional port, without a path',
      default: entry.defaultUrl,
      description: `Origin of ${entry.metadata.name} (\`${entry.id}\`): scheme, host and port, to which its documented paths and queries are appended as published, so that a local server can stand in for it.`,
    });
  }
  return settings;
}
const SECRET_VARIABLES = new Set(['EXRATES_OXR_APP_ID', 'EXRATES_METRICS_TOKEN']);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DEMO_KEY_TIERS = ['off', 'free', 'pro'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** EXRATES_CONTACT_EMAIL's default: an address nobody reads (.invalid, RFC 2606), warned about at start. */
export const PLACEHOLDER_CONTACT_EMAIL = 'keys@exrates.invalid';

/**
 * Every environment variable the service reads, with its default and meaning. The configuration
 * doc (docs/configuration.md) is generated from this schema and a check keeps it true.
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'TCP port the HTTP server listens on.' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Address the HTTP server binds to.' }),
  EXRATES_DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    expected: 'sqlite:<path>, sqlite::memory: or postgres://user@host:port/db',
    default: 'sqlite:./data/exrates.db',
    description: 'Store: `sqlite:<path>` (created if missing), `sqlite::memory:`, or `postgres://user@host:port/db`.',
  }),
  EXRATES_REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?(\\+cluster)?://.+',
      expected: 'a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL',
      description:
        'Redis for several instances sharing one store: quota counters, refresh and backfill locks. `redis://[user:password@]host:port` (`rediss://` for TLS) names one server; `redis+cluster://[user:password@]host:port,host:port,…` (`rediss+cluster://`) names seed nodes of a Redis Cluster, whose other nodes are found from them. Unset: counters and locks stay in the store and in-process.',
    }),
  ),
  EXRATES_REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9_.:-]{1,64}$',
    expected: '1 to 64 letters, digits or _ . : -',
    default: 'exrates:',
    description: 'Namespace of every Redis key the service writes (counters, locks): give each installation sharing one Redis its own.',
  }),
  EXRATES_PROVIDERS: Type.String({
    // Spaces around the commas are allowed: "ecb, frankfurter" is what people write.
    pattern: `^\\s*(${PROVIDER_NAMES.join('|')})\\s*(,\\s*(${PROVIDER_NAMES.join('|')})\\s*)*$`,
    expected: `a comma-separated list of ${PROVIDER_NAMES.join(', ')}`,
    default: DEFAULT_PROVIDERS.join(','),
    description: `Comma-separated rate providers in order of preference: ${PROVIDER_IDS.map((p) => `\`${p}\``).join(', ')} (README, "Providers"); \`peg\` names every \`peg-*\` provider (the legal parities, one per anchor currency), in that order. Each currency is served by its own central bank (the configured central bank whose base it is) where there is one, otherwise by the first provider in this order that quotes it (a pair one provider quotes whole, by that provider when it serves either currency); \`bancaditalia\` keeps every currency of its day document and loads a currency's history on its first request, \`frankfurter\` loads a currency the others do not quote on its first request. The default names first-hand sources only: the ECB, then the other central banks, then Banca d'Italia, the parities last (README, "Order of preference").`,
  }),
  ...providerUrlSettings(),
  EXRATES_ECB_URL: Type.String({
    pattern: '^https?://.+',
    expected: 'an http:// or https:// URL',
    default: defaultUrlOf('ecb'),
    description: 'Base URL of the ECB reference-rate files (`eurofxref-daily.xml`, `eurofxref-hist-90d.xml`, `eurofxref-hist.zip`).',
  }),
  EXRATES_FRANKFURTER_URL: Type.String({
    pattern: '^https?://.+',
    expected: 'an http:// or https:// URL',
    default: defaultUrlOf('frankfurter'),
    description: 'Base URL of the Frankfurter API (requests go to `<url>/v2/…`).',
  }),
  EXRATES_OXR_APP_ID: Type.Optional(
    Type.String({ pattern: '^[A-Za-z0-9]{8,64}$', expected: '8 to 64 letters and digits', description: 'Open Exchange Rates app id. Required when `openexchangerates` is a provider. Never logged.' }),
  ),
  EXRATES_OXR_URL: Type.String({
    pattern: '^https?://.+',
    expected: 'an http:// or https:// URL',
    default: defaultUrlOf('openexchangerates'),
    description: 'Base URL of the Open Exchange Rates API.',
  }),
  EXRATES_FILE_URL: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Path or URL of an ECB CSV (plain or zipped) or XML file, for the `file` provider. Required when `file` is a provider.',
    }),
  ),
  EXRATES_NOW: Type.Optional(
    Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})$',
      expected: 'an ISO 8601 date-time with its offset, such as 2026-03-06T12:00:00Z',
      description:
        "Starts the service's clock at this ISO 8601 date-time, from which it advances in real time (days end, quotas reset at 00:00 UTC of that clock), for replaying archived data. Leave unset in production.",
    }),
  ),
  EXRATES_HISTORY_YEARS: Type.String({
    pattern: '^(all|[1-9][0-9]?|100)$',
    expected: 'a whole number of years from 1 to 100, or all',
    default: String(DEFAULT_HISTORY_YEARS),
    description:
      "How many years of daily history each provider loads and keeps (and a month of margin), counted back from today; older days are pruned. `all`: every day its source publishes (the ECB's series from 1999-01-04), loaded in paced parts of five years, newest first, each stored as it comes, so that a load a restart cuts short continues before its oldest stored day. `/history`'s `start` reaches back as far; beyond 5, `range` also takes `10y` and `max`.",
  }),
  EXRATES_OLD_RATES_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 7,
    description:
      "A provider whose newest stored day is more than this many days before today (the service's clock) is warned about in the start log and in /readyz's warnings, naming the day: its rates are still served as the latest, and stay `stale: false` while its refreshes succeed (an old file does).",
  }),
  EXRATES_CROSSCHECK_PERCENT: Type.String({
    pattern: '^(?=.*[1-9])[0-9]{1,3}(\\.[0-9]{1,4})?$',
    expected: 'a positive decimal of percent such as 2 or 0.5 (up to 3 integer digits and 4 decimals)',
    default: '2',
    description:
      "After each refresh, a provider's number for a currency and day that differs from the median of the other providers' numbers for it (each the exact cross through the provider's base) by more than this many percent is warned about in the log, counted in exrates_cross_check_outliers and shown in /readyz and /api/v1/providers; when at least three of the others agree with each other, it is not served without `source` (the next provider's is, and `provenance` says why). A correction of a stored number beyond this many percent from the others' median is held, not served, until confirmed (docs/operations.md, \"Corrections and moves\").",
  }),
  EXRATES_QUOTA_FREE: Type.Integer({ minimum: 1, default: 1000, description: 'Requests per UTC day for a free-tier key.' }),
  EXRATES_QUOTA_PRO: Type.Integer({ minimum: 1, default: 100000, description: 'Requests per UTC day for a pro-tier key.' }),
  EXRATES_KEY_CACHE_MS: Type.Integer({
    minimum: 0,
    maximum: 3600000,
    default: 60000,
    description:
      'How long a known key is cached in each process: each for a random time between half of this and this, so that keys first seen together are not looked up again together. Revocations, by any process, are noticed within EXRATES_REVOCATION_POLL_MS whatever this is. 0 disables the cache.',
  }),
  EXRATES_REVOCATION_POLL_MS: Type.Integer({
    minimum: 50,
    maximum: 60000,
    default: 500,
    description: 'How often each process checks the store for revoked keys: a revoked key is refused everywhere within this time.',
  }),
  EXRATES_WORKERS: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 1,
    description:
      'Worker processes serving one port (node:cluster). 1 serves from the main process. With more, the main process holds the quota counters (exact across workers; the workers ask it) and the refresh lock; with EXRATES_REDIS_URL set, Redis holds both. Use about one per core left free by other work.',
  }),
  EXRATES_LOG_REQUESTS: Type.Boolean({
    default: false,
    description: 'Log a line per request (method, redacted URL, status, time). Off by default: at tens of thousands of requests per second the access log belongs to the load balancer.',
  }),
  EXRATES_ENGINE_WORKAROUNDS: Type.Boolean({
    default: true,
    description:
      'Apply the workarounds of Node.js engine behaviour in `src/workarounds.ts`, each kept while `npm run bench:instructions` shows it buys at least 5 % of a request (docs/performance.md, "Workarounds and what each buys"). `false` only to measure what they buy.',
  }),
  EXRATES_LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'info', description: `Log level: ${LOG_LEVELS.join(', ')}.` },
  ),
  EXRATES_LOG_FORMAT: Type.Union(
    LOG_FORMATS.map((f) => Type.Literal(f)),
    {
      default: 'auto',
      description:
        "How log lines are written: `json` (one JSON object a line, for log collectors), `pretty` (readable lines, through pino's pretty printer) or `auto` (pretty on a terminal, JSON anywhere else).",
    },
  ),
  EXRATES_CONTACT_EMAIL: Type.String({
    pattern: '^[^\\s@]+@[^\\s@]+$',
    expected: 'an e-mail address',
    default: PLACEHOLDER_CONTACT_EMAIL,
    description: 'Where users ask for an API key or the pro tier; shown in 401 responses, the docs page and the OpenAPI document.',
  }),
  EXRATES_DEMO_KEY_TIER: Type.Union(
    DEMO_KEY_TIERS.map((t) => Type.Literal(t)),
    {
      default: 'off',
      description:
        'The portal at `/` hands every visitor the public demo key `exr_demo_public`, which works like a key of this tier whose daily quota all its users share, and is also limited per client address by EXRATES_DEMO_QUOTA_PER_IP: `off` (no demo key; it is refused like an unknown key), `free` or `pro`. The address is the connection\'s peer, or the one EXRATES_TRUST_PROXY lets the proxies in front report.',
    },
  ),
  EXRATES_DEMO_QUOTA_PER_IP: Type.Integer({
    minimum: 1,
    maximum: 100000,
    default: 100,
    description: 'Requests per UTC day one client address (an IPv4 address, or an IPv6 /64) may make with the demo key.',
  }),
  EXRATES_TRUST_PROXY: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'The reverse proxies in front of the service, as comma-separated addresses and CIDR ranges (`10.0.0.0/8`) or the names `loopback`, `linklocal` and `uniquelocal`. A request from one of them is taken to come from the address it puts in `X-Forwarded-For` (the nearest address there that is not itself a trusted proxy): the demo key\'s per-address quota and the logs use it. Unset: the connection\'s peer, and `X-Forwarded-For` is ignored.',
    }),
  ),
  EXRATES_MCP_ORIGINS: Type.String({
    minLength: 1,
    default: '*',
    description:
      'The web pages that may call `/mcp`: `*` (any) or a comma-separated list of origins (`https://app.example.com`, `http://localhost:3000`: scheme, host and port, no path). A browser request whose `Origin` is not listed is a 403, as the MCP transport asks of servers against DNS rebinding, and gets no CORS grant; a request without `Origin` (not a browser) is not judged. `*` by default: every request needs an API key, which a page cannot borrow from its visitor (no cookie, no ambient credential), so a rebound page gets nothing it could not get with a key of its own, and pages on any origin keep working as they do on the REST API (README, "MCP").',
  }),
  EXRATES_METRICS_PORT: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 65535,
      description:
        'Port of a listener of its own that serves only `/metrics` (Prometheus text), on EXRATES_METRICS_HOST, without a token: the port to scrape, kept off the public one. Unset: no such listener. (`/metrics` is not served on PORT unless EXRATES_METRICS_TOKEN is set.)',
    }),
  ),
  EXRATES_METRICS_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address the metrics listener (EXRATES_METRICS_PORT) binds to: loopback by default; `0.0.0.0` in a container that Prometheus reaches over a private network.',
  }),
  EXRATES_METRICS_TOKEN: Type.Optional(
    Type.String({
      pattern: '^[\\x21-\\x7e]{16,200}$',
      expected: '16 to 200 visible ASCII characters',
      description:
        'Serves `/metrics` on PORT too, to a scraper that sends `Authorization: Bearer <token>` (Prometheus: `authorization: { credentials: <token> }`); any other request there is a 404. Unset: `/metrics` is not served on PORT.',
    }),
  ),
  EXRATES_UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 10000, description: 'Timeout of one upstream request, in milliseconds.' }),
  EXRATES_REFRESH_SECONDS: Type.Integer({ minimum: 1, maximum: 86400, default: 600, description: 'Interval between live-rate refreshes, in seconds. Refreshes run on wall-clock multiples of it.' }),
  EXRATES_NEGATIVE_CACHE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 604800,
    default: 3600,
    description: 'How long a currency that no provider quotes is remembered as unsupported before providers are asked again.',
  }),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  redisPrefix: string;
  providers: readonly ProviderId[];
  /** Each provider's origin (EXRATES_<ID>_URL or its default), by provider id, without a trailing slash; none for the file provider. */
  providerUrls: Readonly<Record<string, string>>;
  ecbUrl: string;
  fileUrl: string | undefined;
  frankfurterUrl: string;
  oxrAppId: string | undefined;
  oxrUrl: string;
  negativeCacheSeconds: number;
  /** Where the clock starts (it advances in real time from there), or undefined for the real clock. */
  now: Date | undefined;
  /** EXRATES_HISTORY_YEARS: the years of history loaded and kept, or `all`. */
  historyYears: HistoryYears;
  /** Days a provider's newest day may lie before today before the start log warns. */
  oldRatesDays: number;
  /** EXRATES_CROSSCHECK_PERCENT as written: how far a number may lie from the other providers' median. */
  crossCheckPercent: string;
  quota: { free: number; pro: number };
  keyCacheMs: number;
  revocationPollMs: number;
  logRequests: boolean;
  /** EXRATES_ENGINE_WORKAROUNDS: apply src/workarounds.ts. */
  engineWorkarounds: boolean;
  workers: number;
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat: (typeof LOG_FORMATS)[number];
  contactEmail: string;
  /** The portal's public demo key: its tier and the requests one client address may make with it a day; undefined when off. */
  demoKey: { tier: 'free' | 'pro'; perAddress: number } | undefined;
  /** The addresses and ranges of trusted reverse proxies (EXRATES_TRUST_PROXY); empty when none. */
  trustedProxies: readonly string[];
  /** The origins whose pages may call /mcp (EXRATES_MCP_ORIGINS), serialized as browsers send them, or `*` for any. */
  mcpOrigins: '*' | readonly string[];
  /** Where /metrics is served: a listener of its own (port and host), and PORT to a bearer of the token. */
  metrics: Readonly<{ port: number | undefined; host: string; token: string | undefined }>;
  upstreamTimeoutMs: number;
  refreshSeconds: number;
}

/** Bad settings: the message is one line per problem, each whole on its own (`invalid configuration: NAME: …`). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.map((p) => `invalid configuration: ${p}`).join('\n'));
    this.name = 'ConfigError';
  }
}

function expectation(schema: TSchema & Record<string, unknown>): string {
  if (Array.isArray(schema.anyOf)) return `one of ${(schema.anyOf as Array<{ const: string }>).map((s) => s.const).join(', ')}`;
  if (schema.type === 'boolean') return 'true or false';
  if (schema.type === 'integer') {
    return schema.maximum === undefined ? `a whole number of at least ${String(schema.minimum)}` : `a whole number from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  }
  if (typeof schema.expected === 'string') return schema.expected;
  return 'a non-empty string';
}

/** Reads `.env` (when present) under the real environment, which wins. */
export function environmentWithDotenv(env: NodeJS.ProcessEnv = process.env, path = '.env'): Record<string, string | undefined> {
  if (!existsSync(path)) return { ...env };
  return { ...parseEnv(readFileSync(path, 'utf8')), ...env };
}

/**
 * EXRATES_* names that are not settings of the service but belong to the same family: the key a
 * client reads (README, /docs) and the test suite's own.
 */
const NOT_SETTINGS = new Set(['EXRATES_KEY', 'EXRATES_REQUIRE_SERVICES']);

/**
 * One warning for each EXRATES_* variable the service does not read, naming the one it does: a
 * typo (EXRATES_PROVIDER) would otherwise leave the default in force without a word, and so would
 * a setting with the prefix it does not take (EXRATES_HOST for HOST) or compose.yaml's published
 * port taken for the service's own.
 */
export function unknownVariables(env: Record<string, string | undefined>): string[] {
  const names = Object.keys(ConfigSchema.properties);
  const settings = names.filter((name) => name.startsWith('EXRATES_'));
  return Object.keys(env)
    .filter((name) => name.startsWith('EXRATES_') && !settings.includes(name) && !NOT_SETTINGS.has(name) && !name.startsWith('EXRATES_TEST_'))
    .sort()
    .map((name) => {
      if (name === 'EXRATES_PORT') return 'EXRATES_PORT is the port compose.yaml publishes on the host, which the service itself does not read: it listens on PORT';
      const unprefixed = name.slice('EXRATES_'.length);
      return `${name} is not a setting of exrates (did you mean ${names.includes(unprefixed) ? unprefixed : closest(name, settings)}?); it is ignored`;
    });
}

/** Settings only a serving process reads: a one-off command neither checks nor uses them. */
export const SERVING_SETTINGS: readonly string[] = [
  'PORT', 'HOST', 'EXRATES_WORKERS', 'EXRATES_TRUST_PROXY', 'EXRATES_METRICS_PORT', 'EXRATES_METRICS_HOST', 'EXRATES_METRICS_TOKEN',
  'EXRATES_DEMO_KEY_TIER', 'EXRATES_DEMO_QUOTA_PER_IP', 'EXRATES_CONTACT_EMAIL', 'EXRATES_MCP_ORIGINS', 'EXRATES_LOG_REQUESTS', 'EXRATES_ENGINE_WORKAROUNDS', 'EXRATES_KEY_CACHE_MS', 'EXRATES_REVOCATION_POLL_MS',
  'EXRATES_QUOTA_FREE', 'EXRATES_QUOTA_PRO',
];

/** Settings of the rates and where they come from: a command that neither fetches nor stores rates does not check them. */
export const RATES_SETTINGS: readonly string[] = [
  'EXRATES_PROVIDERS', ...PROVIDER_REGISTRY.flatMap((entry) => (entry.urlVariable === undefined ? [] : [entry.urlVariable])),
  'EXRATES_FILE_URL', 'EXRATES_OXR_APP_ID', 'EXRATES_HISTORY_YEARS', 'EXRATES_UPSTREAM_TIMEOUT_MS', 'EXRATES_REFRESH_SECONDS', 'EXRATES_CROSSCHECK_PERCENT', 'EXRATES_OLD_RATES_DAYS', 'EXRATES_NEGATIVE_CACHE_SECONDS',
];

/** The entries of a provider list that name no provider, each as written. */
function unknownProviders(list: string): string[] {
  return list.split(',').map((id) => id.trim()).filter((id) => !(PROVIDER_NAMES as readonly string[]).includes(id));
}

/**
 * EXRATES_MCP_ORIGINS as the origins browsers send (`new URL(entry).origin`: lower-case host, no
 * default port), or `*`; an entry that is not an origin is named in `problems`.
 */
function parseOrigins(value: string, problems: string[]): '*' | readonly string[] {
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.length === 1 && entries[0] === '*') return '*';
  const origins: string[] = [];
  for (const entry of entries) {
    const origin = URL.canParse(entry) ? new URL(entry).origin : 'null';
    if (/^https?:\/\/[^/?#\s]+\/?$/i.test(entry) && origin !== 'null') origins.push(origin);
    else problems.push(`EXRATES_MCP_ORIGINS: '${entry}' is not an origin such as https://app.example.com (scheme, host and optional port, no path), nor * alone; got '${value}'`);
  }
  return Object.freeze(origins);
}

/**
 * Environment → validated, frozen Config; throws ConfigError with one line per bad variable.
 * `unused` names settings the caller does not read (a one-off command, the serving ones): they
 * are neither checked nor taken, and their defaults stand in.
 */
export function loadConfig(env: Record<string, string | undefined>, options: { unused?: readonly string[] } = {}): Config {
  const properties = ConfigSchema.properties as unknown as Record<string, TSchema & Record<string, unknown>>;
  const raw: Record<string, string> = {};
  for (const name of Object.keys(properties)) {
    if (options.unused?.includes(name)) continue;
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const values = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, { ...raw })) as Record<string, unknown>;
  const problems = new Map<string, string>();
  for (const error of Value.Errors(ConfigSchema, values)) {
    const name = error.instancePath.slice(1);
    if (!name || problems.has(name)) continue;
    // Secrets are named, never echoed.
    const shown = SECRET_VARIABLES.has(name) ? 'a value (hidden)' : `'${raw[name] ?? ''}'`;
    // In a list, the entries that are wrong are named first: `ecb,nosuch` is wrong by `nosuch`.
    const wrong = name === 'EXRATES_PROVIDERS' && raw[name]!.includes(',') ? unknownProviders(raw[name]!) : [];
    const named = wrong.length > 0 ? `${wrong.map((id) => (id === '' ? 'an empty entry' : `'${id}'`)).join(', ')} ${wrong.length === 1 ? 'is not a provider' : 'are not providers'}; ` : '';
    problems.set(name, `${name}: ${named}expected ${expectation(properties[name]!)}; got ${shown}`);
  }
  // Convert reads '1.5' as 1 and '0x10' or '1e3' as numbers: a whole number is written in decimal digits.
  for (const [name, text] of Object.entries(raw)) {
    if (properties[name]!.type === 'integer' && !problems.has(name) && !/^[0-9]+$/.test(text)) {
      problems.set(name, `${name}: expected ${expectation(properties[name]!)}; got '${text}'`);
    }
  }
  if (problems.size > 0) throw new ConfigError([...problems.values()]);

  const v = values as {
    PORT: number; HOST: string; EXRATES_DATABASE_URL: string; EXRATES_REDIS_URL?: string; EXRATES_REDIS_PREFIX: string; EXRATES_PROVIDERS: string; EXRATES_ECB_URL: string;
    EXRATES_FILE_URL?: string; EXRATES_NOW?: string; EXRATES_HISTORY_YEARS: string; EXRATES_OLD_RATES_DAYS: number; EXRATES_CROSSCHECK_PERCENT: string; EXRATES_FRANKFURTER_URL: string; EXRATES_OXR_APP_ID?: string; EXRATES_OXR_URL: string;
    EXRATES_NEGATIVE_CACHE_SECONDS: number; EXRATES_KEY_CACHE_MS: number; EXRATES_REVOCATION_POLL_MS: number; EXRATES_LOG_REQUESTS: boolean; EXRATES_ENGINE_WORKAROUNDS: boolean; EXRATES_WORKERS: number; EXRATES_QUOTA_FREE: number; EXRATES_QUOTA_PRO: number;
    EXRATES_LOG_LEVEL: Config['logLevel']; EXRATES_LOG_FORMAT: Config['logFormat']; EXRATES_CONTACT_EMAIL: string; EXRATES_DEMO_KEY_TIER: (typeof DEMO_KEY_TIERS)[number]; EXRATES_DEMO_QUOTA_PER_IP: number; EXRATES_TRUST_PROXY?: string; EXRATES_MCP_ORIGINS: string; EXRATES_METRICS_PORT?: number; EXRATES_METRICS_HOST: string; EXRATES_METRICS_TOKEN?: string; EXRATES_UPSTREAM_TIMEOUT_MS: number; EXRATES_REFRESH_SECONDS: number;
  };
  const list: string[] = [];
  const providers = expandFamilies(v.EXRATES_PROVIDERS.split(',').map((id) => id.trim())) as ProviderId[];
  if (new Set(providers).size !== providers.length) list.push(`EXRATES_PROVIDERS: names a provider twice; got '${v.EXRATES_PROVIDERS}'`);
  if (providers.includes('file') && !v.EXRATES_FILE_URL) list.push('EXRATES_FILE_URL is required when EXRATES_PROVIDERS includes file');
  if (providers.includes('openexchangerates') && !v.EXRATES_OXR_APP_ID) {
    list.push('EXRATES_OXR_APP_ID is required when EXRATES_PROVIDERS includes openexchangerates');
  }
  let now: Date | undefined;
  if (v.EXRATES_NOW !== undefined) {
    now = new Date(v.EXRATES_NOW);
    if (Number.isNaN(now.getTime())) list.push(`EXRATES_NOW: expected a real date-time; got '${v.EXRATES_NOW}'`);
  }
  const trustedProxies = (v.EXRATES_TRUST_PROXY ?? '').split(',').map((part) => part.trim()).filter((part) => part.length > 0);
  if (v.EXRATES_TRUST_PROXY !== undefined) {
    try {
      if (trustedProxies.length === 0) throw new Error('no address given');
      proxyAddr.compile(trustedProxies);
    } catch (error) {
      list.push(`EXRATES_TRUST_PROXY: ${error instanceof Error ? error.message : String(error)}; got '${v.EXRATES_TRUST_PROXY}'`);
    }
  }
  const mcpOrigins = parseOrigins(v.EXRATES_MCP_ORIGINS, list);
  if (v.EXRATES_REDIS_URL !== undefined) {
    try {
      parseRedisUrl(v.EXRATES_REDIS_URL);
    } catch (error) {
      // Not echoed: it may hold a password.
      list.push(`EXRATES_REDIS_URL: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (list.length > 0) throw new ConfigError(list);

  const providerUrls: Record<string, string> = {};
  for (const entry of PROVIDER_REGISTRY) {
    if (entry.urlVariable === undefined) continue;
    providerUrls[entry.id] = String(values[entry.urlVariable]).replace(/\/+$/, '');
  }

  return Object.freeze({
    port: v.PORT,
    host: v.HOST,
    databaseUrl: v.EXRATES_DATABASE_URL,
    redisUrl: v.EXRATES_REDIS_URL,
    redisPrefix: v.EXRATES_REDIS_PREFIX,
    providers: Object.freeze(providers),
    providerUrls: Object.freeze(providerUrls),
    ecbUrl: v.EXRATES_ECB_URL.replace(/\/+$/, ''),
    fileUrl: v.EXRATES_FILE_URL,
    frankfurterUrl: v.EXRATES_FRANKFURTER_URL.replace(/\/+$/, ''),
    oxrAppId: v.EXRATES_OXR_APP_ID,
    oxrUrl: v.EXRATES_OXR_URL.replace(/\/+$/, ''),
    negativeCacheSeconds: v.EXRATES_NEGATIVE_CACHE_SECONDS,
    now,
    historyYears: v.EXRATES_HISTORY_YEARS === 'all' ? 'all' : Number(v.EXRATES_HISTORY_YEARS),
    oldRatesDays: v.EXRATES_OLD_RATES_DAYS,
    crossCheckPercent: v.EXRATES_CROSSCHECK_PERCENT,
    quota: Object.freeze({ free: v.EXRATES_QUOTA_FREE, pro: v.EXRATES_QUOTA_PRO }),
    keyCacheMs: v.EXRATES_KEY_CACHE_MS,
    revocationPollMs: v.EXRATES_REVOCATION_POLL_MS,
    logRequests: v.EXRATES_LOG_REQUESTS,
    engineWorkarounds: v.EXRATES_ENGINE_WORKAROUNDS,
    workers: v.EXRATES_WORKERS,
    logLevel: v.EXRATES_LOG_LEVEL,
    logFormat: v.EXRATES_LOG_FORMAT,
    contactEmail: v.EXRATES_CONTACT_EMAIL,
    demoKey: v.EXRATES_DEMO_KEY_TIER === 'off' ? undefined : Object.freeze({ tier: v.EXRATES_DEMO_KEY_TIER, perAddress: v.EXRATES_DEMO_QUOTA_PER_IP }),
    trustedProxies: Object.freeze(trustedProxies),
    mcpOrigins,
    metrics: Object.freeze({ port: v.EXRATES_METRICS_PORT, host: v.EXRATES_METRICS_HOST, token: v.EXRATES_METRICS_TOKEN }),
    upstreamTimeoutMs: v.EXRATES_UPSTREAM_TIMEOUT_MS,
    refreshSeconds: v.EXRATES_REFRESH_SECONDS,
  });
}
