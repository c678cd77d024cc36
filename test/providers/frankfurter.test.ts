import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { addDays, isDay } from '../../src/core/time.js';
import { FeedHttpError } from '../../src/providers/fetch-bytes.js';
import {
  createFrankfurterProvider,
  parseFrankfurterCurrencies,
  parseFrankfurterRates,
} from '../../src/providers/frankfurter.js';
import { serveOnLoopback } from '../support/upstreams.js';

const FIXTURES = new URL('../fixtures/frankfurter/', import.meta.url);
const fixture = (name: string) => readFile(new URL(name, FIXTURES), 'utf8');

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const NOW = fixedClock('2026-03-06T18:00:00Z');

const feedError = (pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  baseUrl: string;
  /** Every request's path and query, in order. */
  requests: URL[];
  close(): Promise<void>;
}

async function startServer(routes: Record<string, Handler>): Promise<TestServer> {
  const requests: URL[] = [];
  const server = await serveOnLoopback((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream.test');
    requests.push(url);
    const handler = routes[url.pathname];
    if (handler) return handler(url, req, res);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
  });
  return { baseUrl: server.origin, requests, close: server.close };
}

const sendJson = (res: ServerResponse, text: string) => {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
};

const json = (rows: object[]) => JSON.stringify(rows);
const row = (date: string, quote: string, rate: unknown, base = 'EUR') => ({ date, base, quote, rate });

/** Rates as the JSON number text a float serializer writes, built here without floats. */
function ngnRateText(index: number): string {
  // A path from about 480 to about 1700 naira per euro, with a daily wobble.
  const cents = 48_000 + Math.floor(index * 93.7) + ((index * 7_919) % 1_300);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** USD per rupiah: always written in exponent form, like a float serializer does below 1e-4. */
function idrUsdMantissa(index: number): string {
  return `6${String(477_238 + ((index * 104_729) % 3_000_000)).padStart(7, '0')}`;
}

const isWeekday = (day: string) => {
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
  return weekday !== 0 && weekday !== 6;
};

/**
 * Answers /v2/rates like Frankfurter for any base, quotes and range: one row per weekday and
 * quote. Without from/to it answers the last weekday up to 2026-03-06.
 */
const fakeRates: Handler = (url, _req, res) => {
  const base = url.searchParams.get('base') ?? 'EUR';
  const quotes = (url.searchParams.get('quotes') ?? '').split(',').filter(Boolean);
  const from = url.searchParams.get('from') ?? '2026-03-06';
  const to = url.searchParams.get('to') ?? '2026-03-06';
  if (!isDay(from) || !isDay(to)) {
    res.writeHead(422).end('{"message":"invalid date"}');
    return;
  }
  const rows: string[] = [];
  let index = 0;
  for (let day = from; day <= to; day = addDays(day, 1)) {
    if (!isWeekday(day)) continue;
    for (const quote of quotes) {
      const rate = base === 'IDR' && quote === 'USD' ? `${idrUsdMantissa(index)[0]}.${idrUsdMantissa(index).slice(1)}e-05` : ngnRateText(index);
      rows.push(`{"date":"${day}","base":"${base}","quote":"${quote}","rate":${rate}}`);
    }
    index += 1;
  }
  sendJson(res, `[${rows.join(',\n')}]`);
};

describe('parseFrankfurterRates', () => {
  it('groups the latest answer by date, keeping the exact number text', async () => {
    const doc = parseFrankfurterRates(await fixture('rates-latest.json'), 'EUR');
    assert.equal(doc.provider, 'frankfurter');
    assert.equal(doc.base, 'EUR');
    assert.deepEqual(doc.days, [
      { day: '2026-03-05', asOf: '2026-03-05T00:00:00Z', rates: { ARS: '1683.4471' } },
      {
        day: '2026-03-06',
        asOf: '2026-03-06T00:00:00Z',
        rates: { EGP: '56.912', GHS: '12.650', KES: '150.38', NGN: '1634.52', PKR: '326.0' },
      },
    ]);
  });

  it('groups a series by ascending date whatever the row order, converting exponent forms', async () => {
    const doc = parseFrankfurterRates(await fixture('rates-series-kes-ngn.json'), 'EUR');
    assert.deepEqual(
      doc.days.map((d) => d.day),
      ['2026-02-26', '2026-02-27', '2026-03-02', '2026-03-03'],
    );
    assert.deepEqual(doc.days[2]!.rates, { KES: '150.64', NGN: '1638.11' });
    assert.deepEqual(doc.days[3]!.rates, { NGN: '1636.25', KES: '150.5' });
    assert.equal(doc.days[1]!.rates['NGN'], '1639.7');
  });

  it('converts tiny rates in exponent form exactly', async () => {
    const doc = parseFrankfurterRates(await fixture('rates-latest-base-idr.json'), 'IDR');
    assert.equal(doc.base, 'IDR');
    assert.deepEqual(doc.days[0]!.rates, {
      EUR: '0.000051797',
      JPY: '0.0090612',
      SGD: '0.000078113',
      USD: '0.000060477238',
    });
  });

  it('keeps digits a float would lose', () => {
    const text = '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":1634.5200000000000000001}]';
    const doc = parseFrankfurterRates(text, 'EUR');
    assert.equal(doc.days[0]!.rates['NGN'], '1634.5200000000000000001');
  });

  it('reads an empty array as a document without days', () => {
    assert.deepEqual(parseFrankfurterRates('[]', 'EUR'), { provider: 'frankfurter', base: 'EUR', days: [] });
    assert.deepEqual(parseFrankfurterRates(' \n[ ]\n', 'EUR').days, []);
  });

  it('leaves out the base quoted against itself, and a day holding nothing else', () => {
    const doc = parseFrankfurterRates(
      json([row('2026-03-05', 'EUR', 1), row('2026-03-06', 'EUR', 1), row('2026-03-06', 'NGN', 1634.52)]),
      'EUR',
    );
    assert.deepEqual(doc.days, [{ day: '2026-03-06', asOf: '2026-03-06T00:00:00Z', rates: { NGN: '1634.52' } }]);
  });

  it('ignores fields it does not use', () => {
    const doc = parseFrankfurterRates('[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":1634.52,"providers":["CBN"],"x":{"y":null}}]', 'EUR');
    assert.deepEqual(doc.days[0]!.rates, { NGN: '1634.52' });
  });

  it('accepts a byte-order mark', () => {
    assert.equal(parseFrankfurterRates(`\ufeff${json([row('2026-03-06', 'NGN', 1)])}`, 'EUR').days.length, 1);
  });

  const malformed: [string, string, RegExp][] = [
    ['an object instead of an array', '{"date":"2026-03-06","base":"EUR","rates":{"NGN":1634.52}}', /expected an array of rates, got an object/],
    ['a bare number', '1634.52', /expected an array of rates, got the number 1634\.52/],
    ['a string', '"maintenance"', /got the string "maintenance"/],
    ['null', 'null', /got null/],
    ['an element that is not an object', '[["2026-03-06","NGN",1634.52]]', /rate #0 is an array, not an object/],
    ['an element that is a number', '[1634.52]', /rate #0 is the number 1634\.52/],
    ['an element without date', '[{"base":"EUR","quote":"NGN","rate":1634.52}]', /rate #0 has no "date"/],
    ['an element without quote', '[{"date":"2026-03-06","base":"EUR","rate":1634.52}]', /rate #0 has no "quote"/],
    ['an element without rate', '[{"date":"2026-03-06","base":"EUR","quote":"NGN"}]', /rate #0 \(2026-03-06 NGN\) has no "rate"/],
    ['an element without base', '[{"date":"2026-03-06","quote":"NGN","rate":1634.52}]', /rate #0 has no "base"/],
    ['another base', json([row('2026-03-06', 'NGN', 0.00061, 'USD')]), /quoted against "USD", not the requested EUR/],
    ['a lower-case base', json([row('2026-03-06', 'NGN', 1634.52, 'eur')]), /quoted against "eur"/],
    ['a lower-case quote', json([row('2026-03-06', 'ngn', 1634.52)]), /"ngn" is not three upper-case letters/],
    ['a four-letter quote', json([row('2026-03-06', 'NGNX', 1634.52)]), /"NGNX" is not three upper-case letters/],
    ['a numeric quote', '[{"date":"2026-03-06","base":"EUR","quote":566,"rate":1634.52}]', /"quote" is the number 566, not a string/],
    ['a zero rate', json([row('2026-03-06', 'NGN', 0)]), /rate is the number 0, not a positive number/],
    ['a zero rate with decimals', '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":0.000}]', /rate is the number 0\.000/],
    ['a zero rate in exponent form', '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":0e5}]', /not a positive number/],
    ['a negative rate', json([row('2026-03-06', 'NGN', -1634.52)]), /rate is the number -1634\.52, not a positive number/],
    ['a rate as a string', json([row('2026-03-06', 'NGN', '1634.52')]), /rate is the string "1634\.52", not a positive number/],
    ['a null rate', json([row('2026-03-06', 'NGN', null)]), /rate is null, not a positive number/],
    ['a boolean rate', json([row('2026-03-06', 'NGN', true)]), /rate is true, not a positive number/],
    ['an object rate', json([row('2026-03-06', 'NGN', { value: 1 })]), /rate is an object/],
    ['an impossible date', json([row('2026-02-30', 'NGN', 1634.52)]), /"2026-02-30" is not a calendar date/],
    ['a date with slashes', json([row('2026/03/06', 'NGN', 1634.52)]), /"2026\/03\/06" is not a calendar date/],
    ['a date-time', json([row('2026-03-06T00:00:00Z', 'NGN', 1634.52)]), /is not a calendar date/],
    ['a numeric date', '[{"date":20260306,"base":"EUR","quote":"NGN","rate":1634.52}]', /"date" is the number 20260306, not a string/],
    ['a duplicate date and quote', json([row('2026-03-06', 'NGN', 1634.52), row('2026-03-06', 'KES', 150.38), row('2026-03-06', 'NGN', 1634.52)]), /NGN appears twice on 2026-03-06/],
    ['invalid JSON', '[{"date":"2026-03-06",}]', /invalid or truncated JSON/],
    ['a body cut short', '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":1634.5', /invalid or truncated JSON/],
    ['a body cut after a complete row', '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":1634.52},', /invalid or truncated JSON/],
    ['trailing garbage', '[]x', /invalid or truncated JSON/],
    ['an HTML page', '<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>', /HTML or XML page instead of JSON/],
    ['an empty body', '', /the body is empty/],
    ['a blank body', '  \n', /the body is empty/],
    ['a repeated key with different values', '[{"date":"2026-03-06","base":"EUR","quote":"NGN","rate":1634.52,"rate":1.5}]', /invalid or truncated JSON: Duplicate key/],
  ];
  for (const [name, text, pattern] of malformed) {
    it(`rejects ${name}`, () => {
      assert.throws(() => parseFrankfurterRates(text, 'EUR'), feedError(pattern));
    });
  }
});

describe('parseFrankfurterCurrencies', () => {
  it('lists the codes sorted, whatever else each entry holds', async () => {
    assert.deepEqual(parseFrankfurterCurrencies(await fixture('currencies.json')), [
      'ARS', 'EGP', 'EUR', 'GHS', 'IDR', 'KES', 'NGN', 'PKR', 'USD', 'XDR', 'ZWG', 'ZWL',
    ]);
  });

  it('upper-cases and deduplicates codes', () => {
    const text = '[{"iso_code":"ngn","name":null},{"iso_code":"NGN"},{"iso_code":"Kes","symbol":null},{"iso_code":"AED"}]';
    assert.deepEqual(parseFrankfurterCurrencies(text), ['AED', 'KES', 'NGN']);
  });

  const malformed: [string, string, RegExp][] = [
    ['an object', '{"NGN":"Nigerian Naira"}', /expected an array of currencies, got an object/],
    ['an entry that is a string', '["NGN"]', /currency #0 is the string "NGN", not an object/],
    ['an entry without iso_code', '[{"iso_code":"NGN"},{"name":"Euro"}]', /currency #1 has no "iso_code"/],
    ['a null iso_code', '[{"iso_code":null}]', /"iso_code" is null, not a string/],
    ['a numeric iso_code', '[{"iso_code":566}]', /"iso_code" is the number 566/],
    ['a four-letter code', '[{"iso_code":"EURO"}]', /iso_code "EURO" is not a three-letter code/],
    ['an empty list', '[]', /currency list is empty/],
    ['truncated JSON', '[{"iso_code":"NGN"},{"iso_', /invalid or truncated JSON/],
    ['an HTML page', '<html><body>Rate limited</body></html>', /HTML or XML page/],
  ];
  for (const [name, text, pattern] of malformed) {
    it(`rejects ${name}`, () => {
      assert.throws(() => parseFrankfurterCurrencies(text), feedError(pattern));
    });
  }
});

describe('Frankfurter provider against a local server', () => {
  let server: TestServer;
  let latestText: string;
  let currenciesText: string;
  before(async () => {
    latestText = await fixture('rates-latest.json');
    currenciesText = await fixture('currencies.json');
    server = await startServer({
      '/v2/rates': (url, req, res) => {
        if (url.searchParams.has('from')) return fakeRates(url, req, res);
        sendJson(res, latestText);
      },
      '/v2/currencies': (_url, _req, res) => sendJson(res, currenciesText),
    });
  });
  after(() => server.close());

  const provider = (base?: string) =>
    createFrankfurterProvider({ baseUrl: server.baseUrl, timeoutMs: 5_000, clock: NOW, ...(base ? { base } : {}) });

  const query = (url: URL) => Object.fromEntries(url.searchParams);

  it('identifies itself as frankfurter with base EUR, or the configured base', () => {
    assert.equal(provider().id, 'frankfurter');
    assert.equal(provider().base, 'EUR');
    assert.equal(provider('idr').base, 'IDR');
    assert.throws(() => provider('EURO'), RangeError);
  });

  it('asks latest() for exactly the requested quotes against EUR', async () => {
    server.requests.length = 0;
    const doc = await provider().latest({ currencies: ['NGN', 'kes', 'GHS', 'ARS', 'EGP', 'PKR', 'NGN', 'EUR'] });
    assert.equal(server.requests.length, 1);
    const [request] = server.requests;
    assert.equal(request!.pathname, '/v2/rates');
    assert.deepEqual(query(request!), { base: 'EUR', quotes: 'NGN,KES,GHS,ARS,EGP,PKR' });
    // Commas are sent as written in the documentation, not percent-encoded.
    assert.equal(request!.search, '?base=EUR&quotes=NGN,KES,GHS,ARS,EGP,PKR');
    assert.deepEqual(doc, parseFrankfurterRates(latestText, 'EUR'));
    assert.equal(doc.days.at(-1)!.rates['NGN'], '1634.52');
  });

  it('does not call upstream for latest() without currencies', async () => {
    server.requests.length = 0;
    const empty = { provider: 'frankfurter', base: 'EUR', days: [] };
    assert.deepEqual(await provider().latest(), empty);
    assert.deepEqual(await provider().latest({ currencies: [] }), empty);
    assert.deepEqual(await provider().latest({ currencies: ['EUR'] }), empty);
    assert.deepEqual(await provider().series({ from: '2026-01-01', to: '2026-03-06' }), empty);
    assert.equal(server.requests.length, 0);
  });

  it('refuses a requested code that is not a currency code before calling upstream', async () => {
    server.requests.length = 0;
    await assert.rejects(provider().latest({ currencies: ['NGN', 'NG&N'] }), RangeError);
    assert.equal(server.requests.length, 0);
  });

  it('fetches a five-year daily series in one request', async () => {
    server.requests.length = 0;
    const range = { from: '2021-03-06', to: '2026-03-06' };
    const doc = await provider().series(range, { currencies: ['NGN'] });
    assert.equal(server.requests.length, 1);
    assert.deepEqual(query(server.requests[0]!), { base: 'EUR', quotes: 'NGN', from: '2021-03-06', to: '2026-03-06' });

    let weekdays = 0;
    for (let day = range.from; day <= range.to; day = addDays(day, 1)) if (isWeekday(day)) weekdays += 1;
    assert.equal(doc.days.length, weekdays);
    assert.ok(weekdays > 1_300);
    assert.equal(doc.days[0]!.day, '2021-03-08');
    assert.equal(doc.days.at(-1)!.day, '2026-03-06');
    doc.days.forEach((d, index) => {
      assert.equal(d.asOf, `${d.day}T00:00:00Z`);
      assert.deepEqual(d.rates, { NGN: ngnRateText(index) });
    });
    for (let i = 1; i < doc.days.length; i += 1) assert.ok(doc.days[i - 1]!.day < doc.days[i]!.day);
  });

  it('quotes against a configured base, converting exponent forms', async () => {
    server.requests.length = 0;
    const doc = await provider('IDR').series({ from: '2026-02-02', to: '2026-02-06' }, { currencies: ['USD'] });
    assert.deepEqual(query(server.requests[0]!), { base: 'IDR', quotes: 'USD', from: '2026-02-02', to: '2026-02-06' });
    assert.equal(doc.base, 'IDR');
    assert.deepEqual(
      doc.days.map((d) => d.rates['USD']),
      [0, 1, 2, 3, 4].map((i) => `0.0000${idrUsdMantissa(i)}`),
    );
    assert.equal(doc.days[0]!.rates['USD'], '0.000060477238');
  });

  it('answers an empty series for a range without publications', async () => {
    const doc = await provider().series({ from: '2026-02-28', to: '2026-03-01' }, { currencies: ['NGN'] });
    assert.deepEqual(doc, { provider: 'frankfurter', base: 'EUR', days: [] });
  });

  it('does not ask for days that cannot have been published yet', async () => {
    server.requests.length = 0;
    const doc = await provider().series({ from: '2026-03-08', to: '2026-03-20' }, { currencies: ['NGN'] });
    assert.deepEqual(doc.days, []);
    assert.equal(server.requests.length, 0);
  });

  it('refuses a range that is not one', async () => {
    await assert.rejects(provider().series({ from: '2026-03-06', to: '2026-03-01' }, { currencies: ['NGN'] }), RangeError);
    await assert.rejects(provider().series({ from: '2026-3-1', to: '2026-03-06' }, { currencies: ['NGN'] }), RangeError);
  });

  it('lists currencies', async () => {
    server.requests.length = 0;
    const codes = await provider().listCurrencies();
    assert.deepEqual(server.requests.map((u) => u.pathname + u.search), ['/v2/currencies']);
    assert.deepEqual(codes, parseFrankfurterCurrencies(currenciesText));
    assert.ok(codes.includes('NGN'));
  });

  it('accepts a base URL with a trailing slash', async () => {
    server.requests.length = 0;
    const frankfurter = createFrankfurterProvider({ baseUrl: `${server.baseUrl}/`, timeoutMs: 5_000, clock: NOW });
    await frankfurter.listCurrencies();
    assert.deepEqual(server.requests.map((u) => u.pathname), ['/v2/currencies']);
  });
});

describe('Frankfurter provider cutting a series to the range', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      // Asked from a Sunday, it also answers the Friday before.
      '/v2/rates': (_url, _req, res) =>
        sendJson(res, json([row('2026-02-27', 'NGN', 1639.7), row('2026-03-02', 'NGN', 1638.11), row('2026-03-03', 'NGN', 1636.25)])),
    });
  });
  after(() => server.close());

  it('leaves out days outside the requested range', async () => {
    const frankfurter = createFrankfurterProvider({ baseUrl: server.baseUrl, timeoutMs: 5_000, clock: NOW });
    const doc = await frankfurter.series({ from: '2026-03-01', to: '2026-03-02' }, { currencies: ['NGN'] });
    assert.deepEqual(doc.days, [{ day: '2026-03-02', asOf: '2026-03-02T00:00:00Z', rates: { NGN: '1638.11' } }]);
  });
});

describe('Frankfurter provider failures', () => {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  async function providerFor(handler: Handler, timeoutMs = 2_000) {
    const server = await startServer({ '/v2/rates': handler, '/v2/currencies': handler });
    servers.push(server);
    return { server, frankfurter: createFrankfurterProvider({ baseUrl: server.baseUrl, timeoutMs, clock: NOW }) };
  }
  const latestNgn = { currencies: ['NGN'] };

  it('rejects an HTTP 500 with a FeedHttpError naming the URL', async () => {
    const { frankfurter, server } = await providerFor((_url, _req, res) => res.writeHead(500).end('{"message":"boom"}'));
    await assert.rejects(frankfurter.latest(latestNgn), (error: unknown) => {
      assert.ok(error instanceof FeedHttpError);
      assert.equal(error.status, 500);
      assert.ok(error.message.includes(`${server.baseUrl}/v2/rates?base=EUR&quotes=NGN`));
      return true;
    });
    await assert.rejects(frankfurter.listCurrencies(), feedError(/\/v2\/currencies: HTTP 500/));
    assert.equal(server.requests.length, 2);
  });

  it('rejects an unknown currency answered with 422', async () => {
    const { frankfurter } = await providerFor((_url, _req, res) =>
      res.writeHead(422, { 'content-type': 'application/json' }).end('{"message":"invalid quotes"}'),
    );
    await assert.rejects(frankfurter.series({ from: '2026-01-01', to: '2026-01-31' }, { currencies: ['XXX'] }), feedError(/HTTP 422/));
  });

  it('times out on a server that never answers', async () => {
    const { frankfurter } = await providerFor(() => undefined, 200);
    const started = Date.now();
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/\/v2\/rates\?base=EUR&quotes=NGN: no complete answer within 200 ms/));
    assert.ok(Date.now() - started < 2_000);
  });

  it('times out on a server that stalls in the middle of the body', async () => {
    const body = Buffer.from(json([row('2026-03-06', 'NGN', 1634.52), row('2026-03-06', 'KES', 150.38)]));
    const { frankfurter } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.write(body.subarray(0, 30));
    }, 200);
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/within 200 ms/));
  });

  it('rejects a body cut short of its Content-Length', async () => {
    const body = Buffer.from(json([row('2026-03-06', 'NGN', 1634.52), row('2026-03-06', 'KES', 150.38)]));
    const { frankfurter } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) });
      res.write(body.subarray(0, 40), () => res.destroy());
    });
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/\/v2\/rates/));
  });

  it('rejects half a JSON array sent as a complete chunked body', async () => {
    const body = json([row('2026-03-06', 'NGN', 1634.52), row('2026-03-06', 'KES', 150.38)]);
    const { frankfurter } = await providerFor((_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body.slice(0, body.length / 2));
    });
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/invalid or truncated JSON/));
  });

  it('rejects an HTML page served with status 200', async () => {
    const { frankfurter } = await providerFor((_url, _req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Maintenance</body></html>'),
    );
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/HTML or XML page/));
    await assert.rejects(frankfurter.listCurrencies(), feedError(/HTML or XML page/));
  });

  it('rejects an answer quoted against another base', async () => {
    const { frankfurter } = await providerFor((_url, _req, res) => sendJson(res, json([row('2026-03-06', 'NGN', 1530.1, 'USD')])));
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/not the requested EUR/));
  });

  it('rejects a body that is not UTF-8', async () => {
    const { frankfurter } = await providerFor((_url, _req, res) => res.writeHead(200).end(Buffer.from([0x5b, 0xff, 0xfe, 0x5d])));
    await assert.rejects(frankfurter.latest(latestNgn), feedError(/not UTF-8/));
  });

  it("passes the caller's abort through instead of blaming the feed", async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    // The upstream never answers: the abort comes once the request has reached it.
    const { frankfurter } = await providerFor(() => controller.abort(reason));
    await assert.rejects(frankfurter.latest({ ...latestNgn, signal: controller.signal }), (error: unknown) => error === reason);
  });
});
