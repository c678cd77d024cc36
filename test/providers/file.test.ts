import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import { createFileProvider } from '../../src/providers/file.js';
import { readSource } from '../../src/providers/fetch-bytes.js';
import { serveOnLoopback } from '../support/upstreams.js';

const CSV_URL = new URL('../../../shared/data/ecb/eurofxref-hist.csv', import.meta.url);
const NINETY_DAY_URL = new URL('../../../shared/data/ecb/xml/eurofxref-hist-90d_2025-02-25.xml', import.meta.url);
const SMALL_CSV_URL = new URL('../fixtures/ecb/small-hist-crlf.csv', import.meta.url);

const feedError = (pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

describe('file provider', () => {
  it('reads a plain path: latest() is the newest day only', async () => {
    const provider = createFileProvider({ location: fileURLToPath(CSV_URL), timeoutMs: 1_000 });
    assert.equal(provider.id, 'file');
    assert.equal(provider.base, 'EUR');
    const doc = await provider.latest();
    assert.equal(doc.provider, 'file');
    assert.equal(doc.base, 'EUR');
    assert.equal(doc.days.length, 1);
    assert.equal(doc.days[0]!.day, '2026-03-05');
    assert.equal(doc.days[0]!.asOf, '2026-03-05T15:00:00Z');
    assert.equal(doc.days[0]!.rates['USD'], '1.1618');
  });

  it('reads a file:// URL: series() is the days within the range', async () => {
    const provider = createFileProvider({ location: CSV_URL.href, timeoutMs: 1_000 });
    const doc = await provider.series({ from: '2025-12-29', to: '2026-01-05' });
    assert.equal(doc.provider, 'file');
    assert.deepEqual(
      doc.days.map((d) => d.day),
      ['2025-12-29', '2025-12-30', '2025-12-31', '2026-01-02', '2026-01-05'],
    );
    assert.equal(doc.days[2]!.rates['BGN'], '1.9558');
    assert.equal('BGN' in doc.days[3]!.rates, false);
  });

  it('reads the file again on every call', async () => {
    const provider = createFileProvider({ location: fileURLToPath(SMALL_CSV_URL), timeoutMs: 1_000 });
    const first = await provider.latest();
    const second = await provider.latest();
    assert.deepEqual(first, second);
    assert.equal(first.days[0]!.day, '2025-01-03');
  });

  it('fails with a FeedError naming a missing path', async () => {
    const missing = fileURLToPath(new URL('../fixtures/ecb/does-not-exist.csv', import.meta.url));
    const provider = createFileProvider({ location: missing, timeoutMs: 1_000 });
    await assert.rejects(provider.latest(), feedError(new RegExp(`${missing.replaceAll('.', '\\.')}: no such file`)));
    const viaUrl = createFileProvider({ location: new URL('../fixtures/ecb/does-not-exist.csv', import.meta.url).href, timeoutMs: 1_000 });
    await assert.rejects(viaUrl.series({ from: '2025-01-01', to: '2025-01-31' }), feedError(/does-not-exist\.csv: no such file/));
  });

  it('fails with a FeedError for a directory', async () => {
    const provider = createFileProvider({ location: fileURLToPath(new URL('../fixtures/ecb/', import.meta.url)), timeoutMs: 1_000 });
    await assert.rejects(provider.latest(), feedError(/cannot be read: EISDIR/));
  });
});

describe('file provider over http', () => {
  let baseUrl: string;
  let close: () => Promise<void>;

  before(async () => {
    const xml = await readFile(NINETY_DAY_URL);
    const server = await serveOnLoopback((req, res) => {
      if (req.url === '/rates/eurofxref-hist-90d.xml') {
        res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(xml.length) }).end(xml);
      } else {
        res.writeHead(404).end();
      }
    });
    baseUrl = server.origin;
    close = server.close;
  });
  after(() => close());

  it('reads an http URL', async () => {
    const provider = createFileProvider({ location: `${baseUrl}/rates/eurofxref-hist-90d.xml`, timeoutMs: 2_000 });
    const latest = await provider.latest();
    assert.equal(latest.provider, 'file');
    assert.deepEqual(latest.days.map((d) => d.day), ['2025-02-25']);
    assert.equal(latest.days[0]!.rates['HUF'], '401.2');
    const series = await provider.series({ from: '2024-12-01', to: '2024-12-31' });
    assert.equal(series.days[0]!.day, '2024-12-02');
    assert.equal(series.days.at(-1)!.day, '2024-12-31');
    assert.equal(series.days.length, 20);
  });

  it('fails with a FeedError naming the URL on 404', async () => {
    const url = `${baseUrl}/rates/missing.xml`;
    const provider = createFileProvider({ location: url, timeoutMs: 2_000 });
    await assert.rejects(provider.latest(), feedError(new RegExp(`${url.replaceAll('.', '\\.')}: HTTP 404`)));
  });

  it('readSource returns the same bytes over http and from disk', async () => {
    const overHttp = await readSource(`${baseUrl}/rates/eurofxref-hist-90d.xml`, { timeoutMs: 2_000, maxBytes: 1024 * 1024 });
    const fromDisk = await readSource(fileURLToPath(NINETY_DAY_URL), { timeoutMs: 2_000, maxBytes: 1024 * 1024 });
    assert.deepEqual(Buffer.from(overHttp), Buffer.from(fromDisk));
  });
});
