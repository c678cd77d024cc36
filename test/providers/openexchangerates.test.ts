import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { FeedHttpError } from '../../src/providers/fetch-bytes.js';
import { createOpenExchangeRatesProvider, parseOpenExchangeRates } from '../../src/providers/openexchangerates.js';
import { serveOnLoopback } from '../support/upstreams.js';

const FIXTURES = new URL('../fixtures/openexchangerates/', import.meta.url);
const fixture = (name: string) => readFile(new URL(name, FIXTURES), 'utf8');

const APP_ID = '4f0c2e9a7b1d4c3e8a6f5b2d9c0e1a7b';
const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const NOW = fixedClock('2026-03-06T15:20:00Z');

const feedError = (pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

/** Every way an error can end up in a log, none of which may show the app id. */
function assertNoSecret(error: unknown, secret = APP_ID): void {
  const views = [String(error), inspect(error, { depth: 10 }), JSON.stringify(error), (error as Error).stack ?? ''];
  if (error instanceof FeedHttpError) views.push(error.url);
  for (const view of views) assert.ok(!view.includes(secret), `the app id leaks: ${view}`);
  const cause = (error as Error).cause;
  if (cause !== undefined) assertNoSecret(cause, secret);
}

type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  baseUrl: string;
  requests: URL[];
  close(): Promise<void>;
}

/** Routes by path pattern; serves under /api like openexchangerates.org. */
async function startServer(routes: [RegExp, Handler][]): Promise<TestServer> {
  const requests: URL[] = [];
  const server = await serveOnLoopback((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream.test');
    requests.push(url);
    const route = routes.find(([pattern]) => pattern.test(url.pathname));
    if (route) return route[1](url, req, res);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":true,"status":404,"message":"not_found","description":"Client requested a non-existent resource/route."}');
  });
  return { baseUrl: `${server.origin}/api`, requests, close: server.close };
}

const sendJson = (res: ServerResponse, text: string, status = 200) => {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }).end(body);
};

/** The NGN rate text the fake upstream publishes for a day, built without floats. */
function ngnText(day: string): string {
  const n = Number(day.replaceAll('-', '')) % 997;
  return `14${String(n).padStart(3, '0')}.${String((n * 37) % 100).padStart(2, '0')}`;
}

/** historical/YYYY-MM-DD.json as OXR writes it: the last rates of that day, timestamp 23:59:59 UTC. */
function historicalText(day: string): string {
  const timestamp = Date.parse(`${day}T23:59:59Z`) / 1000;
  return `{
  "disclaimer": "Usage subject to terms: https://openexchangerates.org/terms",
  "license": "https://openexchangerates.org/license",
  "timestamp": ${timestamp},
  "base": "USD",
  "rates": { "BTC": 1.1508001e-5, "EUR": 0.858021, "NGN": ${ngnText(day)}, "USD": 1 }
}`;
}

/** Answers like OXR: the app id is checked first, then the route. */
function oxrRoutes(latest: () => string, invalidAppId: string): [RegExp, Handler][] {
  const authorized =
    (handler: Handler): Handler =>
    (url, req, res) => {
      if (url.searchParams.get('app_id') !== APP_ID) return sendJson(res, invalidAppId, 401);
      handler(url, req, res);
    };
  return [
    [/^\/api\/latest\.json$/, authorized((_url, _req, res) => sendJson(res, latest()))],
    [
      /^\/api\/historical\/\d{4}-\d{2}-\d{2}\.json$/,
      authorized((url, _req, res) => sendJson(res, historicalText(/(\d{4}-\d{2}-\d{2})/.exec(url.pathname)![1]!))),
    ],
  ];
}

describe('parseOpenExchangeRates', () => {
  it('reads latest.json: one day from the timestamp, exact number text, no USD entry', async () => {
    const doc = parseOpenExchangeRates(await fixture('latest.json'));
    assert.equal(doc.provider, 'openexchangerates');
    assert.equal(doc.base, 'USD');
    assert.equal(doc.days.length, 1);
    const [day] = doc.days;
    assert.equal(day!.day, '2026-03-06');
    assert.equal(day!.asOf, '2026-03-06T15:00:00Z');
    assert.equal(day!.rates['AED'], '3.6725');
    assert.equal(day!.rates['AFN'], '66.309999');
    assert.equal(day!.rates['IDR'], '16535.25');
    assert.equal(day!.rates['XAU'], '0.00021431');
    assert.equal(day!.rates['BTC'], '0.000011183572');
    assert.equal('USD' in day!.rates, false);
    assert.equal(Object.keys(day!.rates).length, 28);
  });

  it('reads a historical file, dated by its end-of-day timestamp', async () => {
    const doc = parseOpenExchangeRates(await fixture('historical-2026-03-02.json'));
    assert.deepEqual(doc.days, [
      {
        day: '2026-03-02',
        asOf: '2026-03-02T23:59:59Z',
        rates: { BTC: '0.000011508001', EUR: '0.858021', GBP: '0.748133', GHS: '10.91', KES: '129.2', NGN: '1401.5' },
      },
    ]);
  });

  it('keeps digits a float would lose and ignores unknown fields', () => {
    const doc = parseOpenExchangeRates('{"timestamp":1772809200,"base":"USD","rates":{"NGN":1399.9300000000000000001,"USD":1},"extra":[1,2]}');
    assert.deepEqual(doc.days[0]!.rates, { NGN: '1399.9300000000000000001' });
  });

  it('names the reason of an error body even when it comes with status 200', async () => {
    const invalidAppId = await fixture('error-invalid-app-id.json');
    assert.throws(() => parseOpenExchangeRates('{"error":true,"status":403,"message":"not_allowed","description":"Changing the API `base` currency is available for Developer, Enterprise and Unlimited plan clients."}'), feedError(/answered with an error: not_allowed: Changing the API `base`/));
    assert.throws(() => parseOpenExchangeRates(invalidAppId), feedError(/invalid_app_id: Invalid App ID provided/));
  });

  const valid = (patch: Record<string, string>) => {
    const parts = { timestamp: '1772809200', base: '"USD"', rates: '{"NGN":1399.93,"USD":1}', ...patch };
    return `{${Object.entries(parts)
      .filter(([, value]) => value !== '')
      .map(([key, value]) => `"${key}":${value}`)
      .join(',')}}`;
  };
  const malformed: [string, string, RegExp][] = [
    ['an array', '[{"base":"USD"}]', /expected an object, got an array/],
    ['a string', '"ok"', /expected an object, got the string "ok"/],
    ['a missing timestamp', valid({ timestamp: '' }), /"timestamp" is missing, not Unix seconds/],
    ['a timestamp as a string', valid({ timestamp: '"1772809200"' }), /"timestamp" is the string "1772809200"/],
    ['a fractional timestamp', valid({ timestamp: '1772809200.5' }), /"timestamp" is the number 1772809200\.5/],
    ['a timestamp in exponent form', valid({ timestamp: '1.7728092e9' }), /not Unix seconds/],
    ['a negative timestamp', valid({ timestamp: '-1' }), /not Unix seconds/],
    ['a zero timestamp', valid({ timestamp: '0' }), /not Unix seconds/],
    ['a timestamp in milliseconds beyond any date', valid({ timestamp: '1772809200000000' }), /not Unix seconds/],
    ['a missing base', valid({ base: '' }), /"base" is missing, not a currency code/],
    ['a lower-case base', valid({ base: '"usd"' }), /"base" is the string "usd", not a currency code/],
    ['missing rates', valid({ rates: '' }), /"rates" is missing, not an object/],
    ['rates as an array', valid({ rates: '[1399.93]' }), /"rates" is an array, not an object/],
    ['rates as null', valid({ rates: 'null' }), /"rates" is null/],
    ['no rate but the base', valid({ rates: '{"USD":1}' }), /holds no rates/],
    ['empty rates', valid({ rates: '{}' }), /holds no rates/],
    ['a rate as a string', valid({ rates: '{"NGN":"1399.93"}' }), /rate of NGN is the string "1399\.93", not a positive number/],
    ['a zero rate', valid({ rates: '{"NGN":0}' }), /rate of NGN is the number 0, not a positive number/],
    ['a negative rate', valid({ rates: '{"NGN":-1399.93}' }), /rate of NGN is the number -1399\.93/],
    ['a null rate', valid({ rates: '{"NGN":null}' }), /rate of NGN is null/],
    ['a zero base rate', valid({ rates: '{"NGN":1399.93,"USD":0}' }), /rate of USD is the number 0/],
    ['a lower-case code', valid({ rates: '{"ngn":1399.93}' }), /"ngn" is not three upper-case letters/],
    ['a long code', valid({ rates: '{"VEF_BLKMKT":1399.93}' }), /"VEF_BLKMKT" is not three upper-case letters/],
    ['invalid JSON', '{"timestamp":1772809200,}', /invalid or truncated JSON/],
    ['a body cut short', '{"timestamp":1772809200,"base":"USD","rates":{"AED":3.6725,"AF', /invalid or truncated JSON/],
    ['an HTML page', '<html><head><title>503 Service Unavailable</title></head></html>', /HTML or XML page/],
    ['an empty body', '', /the body is empty/],
  ];
  for (const [name, text, pattern] of malformed) {
    it(`rejects ${name}`, () => {
      assert.throws(() => parseOpenExchangeRates(text), feedError(pattern));
    });
  }
});

describe('Open Exchange Rates provider against a local server', () => {
  let server: TestServer;
  let latestText: string;
  before(async () => {
    latestText = await fixture('latest.json');
    server = await startServer(oxrRoutes(() => latestText, await fixture('error-invalid-app-id.json')));
  });
  after(() => server.close());

  const provider = (appId = APP_ID) =>
    createOpenExchangeRatesProvider({ baseUrl: server.baseUrl, appId, timeoutMs: 5_000, clock: NOW });

  it('identifies itself as openexchangerates with base USD', () => {
    assert.equal(provider().id, 'openexchangerates');
    assert.equal(provider().base, 'USD');
  });

  it('refuses to start without an app id', () => {
    assert.throws(() => provider(''), RangeError);
    assert.throws(() => provider('  '), RangeError);
  });

  it('reads latest.json with the app id in the query', async () => {
    server.requests.length = 0;
    const doc = await provider().latest({ currencies: ['NGN'] });
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.pathname, '/api/latest.json');
    assert.deepEqual(Object.fromEntries(server.requests[0]!.searchParams), { app_id: APP_ID });
    assert.deepEqual(doc, parseOpenExchangeRates(latestText));
  });

  it('reads a series one historical file per day, in order', async () => {
    server.requests.length = 0;
    const doc = await provider().series({ from: '2026-02-27', to: '2026-03-03' });
    assert.deepEqual(
      server.requests.map((u) => u.pathname).sort(),
      ['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03'].map((d) => `/api/historical/${d}.json`),
    );
    for (const url of server.requests) assert.equal(url.searchParams.get('app_id'), APP_ID);
    assert.equal(doc.base, 'USD');
    assert.deepEqual(
      doc.days.map((d) => [d.day, d.asOf, d.rates['NGN'], d.rates['BTC']]),
      ['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03'].map((d) => [d, `${d}T23:59:59Z`, ngnText(d), '0.000011508001']),
    );
  });

  it('reads a 31-day series and refuses a 32-day one without calling upstream', async () => {
    server.requests.length = 0;
    const doc = await provider().series({ from: '2026-01-01', to: '2026-01-31' });
    assert.equal(doc.days.length, 31);
    assert.equal(server.requests.length, 31);

    server.requests.length = 0;
    await assert.rejects(
      provider().series({ from: '2026-01-01', to: '2026-02-01' }),
      feedError(/longer than 31 days.*history comes from other providers/),
    );
    await assert.rejects(provider().series({ from: '2021-03-06', to: '2026-03-06' }), feedError(/other providers/));
    assert.equal(server.requests.length, 0);
  });

  it('does not ask for days after today', async () => {
    server.requests.length = 0;
    const doc = await provider().series({ from: '2026-03-05', to: '2026-03-10' });
    assert.deepEqual(doc.days.map((d) => d.day), ['2026-03-05', '2026-03-06']);
    assert.equal(server.requests.length, 2);

    server.requests.length = 0;
    assert.deepEqual((await provider().series({ from: '2026-03-07', to: '2026-03-10' })).days, []);
    assert.equal(server.requests.length, 0);
  });

  it('refuses a range that is not one', async () => {
    await assert.rejects(provider().series({ from: '2026-03-06', to: '2026-03-01' }), RangeError);
    await assert.rejects(provider().series({ from: '2026-02-30', to: '2026-03-01' }), RangeError);
  });

  it('names the reason of a 401 without ever showing the app id', async () => {
    server.requests.length = 0;
    const wrongId = 'bad0bad0bad0bad0bad0bad0bad0bad0';
    const oxr = provider(wrongId);
    for (const attempt of [oxr.latest(), oxr.series({ from: '2026-03-01', to: '2026-03-02' })]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.ok(error instanceof FeedHttpError, String(error));
        assert.equal(error.status, 401);
        assert.match(error.message, /HTTP 401 Unauthorized: invalid_app_id: Invalid App ID provided/);
        assert.match(error.message, /app_id=\[redacted\]/);
        assertNoSecret(error, wrongId);
        return true;
      });
    }
    assert.equal(server.requests[0]!.searchParams.get('app_id'), wrongId);
  });

  it('sends an app id with reserved characters encoded, and redacts both spellings', async () => {
    server.requests.length = 0;
    const oddId = 'ab+c/d=e&f';
    await assert.rejects(provider(oddId).latest(), (error: unknown) => {
      assertNoSecret(error, oddId);
      assertNoSecret(error, encodeURIComponent(oddId));
      return true;
    });
    assert.equal(server.requests[0]!.searchParams.get('app_id'), oddId);
  });
});

describe('Open Exchange Rates provider failures', () => {
  const servers: TestServer[] = [];
  let latestText: string;
  before(async () => {
    latestText = await fixture('latest.json');
  });
  after(() => Promise.all(servers.map((s) => s.close())));

  async function providerFor(handler: Handler, timeoutMs = 2_000) {
    const server = await startServer([[/^\/api\//, handler]]);
    servers.push(server);
    return {
      server,
      oxr: createOpenExchangeRatesProvider({ baseUrl: server.baseUrl, appId: APP_ID, timeoutMs, clock: NOW }),
    };
  }

  it('names the reason of a 429 and keeps the status', async () => {
    const body = await fixture('error-access-restricted.json');
    const { oxr } = await providerFor((_url, _req, res) => sendJson(res, body, 429));
    await assert.rejects(oxr.latest(), (error: unknown) => {
      assert.ok(error instanceof FeedHttpError);
      assert.equal(error.status, 429);
      assert.match(error.message, /latest\.json\?app_id=\[redacted\]: HTTP 429 Too Many Requests: access_restricted: Access restricted/);
      assertNoSecret(error);
      return true;
    });
  });

  it('redacts the app id when upstream text echoes it', async () => {
    const { oxr } = await providerFor((url, _req, res) => {
      const echoed = url.searchParams.get('app_id')!;
      sendJson(res, JSON.stringify({ error: true, status: 403, message: 'access_restricted', description: `App ID ${echoed} is suspended.` }), 403);
    });
    await assert.rejects(oxr.latest(), (error: unknown) => {
      feedError(/HTTP 403 Forbidden: access_restricted: App ID \[redacted\] is suspended\./)(error);
      assertNoSecret(error);
      return true;
    });
  });

  it('rejects an HTTP 500 with a plain-text body, URL redacted', async () => {
    const { oxr, server } = await providerFor((_url, _req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error'));
    await assert.rejects(oxr.latest(), (error: unknown) => {
      assert.ok(error instanceof FeedHttpError);
      assert.equal(error.status, 500);
      assert.equal(error.url, `${server.baseUrl}/latest.json?app_id=[redacted]`);
      assert.equal(error.message, `${server.baseUrl}/latest.json?app_id=[redacted]: HTTP 500 Internal Server Error`);
      assertNoSecret(error);
      return true;
    });
  });

  it('stops a series at the first failing day', async () => {
    let calls = 0;
    const { oxr } = await providerFor((url, _req, res) => {
      calls += 1;
      const day = /(\d{4}-\d{2}-\d{2})/.exec(url.pathname)![1]!;
      if (day === '2026-02-03') return res.writeHead(503).end();
      sendJson(res, historicalText(day));
    });
    await assert.rejects(oxr.series({ from: '2026-02-01', to: '2026-02-28' }), feedError(/historical\/2026-02-03\.json\?app_id=\[redacted\]: HTTP 503/));
    assert.ok(calls < 28, `${calls} calls`);
  });

  it('rejects a historical file that holds another day', async () => {
    const { oxr } = await providerFor((_url, _req, res) => sendJson(res, historicalText('2026-03-01')));
    await assert.rejects(oxr.series({ from: '2026-03-02', to: '2026-03-02' }), feedError(/historical\/2026-03-02\.json holds the rates of 2026-03-01/));
  });

  it('rejects rates quoted against another base', async () => {
    const { oxr } = await providerFor((_url, _req, res) =>
      sendJson(res, '{"timestamp":1772809200,"base":"EUR","rates":{"USD":1.1676,"EUR":1}}'),
    );
    await assert.rejects(oxr.latest(), feedError(/quoted against EUR, not USD/));
  });

  it('times out on a server that never answers, URL redacted', async () => {
    const { oxr } = await providerFor(() => undefined, 200);
    const started = Date.now();
    await assert.rejects(oxr.latest(), (error: unknown) => {
      feedError(/latest\.json\?app_id=\[redacted\]: no complete answer within 200 ms/)(error);
      assertNoSecret(error);
      return true;
    });
    assert.ok(Date.now() - started < 2_000);
  });

  it('times out on a server that stalls in the middle of the body', async () => {
    const body = Buffer.from(latestText);
    const { oxr } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.write(body.subarray(0, 100));
    }, 200);
    await assert.rejects(oxr.latest(), feedError(/within 200 ms/));
  });

  it('rejects a body cut short of its Content-Length', async () => {
    const body = Buffer.from(latestText);
    const { oxr } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.write(body.subarray(0, 100), () => res.destroy());
    });
    await assert.rejects(oxr.latest(), (error: unknown) => {
      feedError(/latest\.json\?app_id=\[redacted\]/)(error);
      assertNoSecret(error);
      return true;
    });
  });

  it('rejects half a document sent as a complete chunked body', async () => {
    const body = latestText;
    const { oxr } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body.slice(0, body.length / 2));
    });
    await assert.rejects(oxr.latest(), (error: unknown) => {
      feedError(/latest\.json\?app_id=\[redacted\]: Open Exchange Rates feed: invalid or truncated JSON/)(error);
      assertNoSecret(error);
      return true;
    });
  });

  it('rejects an HTML page served with status 200', async () => {
    const { oxr } = await providerFor((_url, _req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Maintenance</body></html>'));
    await assert.rejects(oxr.latest(), feedError(/HTML or XML page/));
  });

  it('rejects a refused connection, URL redacted', async () => {
    const server = await startServer([]);
    await server.close();
    const oxr = createOpenExchangeRatesProvider({ baseUrl: server.baseUrl, appId: APP_ID, timeoutMs: 2_000, clock: NOW });
    await assert.rejects(oxr.latest(), (error: unknown) => {
      feedError(/latest\.json\?app_id=\[redacted\]: fetch failed: ECONNREFUSED/)(error);
      assertNoSecret(error);
      return true;
    });
  });

  it("passes the caller's abort through instead of blaming the feed", async () => {
    const reason = new Error('shutting down');
    // The upstream never answers: each abort comes once its request has reached it.
    let controller = new AbortController();
    const { oxr } = await providerFor(() => controller.abort(reason));
    await assert.rejects(oxr.latest({ signal: controller.signal }), (error: unknown) => error === reason);
    const again = new AbortController();
    controller = again;
    await assert.rejects(oxr.series({ from: '2026-03-01', to: '2026-03-06' }, { signal: again.signal }), (error: unknown) => error === reason);
  });
});
