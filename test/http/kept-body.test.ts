import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ownBytes } from '../../src/http/caching.js';
import { drop, keptBody, sent, takeOut, type KeptBody } from '../../src/http/kept-body.js';

/** The body's memory has been given back (its ArrayBuffer detached). */
const freed = (bytes: Buffer) => (bytes.buffer as ArrayBuffer).detached;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('kept bodies', () => {
  // A server that answers with whatever body the test puts in `next`, through the same calls as the keyed API.
  let server: Server;
  let port = 0;
  let next: { kept: KeptBody; ended: (response: ServerResponse) => void } | undefined;
  before(async () => {
    server = createServer((_request, response) => {
      const { kept, ended } = next!;
      response.writeHead(200, { 'content-length': String(kept.body.length) });
      response.end(kept.body);
      sent(kept, response);
      ended(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Starts a request and returns the response unread (paused), with a way to read it all. */
  function request(): Promise<{ message: IncomingMessage; body(): Promise<Buffer> }> {
    return new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (message) => {
        message.pause();
        resolve({
          message,
          body: () =>
            new Promise((done, fail) => {
              const chunks: Buffer[] = [];
              message.on('data', (chunk: Buffer) => chunks.push(chunk));
              message.on('end', () => done(Buffer.concat(chunks)));
              message.on('error', fail);
              message.resume();
            }),
        });
      }).on('error', reject);
    });
  }

  it('frees a dropped body that no response reads', () => {
    const kept = keptBody(ownBytes('x'.repeat(10_000)));
    drop(kept);
    assert.equal(freed(kept.body), true);
    assert.equal(kept.body.length, 0);
  });

  it('keeps a dropped body until the response that reads it has handed all of it to the kernel, then frees it', async () => {
    // Far more than a loopback socket takes at once, so that most of it waits in the response while the client does not read.
    const text = Array.from({ length: 5_000_000 }, (_, i) => `${i},`).join('');
    const kept = keptBody(ownBytes(text));
    const expected = sha(kept.body);
    let response: ServerResponse | undefined;
    next = { kept, ended: (r) => (response = r) };
    takeOut(kept);
    const answer = await request();
    assert.ok(response && response.writableLength > 0, 'part of the body still waits to be written');
    // The cache lets it go while the response still reads it.
    drop(kept);
    assert.equal(freed(kept.body), false);
    assert.equal(kept.out, 1);
    const finished = new Promise((resolve) => response!.once('finish', resolve));
    const received = await answer.body();
    await finished;
    assert.equal(sha(received), expected, 'every byte arrived as it was');
    assert.equal(kept.out, 0);
    assert.equal(freed(kept.body), true);
  });

  it('takes a body back at once when its response wrote it all, and frees it only when the cache drops it', async () => {
    const kept = keptBody(ownBytes('{"small":true}'.repeat(100)));
    next = { kept, ended: () => undefined };
    takeOut(kept);
    const answer = await request();
    assert.equal((await answer.body()).toString(), '{"small":true}'.repeat(100));
    assert.equal(kept.out, 0);
    assert.equal(freed(kept.body), false, 'still in the cache');
    drop(kept);
    assert.equal(freed(kept.body), true);
  });

  it('never frees a body that shares its memory with others', () => {
    const shared = Buffer.from('a short body, carved out of the shared slab');
    assert.notEqual(shared.byteLength, shared.buffer.byteLength, 'a slice of a larger slab');
    const kept = keptBody(shared);
    drop(kept);
    assert.equal(freed(shared), false);
    assert.equal(shared.toString(), 'a short body, carved out of the shared slab');
  });
});
