/**
 * A database outage as a client sees it: with PostgreSQL taken away (behind a loopback proxy, the
 * shared engine untouched), an API request is a 503 `service_unavailable` problem with
 * Retry-After, not the 500's `internal_error`; readiness fails; and the service answers again by
 * itself once the database is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/apps.js';
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from '../support/proxy.js';
import { createPostgresSchema, POSTGRES_URL, postgresAvailable } from '../support/stores.js';

describe('PostgreSQL unreachable', () => {
  let skip = '';
  let schema: Awaited<ReturnType<typeof createPostgresSchema>> | undefined;
  let proxy: TcpProxy | undefined;
  let service: TestApp | undefined;

  before(async () => {
    if (!(await postgresAvailable())) {
      skip = 'PostgreSQL not available';
      return;
    }
    schema = await createPostgresSchema();
    proxy = await startTcpProxy(endpointOf(POSTGRES_URL, 5432));
    // No key cache: every request looks its key up in the database, as one would once the cache expires.
    service = await createTestApp({ EXRATES_DATABASE_URL: throughProxy(schema.url, proxy), EXRATES_KEY_CACHE_MS: '0' }, { load: false });
  });

  after(async () => {
    await proxy?.restore();
    await service?.close();
    await proxy?.close();
    await schema?.drop();
  });

  it('answers 503 service_unavailable with Retry-After, is not ready, and recovers by itself', async (t) => {
    if (skip) return t.skip(skip);
    const { app, key } = service!;
    const usage = () => app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': key } });
    assert.equal((await usage()).statusCode, 200);

    await proxy!.cut('refuse');
    const down = await usage();
    assert.equal(down.statusCode, 503, down.body);
    assert.equal(down.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(down.headers['retry-after'], '5');
    const problem = down.json<Record<string, unknown>>();
    assert.deepEqual(
      { type: problem.type, title: problem.title, status: problem.status, code: problem.code },
      { type: '/problems/service_unavailable', title: 'Service unavailable', status: 503, code: 'service_unavailable' },
    );
    assert.match(String(problem.detail), /cannot reach/);
    assert.doesNotMatch(down.body, /ECONN|stack|\.js:\d+/);
    assert.equal((await app.inject('/readyz')).statusCode, 503);

    await proxy!.restore();
    const back = await usage();
    assert.equal(back.statusCode, 200, back.body);
  });
});
