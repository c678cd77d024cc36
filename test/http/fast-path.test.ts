import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { hashApiKey } from '../../src/core/api-keys.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/log.js';
import { loadAll, tempDir, testConfig, unissuedKey } from '../helper.js';

/**
 * The fast path must never change an answer: the same requests, sent to a server with it and to
 * one without (each on its own store holding the same rates and the same key), get the same
 * status, headers (but Date) and body, request after request, quota headers included.
 */

interface Served {
  app: FastifyInstance;
  deps: Deps;
  port: number;
  close(): Promise<void>;
}

async function serve(fastPath: boolean, key: string): Promise<Served> {
  const dir = tempDir();
  const deps = await createDeps(testConfig(dir.path), { log: createLogger('silent') });
  await loadAll(deps);
  await deps.keys.insert({
    id: 'k1',
    prefix: key.slice(0, 8),
    tier: 'pro',
    owner: 'tester@example.org',
    createdAt: '2026-03-01T00:00:00.000Z',
    revokedAt: null,
    hash: hashApiKey(key),
  });
  const app = await buildApp(deps, { fastPath });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    deps,
    port: (app.server.address() as AddressInfo).port,
    async close() {
      await app.close();
      await deps.close();
      dir.remove();
    },
  };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (fetch would normalise the URL and add headers of its own). */
function send(port: number, method: string, path: string, headers: Record<string, string | string[]>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function comparable(reply: Reply) {
  const { date: _date, ...headers } = reply.headers;
  return { status: reply.status, headers, body: reply.body.toString('latin1') };
}

/** Mostly what the fast path answers, mixed with what it must leave to the full path. */
const weighted = <T>(common: readonly T[], rare: readonly T[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...common) }, { weight: 1, arbitrary: fc.constantFrom(...rare) });
const CODE = weighted(['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'KRW', 'usd', 'Gbp'], ['XAU', 'XXX', 'ABC', 'EU', 'EURO', 'E%55R', 'US+', '']);
const AMOUNT = weighted(['100', '99.95', '0', '000123.4500', '123456789012345678.123456789012'], ['1e5', '-1', '1,5', '%31', '', '1.']);
const present = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 10 });

type Spec = {
  route: string;
  from: string | undefined;
  to: string | undefined;
  amount: string | undefined;
  range: string | undefined;
  format: string | undefined;
  keyIn: 'header' | 'query' | 'both' | 'none' | 'wrong' | 'malformed';
  encoding: string | undefined;
  extra: string;
  method: string;
  ifNoneMatch: boolean;
  origin: boolean;
  /** How the header names are written: their case must not matter. */
  names: 'lower' | 'title' | 'upper';
  /** A header sent twice: the full path decides what that means. */
  twice: 'none' | 'key' | 'encoding';
};

const ENCODINGS = ['gzip', 'br', 'gzip, br', 'identity', 'br;q=0, gzip;q=0.5', '*'];

const anyRequest: fc.Arbitrary<Spec> = fc.record({
  route: weighted(['rate', 'convert', 'history'], ['rate/', 'nothing']),
  from: present(CODE),
  to: present(CODE),
  amount: present(AMOUNT),
  range: fc.option(weighted(['1m', '3m', '1y', '5y'], ['2y', '1Y']), { nil: undefined }),
  format: fc.option(weighted(['json', 'csv'], ['xml', 'CSV']), { nil: undefined }),
  keyIn: weighted(['header', 'query', 'both'] as const, ['none', 'wrong', 'malformed'] as const),
  encoding: fc.option(fc.constantFrom(...ENCODINGS), { nil: undefined }),
  extra: weighted(['', '&x=1'], ['&from=EUR', '&&', '&flag', '&amount=5']),
  method: weighted(['GET'], ['HEAD']),
  ifNoneMatch: weighted([false], [true]),
  origin: weighted([false], [true]),
  names: weighted(['lower'] as const, ['title', 'upper'] as const),
  twice: weighted(['none'] as const, ['key', 'encoding'] as const),
});

const VALID_CODES = ['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'KRW', 'usd', 'Gbp', 'nok'];
const everydayRequest: fc.Arbitrary<Spec> = fc.record({
  route: fc.constantFrom('rate', 'convert', 'history'),
  from: fc.constantFrom(...VALID_CODES),
  to: fc.constantFrom(...VALID_CODES),
  amount: fc.constantFrom('100', '99.95', '0', '000123.4500', '123456789012345678.123456789012', '0.000000000001'),
  range: fc.option(fc.constantFrom('1m', '3m', '6m', '1y', '5y'), { nil: undefined }),
  format: fc.option(fc.constantFrom('json', 'csv'), { nil: undefined }),
  keyIn: fc.constantFrom('header', 'query', 'both'),
  encoding: fc.option(fc.constantFrom(...ENCODINGS), { nil: undefined }),
  extra: fc.constantFrom('', '&x=1', '&callback=y'),
  method: fc.constant('GET'),
  ifNoneMatch: fc.constant(false),
  origin: fc.boolean(),
  names: fc.constantFrom('lower', 'title', 'upper'),
  twice: fc.constant('none'),
});

describe('fast path', () => {
  /** A fresh key, inserted into both stores by serve(). */
  const key = unissuedKey();
  /** Sent in the query beside a header key: the header wins, so this one is never looked at. */
  const ignoredQueryKey = unissuedKey();
  let fast: Served;
  let full: Served;

  before(async () => {
    [fast, full] = await Promise.all([serve(true, key), serve(false, key)]);
  });
  after(async () => {
    await Promise.all([fast?.close(), full?.close()]);
  });

  async function fastCount(): Promise<number> {
    const text = await fast.deps.metrics.registry.getSingleMetricAsString('exrates_http_fast_path_responses_total');
    return Number(/ (\d+)$/m.exec(text)?.[1]);
  }

  /** Sends each generated request three times to both servers and compares the answers; returns how many were compared. */
  async function compare(specs: fc.Arbitrary<Spec>, numRuns: number): Promise<number> {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(specs, async (spec) => {
        const params: string[] = [];
        if (spec.from !== undefined) params.push(`from=${spec.from}`);
        if (spec.to !== undefined) params.push(`to=${spec.to}`);
        if (spec.amount !== undefined) params.push(`amount=${spec.amount}`);
        if (spec.range !== undefined) params.push(`range=${spec.range}`);
        if (spec.format !== undefined) params.push(`format=${spec.format}`);
        const headers: Record<string, string | string[]> = {};
        const named = (name: string) =>
          spec.names === 'upper' ? name.toUpperCase() : spec.names === 'title' ? name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase()) : name;
        const presented = spec.keyIn === 'wrong' ? unissuedKey() : spec.keyIn === 'malformed' ? 'exr_short' : key;
        if (spec.keyIn !== 'none' && spec.keyIn !== 'query') headers[named('x-api-key')] = spec.twice === 'key' ? [presented, presented] : presented;
        if (spec.keyIn === 'query' || spec.keyIn === 'both') params.push(`apikey=${spec.keyIn === 'both' ? ignoredQueryKey : presented}`);
        if (spec.encoding !== undefined) headers[named('accept-encoding')] = spec.twice === 'encoding' ? [spec.encoding, 'gzip'] : spec.encoding;
        if (spec.origin) headers[named('origin')] = 'https://shop.example';
        const path = `/api/v1/${spec.route}?${params.join('&')}${spec.extra}`;
        // Three times: the first request of a kind fills the caches, after which the fast path can answer.
        for (let round = 0; round < 3; round++) {
          const [a, b] = await Promise.all([send(fast.port, spec.method, path, headers), send(full.port, spec.method, path, headers)]);
          if (spec.ifNoneMatch && typeof b.headers.etag === 'string') headers[named('if-none-match')] = b.headers.etag;
          assert.deepEqual(comparable(a), comparable(b), `${spec.method} ${path} ${JSON.stringify(headers)} (round ${round})`);
          compared += 1;
        }
      }),
      { numRuns },
    );
    return compared;
  }

  it('answers exactly as the full path does, for any request', async () => {
    const compared = await compare(anyRequest, 250);
    assert.equal(compared, 750);
  });

  it('answers everyday requests itself, exactly as the full path does', async () => {
    const before = await fastCount();
    const compared = await compare(everydayRequest, 150);
    const served = (await fastCount()) - before;
    console.log(`# ${served} of ${compared} everyday responses came from the fast path`);
    // Only the first request of a kind needs the full path (to compute the answer).
    assert.ok(served >= compared / 2, `only ${served} of ${compared} responses came from the fast path`);
    const none = await full.deps.metrics.registry.getSingleMetricAsString('exrates_http_fast_path_responses_total');
    assert.match(none, / 0$/m);
  });

  it('counts every request it answers, exactly, under concurrency', async () => {
    const before = await send(fast.port, 'GET', '/api/v1/rate?from=EUR&to=CHF', { 'x-api-key': key });
    const start = Number(before.headers['x-ratelimit-remaining']);
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => send(fast.port, 'GET', `/api/v1/rate?from=EUR&to=${i % 2 ? 'CHF' : 'USD'}`, { 'x-api-key': key })),
    );
    assert.ok(replies.every((r) => r.status === 200));
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => y - x);
    assert.deepEqual(remaining, Array.from({ length: 200 }, (_, i) => start - 1 - i));
  });

  it('leaves a GET with body framing to the full path', async () => {
    const warm = await send(fast.port, 'GET', '/api/v1/rate?from=EUR&to=NOK', { 'x-api-key': key });
    assert.equal(warm.status, 200);
    const before = await fastCount();
    const odd = await send(fast.port, 'GET', '/api/v1/rate?from=EUR&to=NOK', { 'x-api-key': key, 'transfer-encoding': 'xchunked' });
    assert.equal(odd.status, 400);
    assert.equal(odd.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(await fastCount(), before);
  });

  it('refuses a key as soon as it is revoked', async () => {
    const ok = await send(fast.port, 'GET', '/api/v1/rate?from=EUR&to=GBP', { 'x-api-key': key });
    assert.equal(ok.status, 200);
    await fast.deps.keys.revokeByPrefix(key.slice(0, 8), '2026-03-06T12:00:00.000Z');
    const refused = await send(fast.port, 'GET', '/api/v1/rate?from=EUR&to=GBP', { 'x-api-key': key });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['content-type'], 'application/problem+json; charset=utf-8');
  });
});
