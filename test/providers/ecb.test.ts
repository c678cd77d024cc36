import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { FeedError } from '../../src/core/errors.js';
import type { Clock, RateDocument } from '../../src/core/ports.js';
import { addDays } from '../../src/core/time.js';
import { createEcbProvider } from '../../src/providers/ecb.js';
import { parseEcbCsv, parseEcbXml, withinRange } from '../../src/providers/ecb-format.js';
import { FeedHttpError } from '../../src/providers/fetch-bytes.js';
import { serveOnLoopback } from '../support/upstreams.js';

const ECB_DIR = new URL('../../../shared/data/ecb/', import.meta.url);
const XML_DIR = new URL('xml/', ECB_DIR);
const PREFIX = '/stats/eurofxref';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  baseUrl: string;
  requests: string[];
  close(): Promise<void>;
}

async function startServer(routes: Record<string, Handler>): Promise<TestServer> {
  const requests: string[] = [];
  const server = await serveOnLoopback((req, res) => {
    const path = req.url ?? '';
    requests.push(path);
    const handler = routes[path];
    if (handler) return handler(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  return { baseUrl: `${server.origin}${PREFIX}`, requests, close: server.close };
}

const serve =
  (body: Uint8Array, contentType: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': String(body.length) }).end(body);
  };

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });

const feedError = (pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

let daily: Buffer;
let ninetyDay: Buffer;
let ninetyDay2020: Buffer;
let histZip: Uint8Array;
let csvDoc: RateDocument;

before(async () => {
  daily = await readFile(new URL('eurofxref-daily_2026-02-11.xml', XML_DIR));
  ninetyDay = await readFile(new URL('eurofxref-hist-90d_2025-02-25.xml', XML_DIR));
  ninetyDay2020 = await readFile(new URL('eurofxref-hist-90d_2020-12-10.xml', XML_DIR));
  const csv = await readFile(new URL('eurofxref-hist.csv', ECB_DIR));
  csvDoc = parseEcbCsv(csv.toString('utf8'));
  histZip = zipSync({ 'eurofxref-hist.csv': csv });
});

describe('ECB provider against a local server with the real files', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      [`${PREFIX}/eurofxref-daily.xml`]: (req, res) => serve(daily, 'text/xml')(req, res),
      [`${PREFIX}/eurofxref-hist-90d.xml`]: (req, res) => serve(ninetyDay, 'text/xml')(req, res),
      [`${PREFIX}/eurofxref-hist.zip`]: (req, res) => serve(histZip, 'application/zip')(req, res),
    });
  });
  after(() => server.close());

  const provider = (clockIso: string) =>
    createEcbProvider({ baseUrl: server.baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('identifies itself as ecb with base EUR', () => {
    const ecb = provider('2026-02-11T17:00:00Z');
    assert.equal(ecb.id, 'ecb');
    assert.equal(ecb.base, 'EUR');
  });

  it('reads latest() from the daily file', async () => {
    server.requests.length = 0;
    const doc = await provider('2026-02-11T17:00:00Z').latest();
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-daily.xml`]);
    assert.equal(doc.provider, 'ecb');
    assert.equal(doc.base, 'EUR');
    assert.equal(doc.days.length, 1);
    assert.equal(doc.days[0]!.day, '2026-02-11');
    assert.equal(doc.days[0]!.asOf, '2026-02-11T15:00:00Z');
    assert.equal(doc.days[0]!.rates['USD'], '1.1900');
  });

  it('reads a recent range from the 90-day file, cut to the range', async () => {
    server.requests.length = 0;
    const range = { from: '2025-01-01', to: '2025-01-31' };
    const doc = await provider('2025-02-26T08:00:00Z').series(range);
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist-90d.xml`]);
    assert.deepEqual(doc, withinRange(parseEcbXml(ninetyDay.toString('utf8')), range));
    assert.equal(doc.days[0]!.day, '2025-01-02');
    assert.equal(doc.days.at(-1)!.day, '2025-01-31');
    assert.equal(doc.days.length, 22);
  });

  it('switches from the 90-day file to the full history beyond 85 days back', async () => {
    const today = '2025-02-26';
    server.requests.length = 0;
    await provider(`${today}T23:59:00Z`).series({ from: addDays(today, -85), to: today });
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist-90d.xml`]);
    server.requests.length = 0;
    await provider(`${today}T23:59:00Z`).series({ from: addDays(today, -86), to: today });
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist.zip`]);
  });

  it('reads an old range from the zipped full history', async () => {
    server.requests.length = 0;
    const range = { from: '2010-01-01', to: '2010-01-31' };
    const doc = await provider('2026-03-06T10:00:00Z').series(range);
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist.zip`]);
    assert.deepEqual(doc, withinRange(csvDoc, range));
    assert.equal(doc.days[0]!.day, '2010-01-04');
    assert.equal('ISK' in doc.days[0]!.rates, false);
  });

  it('accepts a base URL with a trailing slash', async () => {
    server.requests.length = 0;
    const ecb = createEcbProvider({ baseUrl: `${server.baseUrl}/`, timeoutMs: 5_000, clock: fixedClock('2026-02-11T17:00:00Z') });
    await ecb.latest();
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-daily.xml`]);
  });
});

describe('ECB provider fallback to eurofxref-hist.xml', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      // A 90-day file stands in for the full-history XML: it has the same layout.
      [`${PREFIX}/eurofxref-hist.xml`]: (req, res) => serve(ninetyDay2020, 'text/xml')(req, res),
    });
  });
  after(() => server.close());

  it('asks for the XML when the zip answers 404', async () => {
    const range = { from: '2020-10-01', to: '2020-10-31' };
    const ecb = createEcbProvider({ baseUrl: server.baseUrl, timeoutMs: 5_000, clock: fixedClock('2026-03-06T10:00:00Z') });
    const doc = await ecb.series(range);
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist.zip`, `${PREFIX}/eurofxref-hist.xml`]);
    assert.equal(doc.days.length, 22);
    assert.deepEqual(doc, withinRange(parseEcbXml(ninetyDay2020.toString('utf8')), range));
    for (const d of doc.days) {
      const fromCsv = csvDoc.days.find((c) => c.day === d.day)!;
      assert.deepEqual(Object.keys(d.rates).sort(), Object.keys(fromCsv.rates).sort());
    }
  });
});

describe('ECB provider failures', () => {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  async function providerFor(routes: Record<string, Handler>, timeoutMs = 2_000) {
    const server = await startServer(routes);
    servers.push(server);
    return {
      server,
      ecb: createEcbProvider({ baseUrl: server.baseUrl, timeoutMs, clock: fixedClock('2026-03-06T10:00:00Z') }),
    };
  }

  it('rejects an HTTP 500 with a FeedError naming the URL', async () => {
    const { ecb, server } = await providerFor({
      [`${PREFIX}/eurofxref-daily.xml`]: (_req, res) => res.writeHead(500).end('oops'),
    });
    await assert.rejects(ecb.latest(), (error: unknown) => {
      assert.ok(error instanceof FeedHttpError);
      assert.equal(error.status, 500);
      assert.ok(error.message.includes(`${server.baseUrl}/eurofxref-daily.xml`));
      return true;
    });
  });

  it('does not fall back to the XML when the zip fails with anything but 404', async () => {
    const { ecb, server } = await providerFor({
      [`${PREFIX}/eurofxref-hist.zip`]: (_req, res) => res.writeHead(503).end(),
    });
    await assert.rejects(ecb.series({ from: '2010-01-01', to: '2010-01-31' }), feedError(/HTTP 503/));
    assert.deepEqual(server.requests, [`${PREFIX}/eurofxref-hist.zip`]);
  });

  it('fails when both the zip and the XML are missing', async () => {
    const { ecb } = await providerFor({});
    await assert.rejects(ecb.series({ from: '2010-01-01', to: '2010-01-31' }), feedError(/eurofxref-hist\.xml: HTTP 404/));
  });

  it('times out on a server that never answers', async () => {
    const { ecb } = await providerFor({ [`${PREFIX}/eurofxref-daily.xml`]: () => undefined }, 300);
    const started = Date.now();
    await assert.rejects(ecb.latest(), feedError(/eurofxref-daily\.xml: no complete answer within 300 ms/));
    assert.ok(Date.now() - started < 2_000);
  });

  it('times out on a server that stalls in the middle of the body', async () => {
    const { ecb } = await providerFor(
      {
        [`${PREFIX}/eurofxref-daily.xml`]: (_req, res) => {
          res.writeHead(200, { 'content-length': String(daily.length) });
          res.write(daily.subarray(0, daily.length / 2));
        },
      },
      300,
    );
    await assert.rejects(ecb.latest(), feedError(/within 300 ms/));
  });

  it('rejects a body cut short of its Content-Length', async () => {
    const { ecb } = await providerFor({
      [`${PREFIX}/eurofxref-daily.xml`]: (_req, res) => {
        res.writeHead(200, { 'content-length': String(daily.length) });
        res.write(daily.subarray(0, daily.length / 2), () => res.destroy());
      },
    });
    await assert.rejects(ecb.latest(), feedError(/eurofxref-daily\.xml/));
  });

  it('rejects half an XML file sent as a complete chunked body', async () => {
    const { ecb } = await providerFor({
      [`${PREFIX}/eurofxref-hist-90d.xml`]: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end(ninetyDay.subarray(0, ninetyDay.length / 2));
      },
    });
    await assert.rejects(ecb.series({ from: '2026-03-01', to: '2026-03-06' }), feedError(/not well-formed/));
  });

  it('rejects an error page served with status 200', async () => {
    const { ecb } = await providerFor({
      [`${PREFIX}/eurofxref-daily.xml`]: (_req, res) => res.writeHead(200).end('<html><body>Maintenance</body></html>'),
    });
    await assert.rejects(ecb.latest(), feedError(/gesmes:Envelope/));
  });

  it('rejects a refused connection with a FeedError naming the URL', async () => {
    const server = await startServer({});
    await server.close();
    const ecb = createEcbProvider({ baseUrl: server.baseUrl, timeoutMs: 2_000, clock: fixedClock('2026-03-06T10:00:00Z') });
    await assert.rejects(ecb.latest(), feedError(/eurofxref-daily\.xml: fetch failed: ECONNREFUSED/));
  });

  it("passes the caller's abort through instead of blaming the feed", async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    // The upstream never answers: the abort comes once the request has reached it.
    const { ecb } = await providerFor({ [`${PREFIX}/eurofxref-daily.xml`]: () => controller.abort(reason) });
    await assert.rejects(ecb.latest({ signal: controller.signal }), (error: unknown) => error === reason);
  });
});
