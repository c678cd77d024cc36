import assert from 'node:assert/strict';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { convertAt, createRateBook, parseAmount, type RateQuote } from '../../src/core/rates.js';
import { ecbReferenceTime } from '../../src/core/time.js';
import { strongEtag } from '../../src/http/caching.js';
import { createConversionBodies, createHistoryBodies, createQuoteBodies } from '../../src/http/responses.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { tempDir } from '../helper.js';


/** The body of a conversion, as the interface writes it. */
function conversionBody(quote: RateQuote, amountText: string): string {
  const { from, to, amount, rate, result, asOf, stale } = convertAt(quote, parseAmount(amountText));
  return JSON.stringify({ from, to, amount, rate, result, asOf, stale });
}

describe('rendered bodies', () => {
  it('keeps a quote rendered once, with its byte length and Last-Modified', () => {
    const quote: RateQuote = { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1618', asOf: '2026-03-05T15:00:00Z', stale: false };
    const renderQuote = createQuoteBodies();
    const first = renderQuote(quote);
    assert.equal(renderQuote(quote), first);
    assert.equal(first.length, Buffer.byteLength(first.body));
    assert.equal(first.lastModified, 'Thu, 05 Mar 2026 15:00:00 GMT');
    assert.deepEqual(JSON.parse(first.body), quote);
    // Another set of bodies (another app's) renders its own.
    assert.notEqual(createQuoteBodies()(quote), first);
  });

  it('keeps conversions per quote and amount, within its bound, and nothing for a bad amount', () => {
    const bodyOf = createConversionBodies(3);
    const quote: RateQuote = { pair: 'EURJPY', from: 'EUR', to: 'JPY', rate: '183.0512', asOf: '2026-03-05T15:00:00Z', stale: false };
    const first = bodyOf(quote, '99.95');
    const expected = conversionBody(quote, '99.95');
    assert.deepEqual(first, { body: expected, etag: strongEtag(expected), length: Buffer.byteLength(expected), lastModified: 'Thu, 05 Mar 2026 15:00:00 GMT' });
    assert.equal(bodyOf(quote, '99.95'), first, 'the same amount is served from what was kept');
    assert.throws(() => bodyOf(quote, '1e5'), { code: 'invalid_amount' });
    // A quote for new rates is a new object: its conversions are its own.
    const moved = { ...quote, rate: '183.1' };
    assert.notEqual(bodyOf(moved, '99.95').body, first.body);
    bodyOf(quote, '1');
    // Three kept (99.95, 99.95 of the moved quote, 1): the fourth starts over.
    bodyOf(quote, '2');
    assert.notEqual(bodyOf(quote, '99.95'), first, 'dropped past the bound');
    assert.deepEqual(bodyOf(quote, '99.95'), first);
  });

  it('keeps the conversions of each amount apart, asked in turn', () => {
    const pair = ['100', '1000', '100.0', '0.5'];
    const bodyOf = createConversionBodies();
    const quote: RateQuote = { pair: 'EURJPY', from: 'EUR', to: 'JPY', rate: '183.0512', asOf: '2026-03-05T15:00:00Z', stale: false };
    for (let round = 0; round < 3; round++) {
      for (const amount of pair) assert.equal(bodyOf(quote, amount).body, conversionBody(quote, amount), amount);
    }
  });
});

describe('history bodies', () => {
  const dir = tempDir();
  let database: OpenDatabase;
  let book: ReturnType<typeof createRateBook>;

  before(async () => {
    database = await openDatabase(`sqlite:${join(dir.path, 'bodies.db')}`);
    await migrateToLatest(database.db);
    const store = createRateStore(database.db);
    const days = ['2026-01-12', '2026-01-13', '2026-01-14', '2026-01-15'].map((day, i) => ({
      day,
      asOf: ecbReferenceTime(day),
      rates: { USD: `1.18${i}0`, JPY: `17${i}.50`, GBP: `0.86${i}` },
    }));
    await store.saveDocument({ provider: 'ecb', base: 'EUR', days });
    book = createRateBook({ store, providers: ['ecb'], clock: { now: () => new Date('2026-02-12T12:00:00Z') } });
  });

  after(async () => {
    await database.close();
    dir.remove();
  });

  it('keeps each form of an answer in one budget, so a compressed one is served without its plain body', async () => {
    const sizes = createHistoryBodies(book);
    const plain = await sizes.render('USD', 'JPY', '1m', 'json');
    const zipped = (await sizes.render('USD', 'JPY', '1m', 'json', 'gzip')).body.length;
    const other = (await sizes.render('USD', 'GBP', '1m', 'json')).body.length;
    // Room for two of the three entries made below: each new one evicts the least recently used.
    const bodies = createHistoryBodies(book, Math.max(plain.body.length, other) + zipped);
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'identity'), undefined, 'peek never computes');
    const rendered = await bodies.render('usd', 'jpy', '1m', 'json');
    assert.deepEqual(rendered.body, plain.body);
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'identity'), rendered);

    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'gzip'), undefined, 'peek never compresses');
    const gzip = await bodies.render('USD', 'JPY', '1m', 'json', 'gzip');
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'gzip'), gzip, 'compressed from the held plain body, and kept');
    assert.equal(gzip.etag, `${rendered.etag.slice(0, -1)}-gzip"`);
    assert.deepEqual(gunzipSync(gzip.body), rendered.body);
    assert.equal(gzip.plainEtag, rendered.etag);
    assert.equal(await bodies.render('USD', 'JPY', '1m', 'json', 'gzip'), gzip, 'compressed once');

    // Another answer pushes out the least recently used entry: the plain body, not the gzip one
    // that was asked for last.
    await bodies.render('USD', 'GBP', '1m', 'json');
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'identity'), undefined);
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'gzip'), gzip);
    // br is made from the plain body, which is gone: the answer is computed again.
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'br'), undefined);
    const br = bodies.render('USD', 'JPY', '1m', 'json', 'br');
    assert.ok(br instanceof Promise, 'not answered from what is held');
    assert.deepEqual(brotliDecompressSync((await br).body), plain.body);
  });

  it('computes an evicted answer again, byte for byte', async () => {
    const size = (await createHistoryBodies(book).render('USD', 'JPY', '1m', 'json')).body.length;
    const other = (await createHistoryBodies(book).render('USD', 'GBP', '1m', 'json')).body.length;
    // Room for one answer at a time.
    const bodies = createHistoryBodies(book, Math.max(size, other));
    const first = await bodies.render('USD', 'JPY', '1m', 'json');
    await bodies.render('USD', 'GBP', '1m', 'json');
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'json', 'identity'), undefined, 'evicted');
    const again = await bodies.render('USD', 'JPY', '1m', 'json');
    assert.notEqual(again, first);
    assert.deepEqual(again.body, first.body, 'computed again, byte for byte');
    assert.equal(await bodies.render('USD', 'JPY', '1m', 'json'), again, 'and held');
  });

  it('keeps only the compressed form of an answer computed for a client that takes it compressed', async () => {
    const bodies = createHistoryBodies(book);
    const gzip = await bodies.render('USD', 'JPY', '1m', 'csv', 'gzip');
    const plainText = gunzipSync(gzip.body).toString();
    assert.match(plainText, /^date,rate\r\n2026-01-12,/);
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'csv', 'identity'), undefined, 'the plain form is not kept');
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'csv', 'gzip'), gzip);
    assert.equal(await bodies.render('USD', 'JPY', '1m', 'csv', 'gzip'), gzip, 'answered from what is held');
    // The kept body holds memory of its own size, not zlib's 16 KB output chunk.
    assert.equal(gzip.body.buffer.byteLength, gzip.body.length);
    // A plain request computes the answer again, and keeps it; the ETags go together.
    const plain = await bodies.render('USD', 'JPY', '1m', 'csv');
    assert.equal(plain.body.toString(), plainText);
    assert.equal(plain.etag, gzip.plainEtag);
    assert.equal(gzip.etag, `${plain.etag.slice(0, -1)}-gzip"`);
    assert.equal(bodies.peek('USD', 'JPY', '1m', 'csv', 'identity'), plain);
  });
});
