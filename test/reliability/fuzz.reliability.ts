/**
 * Bad input: at least 100,000 generated requests against a live `exrates serve` process over
 * loopback. Most go through a keep-alive pool (node:http); what node:http refuses to send
 * (control characters, unicode in the path, malformed request lines, broken framing, huge or
 * folded headers) goes over raw sockets, one connection each.
 *
 * Shown: no 5xx and no request left unanswered; every error is problem+json with a code from
 * SPEC §7 and no stack; every conversion answered equals amount × rate rounded half-to-even, computed
 * independently with decimal.js; the rate and key rows are unchanged; each key's quota counts
 * exactly the requests it was answered; the process never crashed, logged no error, and stops
 * cleanly. The generator is seeded (RELIABILITY_SEED), so a failing run can be replayed.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { tempDir, unissuedKey } from '../helper.js';
import { convertResult, MINOR_UNITS, normaliseAmount } from '../e2e/independent.js';
import { processEnv, sharedHistoryVars } from '../support/env.js';
import { get } from '../support/http.js';
import { createKey, ensureBuilt, isRunning, revokeKey, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { ClosedUnanswered, rawRequest } from '../support/raw-http.js';
import { bump, problemDefect, recordKeys, saveLog, tableDigest, tally, writeResult } from './harness.js';

const SUITE = 'fuzz';
const HTTP_REQUESTS = Number(process.env.RELIABILITY_FUZZ_HTTP ?? 90_000);
const RAW_REQUESTS = Number(process.env.RELIABILITY_FUZZ_RAW ?? 10_000);
const SEED = Number(process.env.RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const HTTP_CONCURRENCY = 16;
const RAW_CONCURRENCY = 8;
const FREE_LIMIT = 200;
const PRO_LIMIT = 100_000;
const API = ['/api/v1/rate', '/api/v1/convert', '/api/v1/history'] as const;

// ---------------------------------------------------------------------------------------------
// What is sent

interface Keys {
  pro: string[];
  free: string;
  revoked: string;
}

/** A generated request: what is sent, and what the checks need to know about it. */
interface Generated {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  /** The valid key presented on a GET or HEAD of an API path. */
  countedKey?: string;
  /** Nothing in the request stops it reaching the key check: it must be counted. */
  mustCount?: boolean;
  /** The amount sent, plain and once, on a convert that must be checked against decimal.js. */
  amount?: string;
}

const LISTED = ['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'HUF', 'CZK', 'PLN', 'KRW', 'ISK', 'IDR'] as const;
const ATTACKS = [
  "' OR '1'='1",
  "EUR'; DROP TABLE rates; --",
  '1; DELETE FROM api_keys',
  "EUR' UNION SELECT hash FROM api_keys --",
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%00',
  '<script>alert(1)</script>',
  '${jndi:ldap://127.0.0.1/a}',
  '{{7*7}}',
  '%s%s%s%n',
  '__proto__',
  'constructor',
  '\u202eRUE',
  'EUR\r\nX-Injected: 1',
  '\u0000\u0001\u0002',
  'NaN',
  'Infinity',
  '-0',
];

const adversarial = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ATTACKS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 6_000 }).map((n) => 'Z'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 500 }).map((n) => '€'.repeat(n)) },
);

const currency = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...LISTED) },
  { weight: 2, arbitrary: fc.constantFrom(...LISTED).map((c) => c.toLowerCase()) },
  { weight: 1, arbitrary: fc.constantFrom('XXX', 'XAU', 'XDR', 'ZZZ', 'EU', 'EURO', 'US D', ' USD', 'usd ', '€', '123', '', 'Eur', 'ÉUR') },
  { weight: 1, arbitrary: adversarial },
);

const validAmount = fc
  .tuple(fc.stringMatching(/^[0-9]{1,18}$/), fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined }))
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));
const amount = fc.oneof(
  { weight: 6, arbitrary: validAmount },
  {
    weight: 2,
    arbitrary: fc.constantFrom('-1', '+1', '1e5', '1E-3', '1,000', ' 1', '1 ', '.5', '5.', '0x10', '1_000', '١٢٣', '１２', '', '1'.repeat(19), `1.${'1'.repeat(13)}`, '0.'),
  },
  { weight: 1, arbitrary: adversarial },
);
const range = fc.oneof(fc.constantFrom('1m', '3m', '6m', '1y', '5y'), fc.constantFrom('1M', '2y', '0m', '', '1y ', 'all', '12m'), adversarial);
const format = fc.oneof(fc.constantFrom('json', 'csv'), fc.constantFrom('CSV', 'xml', '', 'json;'), adversarial);
const paramName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('from', 'to', 'amount', 'range', 'format') },
  { weight: 2, arbitrary: fc.constantFrom('FROM', 'From', 'from[]', 'to[0]', '__proto__', 'constructor', 'prototype', '', '%66rom', 'fr%6Fm', 'amount%00', 'x') },
  { weight: 1, arbitrary: adversarial },
);

type Encoding = 'component' | 'raw' | 'broken';
const encoding = fc.constantFrom<Encoding>('component', 'component', 'component', 'raw', 'broken');
const BROKEN_ESCAPES = ['%', '%z', '%zz', '%e9', '%C3', '%C3%28', '%00', '%%', '%u00e9', '%2', '%ff%fe'];

/** encodeURIComponent over the UTF-8 bytes, so lone surrogates are sent too (as U+FFFD) rather than throwing. */
function pct(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.!~*'()-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function encode(value: string, how: Encoding, pick: number): string {
  if (how === 'component') return pct(value);
  if (how === 'raw') return value;
  const escape = BROKEN_ESCAPES[pick % BROKEN_ESCAPES.length]!;
  const at = pick % (value.length + 1);
  return pct(value.slice(0, at)) + escape + pct(value.slice(at));
}

function query(pairs: ReadonlyArray<readonly [string, string, Encoding, number]>): string {
  return pairs.map(([name, value, how, pick]) => `${encode(name, how === 'broken' ? 'component' : how, pick)}=${encode(value, how, pick)}`).join('&');
}

const pick = fc.nat({ max: 1_000_000 });

/** Key presentation: which key, and where. */
type KeyChoice = 'pro-header' | 'pro-query' | 'free-header' | 'revoked' | 'unknown' | 'malformed' | 'none' | 'huge' | 'twice';
const keyChoice = fc.constantFrom<KeyChoice>('pro-header', 'pro-header', 'pro-header', 'pro-query', 'free-header', 'revoked', 'unknown', 'malformed', 'none', 'huge', 'twice');

const headerValue = fc.oneof(
  fc.constantFrom('gzip', 'br', 'deflate', 'gzip, br', '*', 'identity;q=0', 'br;q=1.5', 'gzip;q=0, br;q=0', '"x"', '*', 'W/"abc"', 'text/csv', 'application/json', 'null', 'http://evil.example'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 100, max: 6_000 }).map((n) => 'h'.repeat(n)),
);
const headerName = fc.oneof(
  fc.constantFrom('accept-encoding', 'if-none-match', 'origin', 'accept', 'content-type', 'cookie', 'x-forwarded-for', 'range', 'if-modified-since', 'x-http-method-override', 'transfer-encoding', 'host', 'authorization', 'referer', 'user-agent'),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/),
);
const method = fc.oneof(
  { weight: 40, arbitrary: fc.constant('GET') },
  { weight: 4, arbitrary: fc.constant('HEAD') },
  { weight: 4, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE', 'SEARCH', 'LOCK', 'PURGE', 'MKCOL', 'REPORT') },
);
const oddPath = fc.oneof(
  fc.constantFrom(
    '/',
    '/healthz',
    '/readyz',
    '/docs',
    '/docs/',
    '/docs/static/index.html',
    '/docs/static/../../package.json',
    '/docs/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/api/v1/openapi.json',
    '/api/v1/openapi.yaml',
    '/api/v1/rate/',
    '//api/v1/rate',
    '/API/V1/RATE',
    '/api/v1/%72ate',
    '/api/v1/rate%00',
    '/api/v1/rate;x=1',
    '/api/v2/rate',
    '/problems/not_found',
    '/problems/__proto__',
    '/.env',
    '/../../etc/passwd',
    '/api/v1/history.csv',
  ),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 6 }).map((segments) => `/${segments.map((s) => pct(s)).join('/')}`),
  fc.tuple(adversarial, encoding, pick).map(([s, how, n]) => `/api/v1/${encode(s, how, n)}`),
  fc.integer({ min: 500, max: 9_000 }).map((n) => `/api/v1/rate/${'x'.repeat(n)}`),
);

interface Shape {
  kind: 'valid' | 'mutated' | 'junk' | 'odd';
  endpoint: number;
  from: string;
  to: string;
  amount: string;
  range: string;
  format: string;
  extra: Array<[string, string, Encoding, number]>;
  drop: number;
  repeat: number;
  key: KeyChoice;
  keyIndex: number;
  headers: Array<[string, string]>;
  method: string;
  path: string;
  body: string;
  plainAmount: string;
}

export const shape: fc.Arbitrary<Shape> = fc.record({
  kind: fc.constantFrom<Shape['kind']>('valid', 'valid', 'valid', 'valid', 'mutated', 'mutated', 'mutated', 'junk', 'odd', 'odd'),
  endpoint: fc.nat({ max: 2 }),
  from: currency,
  to: currency,
  amount,
  range,
  format,
  extra: fc.array(fc.tuple(paramName, adversarial, encoding, pick), { maxLength: 4 }),
  drop: fc.nat({ max: 5 }),
  repeat: fc.nat({ max: 5 }),
  key: keyChoice,
  keyIndex: fc.nat({ max: 99 }),
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
  method,
  path: oddPath,
  body: fc.oneof(fc.string({ maxLength: 40 }), fc.integer({ min: 500, max: 5_000 }).map((size) => 'b'.repeat(size))),
  plainAmount: validAmount,
});

const VALID_FROM = ['EUR', 'USD', 'GBP', 'CHF', 'JPY', 'PLN'];
const VALID_TO = Object.keys(MINOR_UNITS);

function build(s: Shape, keys: Keys): Generated {
  const headers: Array<[string, string]> = [];
  const endpoint = API[s.endpoint]!;
  let method = 'GET';
  let path: string;
  let countedKey: string | undefined;
  let amountSent: string | undefined;
  const params: Array<[string, string, Encoding, number]> = [];
  const keyQuery: Array<[string, string, Encoding, number]> = [];

  // The key: a valid one only where the quota must count it, so the final counts can be checked.
  const pro = keys.pro[s.keyIndex % keys.pro.length]!;
  switch (s.key) {
    case 'pro-header':
      headers.push(['x-api-key', pro]);
      countedKey = pro;
      break;
    case 'pro-query':
      keyQuery.push(['apikey', pro, 'raw', 0]);
      countedKey = pro;
      break;
    case 'free-header':
      headers.push(['x-api-key', keys.free]);
      countedKey = keys.free;
      break;
    case 'revoked':
      headers.push(['x-api-key', keys.revoked]);
      break;
    case 'unknown':
      headers.push(['x-api-key', `exr_${'0123456789abcdefghijABCDEFGHIJxy'.slice(s.keyIndex % 10)}${String(s.keyIndex).padStart(10, '0')}`]);
      break;
    case 'malformed':
      keyQuery.push(['apikey', s.from, 'component', s.keyIndex]);
      break;
    case 'huge':
      headers.push(['x-api-key', `exr_${'A'.repeat(4_000 + s.keyIndex * 50)}`]);
      break;
    case 'twice':
      keyQuery.push(['apikey', pro, 'raw', 0], ['apikey', pro, 'raw', 0]);
      break;
    case 'none':
      break;
  }

  if (s.kind === 'valid') {
    // A request the service should answer 200: known codes, a valid amount sent plain.
    const from = VALID_FROM[s.keyIndex % VALID_FROM.length]!;
    const to = VALID_TO[(s.keyIndex * 7 + s.drop) % VALID_TO.length]!;
    params.push(['from', s.keyIndex % 3 === 0 ? from.toLowerCase() : from, 'component', 0], ['to', to, 'component', 0]);
    if (endpoint === '/api/v1/convert') {
      params.push(['amount', s.plainAmount, 'raw', 0]);
      amountSent = s.plainAmount;
    }
    if (endpoint === '/api/v1/history') {
      params.push(['range', ['1m', '3m', '6m', '1y', '5y'][s.drop % 5]!, 'component', 0]);
      if (s.repeat % 2 === 0) params.push(['format', 'csv', 'component', 0]);
    }
    if (s.headers.length > 0 && s.repeat === 0) headers.push(['accept-encoding', 'gzip, br']);
    if (s.method === 'HEAD') method = 'HEAD';
    path = `${endpoint}?${query([...params, ...keyQuery])}`;
    return { method, path, headers, countedKey, mustCount: countedKey !== undefined, amount: amountSent };
  }

  if (s.kind === 'mutated') {
    const all: Array<[string, string, Encoding, number]> = [
      ['from', s.from, 'component', 0],
      ['to', s.to, 'component', 0],
      ['amount', s.amount, s.repeat === 1 ? 'raw' : 'component', s.keyIndex],
      ['range', s.range, 'component', 0],
      ['format', s.format, 'component', 0],
    ];
    // Drop one (a missing parameter), repeat one (a repeated parameter), add unknown ones.
    const kept = all.filter((_, i) => i !== s.drop);
    if (s.repeat < kept.length && s.repeat !== s.drop) kept.push(kept[s.repeat]!);
    params.push(...kept, ...s.extra);
    for (const [name, value] of s.headers) headers.push([name, value]);
    if (s.method === 'HEAD') method = 'HEAD';
    path = `${endpoint}?${query([...params, ...keyQuery])}`;
    return { method, path, headers, countedKey };
  }

  if (s.kind === 'junk') {
    // Junk query strings on API paths: no structure at all, and no valid key.
    const junk = s.extra.map(([name, value, how, n]) => `${encode(name, how, n)}${n % 3 === 0 ? '' : '='}${encode(value, how, n)}`).join(n(s) ? '&&' : '&');
    path = `${endpoint}?${junk}${s.repeat === 3 ? '#frag' : ''}`;
    const valid = new Set([...keys.pro, keys.free]);
    return { method: 'GET', path, headers: headers.filter(([name, value]) => !(name === 'x-api-key' && valid.has(value))) };
  }

  // Odd: any method, odd paths, random headers, bodies; valid keys are not sent here.
  method = s.method;
  path = s.drop % 2 === 0 ? `${s.path}${s.extra.length > 0 ? `?${query(s.extra)}` : ''}` : `${endpoint}?${query([['from', s.from, 'component', 0], ['to', s.to, 'component', 0], ...s.extra])}`;
  const oddHeaders: Array<[string, string]> = s.headers.map(([name, value]) => [name, value]);
  if (s.key === 'revoked' || s.key === 'unknown' || s.key === 'huge') oddHeaders.push(headers[0]!);
  const body = method === 'GET' || method === 'HEAD' ? (s.repeat === 4 ? Buffer.from(s.body) : undefined) : Buffer.from(s.body);
  return { method, path, headers: oddHeaders, body };
}

function n(s: Shape): boolean {
  return s.keyIndex % 5 === 0;
}

// ---------------------------------------------------------------------------------------------
// Raw requests: what node:http will not send

const CRLF = '\r\n';
const rawShape = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'HEAD', 'get', 'G ET', 'GET\u0000', '', 'FOO', 'CONNECT', 'PRI', 'BREW', 'GET GET', '\u00e9T'), fc.stringMatching(/^[A-Z!#$%&'*+.^_`|~-]{1,12}$/)),
  target: fc.oneof(
    fc.constantFrom('/api/v1/rate?from=EUR&to=USD', '/api/v1/convert?from=EUR&to=JPY&amount=1', '/api/v1/history?from=USD&to=CHF&range=1m', '*', 'http://evil.example/api/v1/rate', '//x', '/../../etc/passwd', ''),
    fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `/api/v1/rate?from=${s}&to=USD`),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => `/${s}`),
    fc.string({ maxLength: 20 }).map((s) => `/api/v1/ra te?${s}`),
    fc.integer({ min: 15_000, max: 40_000 }).map((size) => `/api/v1/rate?from=EUR&to=USD&pad=${'p'.repeat(size)}`),
  ),
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', '', 'HTTP/1.1 extra', 'http/1.1', 'HTTP/1.10'),
  eol: fc.constantFrom(CRLF, CRLF, CRLF, CRLF, '\n', '\r'),
  host: fc.constantFrom('Host: x', 'Host: x', '', 'Host: x\r\nHost: y', 'Host:', 'Host: \u00e9\u00e9'),
  headers: fc.array(
    fc.oneof(
      fc.constantFrom(
        `X-Api-Key: ${unissuedKey()}`,
        'X-Folded: a\r\n b',
        'No-Colon',
        'Space-Before : colon',
        'X-Nul: a\u0000b',
        'X-Cr: a\rb',
        'Content-Length: 5',
        'Content-Length: -1',
        'Content-Length: 1, 2',
        'Content-Length: 99999999999999999999',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Transfer-Encoding: xchunked',
        'Expect: 100-continue',
        'Connection: upgrade\r\nUpgrade: websocket',
        'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
        ': empty-name',
        'X-Injected: a\r\n\r\nGET /admin HTTP/1.1',
      ),
      fc.string({ unit: 'binary', maxLength: 40 }).map((v) => `X-Unicode: ${v}`),
      fc.integer({ min: 17_000, max: 30_000 }).map((size) => `X-Huge: ${'h'.repeat(size)}`),
      fc.integer({ min: 100, max: 400 }).map((count) => Array.from({ length: count }, (_, i) => `X-Many-${i}: ${i}`).join(CRLF)),
    ),
    { maxLength: 4 },
  ),
  body: fc.oneof(fc.constant(''), fc.string({ maxLength: 200 }), fc.constantFrom('0\r\n\r\n', 'zz\r\n', '5\r\nabc\r\n0\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')),
});

type RawShape = typeof rawShape extends fc.Arbitrary<infer T> ? T : never;

/**
 * Bytes of nothing but line ends hold no request: a server ignores empty lines before a
 * request-line (RFC 9112 §2.2), so it answers nothing and closes once the client ends its side.
 * The generator makes such input only now and then (an empty method, target and version, no
 * headers, no body); these few are sent in every run.
 */
const NO_REQUEST = ['\r\n\r\n', '\n\n', '\r\n', '\r\r\n\r\n'];
const holdsNoRequest = (bytes: Buffer) => /^[\r\n]*$/.test(bytes.toString('latin1'));

function buildRaw(s: RawShape): { bytes: Buffer; head: boolean } {
  const lines = [`${s.method} ${s.target} ${s.version}`.trimEnd(), ...(s.host ? [s.host] : []), ...s.headers];
  return { bytes: Buffer.from(`${lines.join(s.eol)}${s.eol}${s.eol}${s.body}`, 'utf8'), head: s.method === 'HEAD' };
}

// ---------------------------------------------------------------------------------------------

describe('bad input: 100,000 generated requests against a live server', () => {
  const dir = tempDir('exrates-fuzz-');
  let setup: ProcessSetup;
  let server: Instance | undefined;
  let keys: Keys;
  const databaseFile = join(dir.path, 'fuzz.db');
  const agent = new http.Agent({ keepAlive: true, maxSockets: HTTP_CONCURRENCY });

  before(async () => {
    await ensureBuilt();
    setup = {
      cwd: dir.path,
      env: processEnv({ EXRATES_DATABASE_URL: `sqlite:${databaseFile}`, ...sharedHistoryVars(), EXRATES_QUOTA_FREE: String(FREE_LIMIT) }),
    };
    const issued: string[] = [];
    for (const tier of ['pro', 'pro', 'pro', 'free', 'free'] as const) issued.push(await createKey(setup, tier));
    keys = { pro: issued.slice(0, 3), free: issued[3]!, revoked: issued[4]! };
    await revokeKey(setup, keys.revoked);
    recordKeys(SUITE, issued);
    server = await startInstance('fuzz', setup);
  });

  after(async () => {
    agent.destroy();
    if (server) {
      await stopInstance(server);
      saveLog(SUITE, 'server', server);
    }
    dir.remove();
  });

  it('answers every request without a 5xx, in problem+json, exactly, and leaves the store as it was', async () => {
    const started = performance.now();
    const statuses = new Map<string, number>();
    const defects: string[] = [];
    const unanswered: string[] = [];
    const counted = new Map<string, number>();
    const reachedKeyCheck = new Map<string, number>();
    let convertsChecked = 0;
    let throughRaw = 0;
    let closedUnanswered = 0;
    const before = { rates: tableDigest(databaseFile, 'rates'), keys: tableDigest(databaseFile, 'api_keys') };
    const base = server!.base;
    const port = server!.port;
    const describeRequest = (g: Generated) => `${g.method} ${g.path.slice(0, 300)} ${JSON.stringify(g.headers).slice(0, 300)}`;

    function check(g: Generated | string, status: number, contentType: string | undefined, body: string, sentHead: boolean, headers: Record<string, unknown>): void {
      bump(statuses, String(status));
      // An answer to a HEAD that the parser could not read carries a body: check it like any other.
      const head = sentHead && body.length === 0;
      const what = typeof g === 'string' ? g : describeRequest(g);
      if (status >= 500) defects.push(`${status} for ${what}: ${body.slice(0, 200)}`);
      else if (status >= 400) {
        const defect = problemDefect(status, contentType, body, head);
        if (defect) defects.push(`${defect} (${status}) for ${what}`);
      }
      if (typeof g === 'string') return;
      if (g.countedKey) {
        // Counted: answered past the key check (it adds the X-RateLimit headers), and not a 429.
        // A random header can stop a request before it (a 431, a framing error): not counted.
        const passed = headers['x-ratelimit-limit'] !== undefined;
        if (passed) bump(reachedKeyCheck, g.countedKey);
        if (passed && status !== 429) bump(counted, g.countedKey);
        if (g.mustCount && !passed) defects.push(`no X-RateLimit headers for a valid key: ${what}`);
      }
      if (g.amount !== undefined && status === 200 && !head) {
        const answer = JSON.parse(body) as { amount: string; rate: string; result: string; to: string };
        const expected = convertResult(answer.amount, answer.rate, answer.to);
        if (answer.result !== expected) defects.push(`convert ${g.amount} → ${answer.result}, expected ${expected}: ${what}`);
        if (answer.amount !== normaliseAmount(g.amount)) defects.push(`amount ${g.amount} answered as ${answer.amount}`);
        convertsChecked += 1;
      }
    }

    function sendRaw(label: string, bytes: Buffer, head: boolean, g?: Generated): Promise<void> {
      if (holdsNoRequest(bytes)) {
        return rawRequest(port, bytes, { timeoutMs: 10_000 }).then(
          (reply) => {
            defects.push(`answered ${reply.status} to bytes that hold no request: ${label}`);
          },
          (error: unknown) => {
            if (error instanceof ClosedUnanswered) closedUnanswered += 1;
            else unanswered.push(`${String(error)}: ${label}`);
          },
        );
      }
      return rawRequest(port, bytes, { head, timeoutMs: 10_000 }).then(
        (reply) => check(g ?? label, reply.status, reply.headers['content-type'], reply.body.toString('utf8'), head, reply.headers),
        (error: unknown) => {
          unanswered.push(`${String(error)}: ${label.slice(0, 300)}`);
        },
      );
    }

    function rawBytesOf(g: Generated): Buffer {
      const head = [`${g.method} ${g.path} HTTP/1.1`, 'Host: 127.0.0.1', ...g.headers.map(([name, value]) => `${name}: ${value}`)];
      if (g.body) head.push(`Content-Length: ${g.body.length}`);
      return Buffer.concat([Buffer.from(`${head.join(CRLF)}${CRLF}${CRLF}`, 'utf8'), g.body ?? Buffer.alloc(0)]);
    }

    /**
     * Framing headers and bodies can make the server's parser give up on a connection after it
     * answered (a bad chunk after a GET): such requests get a connection of their own, so the
     * pool's next request is not lost with it. A response node:http cannot parse (a 431 with a
     * body for a HEAD it could not read) is fetched again raw, to check what the server sent.
     */
    const FRAMING = new Set(['transfer-encoding', 'content-length', 'expect', 'connection', 'upgrade', 'te', 'trailer']);
    function send(g: Generated): Promise<void> {
      return new Promise((resolve) => {
        const resendRaw = () => {
          throughRaw += 1;
          void sendRaw(describeRequest(g), rawBytesOf(g), g.method === 'HEAD', g).then(resolve);
        };
        let request: http.ClientRequest;
        try {
          const headers: Record<string, string | string[]> = {};
          for (const [name, value] of g.headers) {
            const existing = headers[name];
            headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
          }
          const isolated = g.body !== undefined || g.headers.some(([name]) => FRAMING.has(name.toLowerCase()));
          request = http.request(`${base}${g.path}`, { method: g.method, headers, agent: isolated ? false : agent });
        } catch {
          // node:http refuses this path or header; the same bytes go over a raw socket instead.
          resendRaw();
          return;
        }
        request.setTimeout(10_000, () => request.destroy(new Error('no answer within 10 s')));
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            check(g, response.statusCode ?? 0, response.headers['content-type'], Buffer.concat(chunks).toString('utf8'), g.method === 'HEAD', response.headers);
            resolve();
          });
          response.on('error', (error) => {
            unanswered.push(`${String(error)}: ${describeRequest(g)}`);
            resolve();
          });
        });
        request.on('error', (error: Error & { code?: string }) => {
          // Only the server's own parser errors get an answer node:http cannot read; none was counted.
          if (error.code?.startsWith('HPE_')) resendRaw();
          else {
            unanswered.push(`${String(error)}${request.reusedSocket ? ' (on a reused connection)' : ''}: ${describeRequest(g)}`);
            resolve();
          }
        });
        if (g.body && g.method !== 'GET' && g.method !== 'HEAD') request.end(g.body);
        else request.end();
      });
    }

    // The keep-alive pool, in seeded batches, several requests in flight.
    const BATCH = 2_000;
    for (let done = 0, batch = 0; done < HTTP_REQUESTS; done += BATCH, batch += 1) {
      const shapes = fc.sample(shape, { numRuns: Math.min(BATCH, HTTP_REQUESTS - done), seed: SEED + batch });
      const generated = shapes.map((s) => build(s, keys));
      let next = 0;
      await Promise.all(
        Array.from({ length: HTTP_CONCURRENCY }, async () => {
          while (next < generated.length) await send(generated[next++]!);
        }),
      );
    }
    const httpSeconds = (performance.now() - started) / 1000;

    // Raw sockets, one connection per request.
    const rawStarted = performance.now();
    const raws = [
      ...NO_REQUEST.map((text) => ({ bytes: Buffer.from(text, 'latin1'), head: false })),
      ...fc.sample(rawShape, { numRuns: RAW_REQUESTS, seed: SEED + 1_000_003 }).map(buildRaw),
    ];
    let nextRaw = 0;
    await Promise.all(
      Array.from({ length: RAW_CONCURRENCY }, async () => {
        while (nextRaw < raws.length) {
          const { bytes, head } = raws[nextRaw++]!;
          await sendRaw(JSON.stringify(bytes.toString('utf8').slice(0, 300)), bytes, head);
        }
      }),
    );
    const rawSeconds = (performance.now() - rawStarted) / 1000;

    // The quota of each valid key counts exactly what it was answered.
    const quotaErrors: string[] = [];
    for (const key of [...keys.pro, keys.free]) {
      const limit = keys.pro.includes(key) ? PRO_LIMIT : FREE_LIMIT;
      const used = counted.get(key) ?? 0;
      const probe = await get(`${base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key }, agent });
      const remaining = Number(probe.headers['x-ratelimit-remaining']);
      const expected = used < limit ? limit - used - 1 : 0;
      if (remaining !== expected) quotaErrors.push(`${key.slice(0, 12)}: ${used} answered, remaining ${remaining}, expected ${expected}`);
    }
    const freeAnswered = counted.get(keys.free) ?? 0;

    const afterRun = { rates: tableDigest(databaseFile, 'rates'), keys: tableDigest(databaseFile, 'api_keys') };
    const alive = isRunning(server!);
    const errorLines = server!.output
      .join('')
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line));
    const stop = await stopInstance(server!);
    const total = HTTP_REQUESTS + raws.length;
    const fiveXx = [...statuses].filter(([status]) => Number(status) >= 500).reduce((sum, [, count]) => sum + count, 0);
    const seconds = (performance.now() - started) / 1000;

    writeResult({
      suite: SUITE,
      claim: `${total.toLocaleString('en')} requests: no 5xx, no crash, every error problem+json with a SPEC §7 code, store unchanged, quotas exact`,
      passed: defects.length === 0 && unanswered.length === 0 && quotaErrors.length === 0 && alive && stop.code === 0 && errorLines.length === 0,
      seconds,
      figures: [
        ['seed', SEED],
        ['requests', total],
        ['keep-alive pool (node:http, 16 in flight)', `${HTTP_REQUESTS} in ${httpSeconds.toFixed(1)} s (${Math.round(HTTP_REQUESTS / httpSeconds)}/s), ${throughRaw} of them re-sent raw`],
        ['raw sockets (one connection each, 8 in flight)', `${raws.length} in ${rawSeconds.toFixed(1)} s`],
        ['bytes holding no request (line ends only)', `${closedUnanswered}, each closed without an answer`],
        ['statuses', tally(statuses)],
        ['5xx', fiveXx],
        ['unanswered', unanswered.length],
        ['invalid problems', defects.length],
        ['conversions checked against decimal.js', convertsChecked],
        ['quotas exact', quotaErrors.length === 0 ? `yes (${[...keys.pro, keys.free].length} keys; free key answered ${freeAnswered} of ${reachedKeyCheck.get(keys.free) ?? 0}, limit ${FREE_LIMIT})` : quotaErrors.join('; ')],
        ['rates rows before → after', `${before.rates.rows} (${before.rates.digest}) → ${afterRun.rates.rows} (${afterRun.rates.digest})`],
        ['key rows before → after', `${before.keys.rows} (${before.keys.digest}) → ${afterRun.keys.rows} (${afterRun.keys.digest})`],
        ['server', `${alive ? 'alive' : 'DEAD'} after the run, ${errorLines.length} error log lines, exit code ${stop.code} on SIGTERM`],
      ],
      notes: [...defects.slice(0, 20), ...unanswered.slice(0, 20), ...errorLines.slice(0, 5)],
    });

    assert.deepEqual(unanswered.slice(0, 20), [], 'every request answered');
    assert.deepEqual(defects.slice(0, 20), [], 'no 5xx, every error a valid problem, every conversion exact');
    assert.equal(fiveXx, 0);
    assert.ok(convertsChecked > HTTP_REQUESTS / 50, `conversions checked: ${convertsChecked}`);
    const freeSent = reachedKeyCheck.get(keys.free) ?? 0;
    assert.equal(freeAnswered, Math.min(FREE_LIMIT, freeSent), `the free key was answered ${freeAnswered} of ${freeSent} requests, limit ${FREE_LIMIT}`);
    assert.deepEqual(quotaErrors, [], 'each quota counts exactly what was answered');
    assert.deepEqual(afterRun, before, 'rate and key rows unchanged');
    assert.ok(alive, 'the server is still running');
    assert.deepEqual(errorLines.slice(0, 5), [], 'nothing logged at error level');
    assert.equal(stop.code, 0, 'a clean stop');
  });
});
