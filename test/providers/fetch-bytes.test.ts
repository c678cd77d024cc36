/**
 * fetchBytes' limit, against a real HTTP server on loopback: what is read is bounded as sent and
 * as inflated, the read stops at the limit (the server sees its connection closed), and the
 * message names the limit.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { FeedError } from '../../src/core/errors.js';
import { parseEcbDocument } from '../../src/providers/ecb-format.js';
import { FeedHttpError, fetchBytes } from '../../src/providers/fetch-bytes.js';
import { ECB_DAILY_XML, serveOnLoopback, type LoopbackServer } from '../support/upstreams.js';

const LIMIT = 256 * 1024;
/** 64 MiB of zeros: 64 KiB gzipped, 7 KiB brotli'd. */
const INFLATED = 64 * 1024 * 1024;

describe('fetchBytes: a byte limit on what is read', () => {
  let server: LoopbackServer;
  const gzipBomb = gzipSync(Buffer.alloc(INFLATED), { level: 9 });
  const brotliBomb = brotliCompressSync(Buffer.alloc(INFLATED), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
  /** Bytes the endless body wrote before the client closed its connection, per request. */
  const endless: number[] = [];

  before(async () => {
    server = await serveOnLoopback((req, res) => {
      switch (req.url) {
        case '/daily.xml':
          return res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(ECB_DAILY_XML.length) }).end(ECB_DAILY_XML);
        case '/declared-large':
          // Declares 200 MiB; a client that believed it and read on would wait for all of it.
          res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(200 * 1024 * 1024) });
          return res.write(ECB_DAILY_XML);
        case '/gzip-bomb':
          return res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'gzip', 'content-length': String(gzipBomb.length) }).end(gzipBomb);
        case '/br-bomb':
          return res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'br' }).end(brotliBomb);
        case '/gzip-small':
          return res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'gzip' }).end(gzipSync(ECB_DAILY_XML));
        case '/endless':
          return writeForever(res);
        case '/truncated':
          res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(ECB_DAILY_XML.length) });
          res.write(ECB_DAILY_XML.subarray(0, 100));
          return res.destroy();
        case '/refused?key=s3cret':
          return res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"key s3cret is suspended"}');
        case '/refused-endless': {
          // An error page without end: kept only up to the limit, like any body.
          res.writeHead(503, { 'content-type': 'text/plain' });
          const page = Buffer.alloc(64 * 1024, 0x2d);
          const more = (): void => {
            while (!res.destroyed && res.write(page));
            if (!res.destroyed) res.once('drain', more);
          };
          return more();
        }
        default:
          return res.writeHead(404).end();
      }
    });
  });
  after(() => server.close());

  /** A valid document followed by spaces without end (chunked: no length to refuse it by). */
  function writeForever(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/xml' });
    const spaces = Buffer.alloc(64 * 1024, 0x20);
    let written = 0;
    res.write(ECB_DAILY_XML);
    const more = (): void => {
      while (!res.destroyed && res.write(spaces)) written += spaces.length;
      if (!res.destroyed) res.once('drain', more);
    };
    res.on('close', () => endless.push(written));
    more();
  }

  const get = (path: string, maxBytes = LIMIT) => fetchBytes(`${server.origin}${path}`, { timeoutMs: 10_000, maxBytes });

  async function refused(path: string, message: RegExp): Promise<void> {
    const error = await get(path).then(
      () => assert.fail(`${path} was read whole`),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof FeedError, String(error));
    assert.match(error.message, message);
  }

  it('reads a document within the limit, plain or gzipped, byte for byte', async () => {
    assert.deepEqual(Buffer.from(await get('/daily.xml')), ECB_DAILY_XML);
    assert.deepEqual(Buffer.from(await get('/gzip-small')), ECB_DAILY_XML);
    // Exactly the limit is allowed; one byte less is not.
    assert.equal((await get('/daily.xml', ECB_DAILY_XML.length)).length, ECB_DAILY_XML.length);
    await assert.rejects(get('/daily.xml', ECB_DAILY_XML.length - 1), /declares 1547 bytes, over this feed's limit of 1546 bytes; not read/);
  });

  it('refuses a body whose declared length is over the limit, before reading it', async () => {
    await refused('/declared-large', /\/declared-large: the answer declares 209715200 bytes, over this feed's limit of 256 KiB; not read$/);
  });

  it('stops a gzip bomb and a brotli bomb at the limit of inflated bytes', async () => {
    assert.ok(gzipBomb.length < LIMIT, 'the gzip bomb itself is within the limit as sent');
    await refused('/gzip-bomb', /\/gzip-bomb: the answer is longer than this feed's limit of 256 KiB \(inflated from gzip\); read no further$/);
    await refused('/br-bomb', /\/br-bomb: the answer is longer than this feed's limit of 256 KiB \(inflated from br\); read no further$/);
  });

  it('stops an endless body at the limit and closes the connection', async () => {
    await refused('/endless', /\/endless: the answer is longer than this feed's limit of 256 KiB \(read\); read no further$/);
    // The server sees its connection closed: the client read no further than the socket's buffers.
    const deadline = Date.now() + 5_000;
    while (endless.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(endless.length, 1, 'the endless answer was cut off by the client');
    assert.ok(endless[0]! < 64 * 1024 * 1024, `the server wrote ${endless[0]} bytes before the client closed`);
  });

  it('keeps an error page only when asked, bounded like any body', async () => {
    const dropped = await get('/refused?key=s3cret').catch((error: unknown) => error);
    assert.ok(dropped instanceof FeedHttpError, String(dropped));
    assert.equal(dropped.status, 403);
    assert.equal(dropped.body, undefined);
    const kept = await fetchBytes(`${server.origin}/refused?key=s3cret`, { timeoutMs: 10_000, maxBytes: LIMIT, keepErrorBody: true }).catch((error: unknown) => error);
    assert.ok(kept instanceof FeedHttpError, String(kept));
    assert.equal(kept.status, 403);
    assert.equal(kept.statusText, 'Forbidden');
    assert.equal(new TextDecoder().decode(kept.body), '{"error":"key s3cret is suspended"}');
    await assert.rejects(
      fetchBytes(`${server.origin}/refused-endless`, { timeoutMs: 10_000, maxBytes: LIMIT, keepErrorBody: true }),
      (error: unknown) => error instanceof FeedError && !(error instanceof FeedHttpError) && /\/refused-endless: the answer is longer than this feed's limit of 256 KiB/.test(error.message),
    );
  });

  it('redacts every message and keeps no cause when asked to', async () => {
    const redact = (text: string): string => text.replaceAll('s3cret', '[redacted]');
    const refused = await fetchBytes(`${server.origin}/refused?key=s3cret`, { timeoutMs: 10_000, maxBytes: LIMIT, redact }).catch((error: unknown) => error);
    assert.ok(refused instanceof FeedHttpError, String(refused));
    assert.equal(refused.message, `${server.origin}/refused?key=[redacted]: HTTP 403 Forbidden`);
    assert.equal(refused.url, `${server.origin}/refused?key=[redacted]`);
    // A port nothing listens on: undici's error (the cause) would quote the URL as it was.
    const closed = await serveOnLoopback((_req, res) => res.end());
    await closed.close();
    const unreachable = await fetchBytes(`${closed.origin}/x?key=s3cret`, { timeoutMs: 10_000, maxBytes: LIMIT, redact }).catch((error: unknown) => error);
    assert.ok(unreachable instanceof FeedError, String(unreachable));
    assert.doesNotMatch(unreachable.message, /s3cret/);
    assert.match(unreachable.message, /x\?key=\[redacted\]: /);
    assert.equal(unreachable.cause, undefined);
  });

  it('still refuses a body shorter than it declared', async () => {
    await assert.rejects(get('/truncated'), (error: unknown) => error instanceof FeedError && /truncated body|terminated|other side closed/.test(error.message));
  });
});

describe('parseEcbDocument: the ZIP entry is bounded too', () => {
  const csv = Buffer.from('Date,USD,\n2026-02-11,1.1870,\n');
  const zip = zipSync({ 'eurofxref-hist.csv': csv });

  it('inflates an entry within the limit', () => {
    assert.equal(parseEcbDocument(zip, 1024).days[0]!.rates['USD'], '1.1870');
  });

  it('refuses an entry that declares more than the limit, without inflating it', () => {
    assert.throws(
      () => parseEcbDocument(zip, csv.length - 1),
      new RegExp(`ECB feed: the ZIP entry eurofxref-hist\\.csv inflates to ${csv.length} bytes, over this feed's limit of ${csv.length - 1} bytes; not inflated`),
    );
  });

  it('inflates no more than an entry declares, whatever its data holds', () => {
    // A lying header: the entry declares the small CSV's size but holds 1 MiB of a CSV row repeated.
    const big = Buffer.from(`Date,USD,\n${'2026-02-11,1.1870,\n'.repeat(60_000)}`);
    const lying = Buffer.from(zipSync({ 'eurofxref-hist.csv': big }));
    // The local header's and the central directory's "uncompressed size" fields.
    const local = lying.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    const central = lying.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    lying.writeUInt32LE(csv.length, local + 22);
    lying.writeUInt32LE(csv.length, central + 24);
    const document = parseEcbDocument(lying, 1024);
    // What it read is the declared size: one day, and nothing past it.
    assert.equal(document.days.length, 1);
  });
});
