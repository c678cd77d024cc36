import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { describeCause, fetchBytes } from '../../src/providers/fetch-bytes.js';

test('a failure names its code once, then what Node said without it', () => {
  const lookup = Object.assign(new Error('getaddrinfo ENOTFOUND www.ecb.europa.eu'), { code: 'ENOTFOUND' });
  assert.equal(describeCause(new TypeError('fetch failed', { cause: lookup })), 'fetch failed: ENOTFOUND: getaddrinfo www.ecb.europa.eu');
  const bare = Object.assign(new Error(''), { code: 'ECONNRESET' });
  assert.equal(describeCause(new TypeError('fetch failed', { cause: bare })), 'fetch failed: ECONNRESET');
  assert.equal(describeCause(new TypeError('fetch failed', { cause: new Error('other side closed') })), 'fetch failed: other side closed');
});

test('a refused connection on loopback: the code once, and where', async () => {
  // A port that was free a moment ago: nothing listens on it now.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const error = await fetchBytes(`http://127.0.0.1:${port}/x.csv`, { timeoutMs: 5_000, maxBytes: 1024 }).then(
    () => assert.fail('fetched from a closed port'),
    (caught: Error) => caught,
  );
  assert.match(error.message, new RegExp(`fetch failed: ECONNREFUSED: connect 127\\.0\\.0\\.1:${port}$`));
  assert.equal(error.message.match(/ECONNREFUSED/g)!.length, 1);
});
