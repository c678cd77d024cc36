/**
 * One `exrates serve` with EXRATES_WORKERS=2 on PostgreSQL and Redis, each worker sending its own
 * quota decisions to Redis as a separate instance would: quotas stay exact across the workers,
 * /metrics sums both workers' Redis commands and requests, and a stop writes every count to
 * PostgreSQL; Redis holds one instance's counting (one receipt) per worker. The upstream is the
 * local fake ECB.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv } from '../support/env.js';
import { get, type Reply } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { createKey, ensureBuilt, keyPrefix, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { createPostgresSchema, deleteRedisKeys, missingEngines, REDIS_URL } from '../support/stores.js';
import { startFakeUpstreams, TODAY, type FakeUpstreams } from '../support/upstreams.js';

/** The value of the sample of `name` with these labels (in any order, and no others) in a Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`).sort().join(',');
  for (const match of text.matchAll(/^(\w+)\{([^}]*)\} (\S+)$/gm)) {
    if (match[1] === name && match[2]!.split(',').sort().join(',') === wanted) return Number(match[3]);
  }
  return 0;
}

{
  const senders = 2;
  describe('EXRATES_WORKERS=2 on PostgreSQL and Redis', () => {
    let skip = '';
    let fake: FakeUpstreams | undefined;
    let schema: { url: string; drop(): Promise<void> } | undefined;
    let db: pg.Client | undefined;
    let redis: Redis | undefined;
    let server: Instance | undefined;
    let agent: http.Agent | undefined;
    const dir = tempDir('exrates-workers-redis-');
    // A namespace of this suite's own: its keys are found, counted and deleted by this prefix alone.
    const prefix = `exrates-test-${randomUUID()}:`;
    let key = '';
    let metricsPort = 0;

    const call = (path: string): Promise<Reply> => get(`${server!.base}${path}`, { headers: { 'X-Api-Key': key }, agent, timeoutMs: 15_000 });
    // /metrics from the metrics listener of its own, which each worker serves on the port they share.
    const metrics = async () => (await get(`http://127.0.0.1:${metricsPort}/metrics`, { agent, timeoutMs: 15_000 })).body;

    async function redisKeys(pattern: string): Promise<string[]> {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await redis!.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        found.push(...keys);
        cursor = next;
      } while (cursor !== '0');
      return found;
    }

    before(async () => {
      skip = await missingEngines();
      if (skip) return;
      await ensureBuilt();
      fake = await startFakeUpstreams();
      schema = await createPostgresSchema();
      db = new pg.Client({ connectionString: schema.url });
      await db.connect();
      redis = new Redis(REDIS_URL);
      metricsPort = await freePort();
      const setup: ProcessSetup = {
        cwd: dir.path,
        env: processEnv({
          EXRATES_DATABASE_URL: schema.url,
          EXRATES_REDIS_URL: REDIS_URL,
          EXRATES_REDIS_PREFIX: prefix,
          ...fakeUpstreamVars(fake),
          EXRATES_PROVIDERS: 'ecb',
          EXRATES_WORKERS: '2',
          EXRATES_METRICS_PORT: String(metricsPort),
        }),
      };
      server = await startInstance('cluster', setup);
      agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
      key = await createKey(setup, 'free');
    });

    after(async () => {
      agent?.destroy();
      if (server) await stopInstance(server);
      await db?.end().catch(() => undefined);
      await schema?.drop();
      await fake?.close();
      if (redis) {
        redis.disconnect();
        await deleteRedisKeys(`${prefix}*`);
      }
      dir.remove();
    });

    it(`1,100 requests on one free key through both workers: exactly 1,000 answered and 100 refused, in batches sent by each worker`, async (t) => {
      if (skip) return t.skip(skip);
      const before = await metrics();
      const replies = await Promise.all(Array.from({ length: 1100 }, () => call('/api/v1/convert?from=EUR&to=USD&amount=10')));
      const statuses = new Map<number, number>();
      for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      assert.deepEqual([...statuses].sort(), [
        [200, 1000],
        [429, 100],
      ]);
      const afterwards = await metrics();
      // The quota script is the only command sent as EVALSHA.
      const scripts = sample(afterwards, 'exrates_redis_commands_total', { command: 'evalsha' }) - sample(before, 'exrates_redis_commands_total', { command: 'evalsha' });
      const answered = sample(afterwards, 'exrates_http_requests_total', { route: '/api/v1/convert', method: 'GET', status: '200' });
      console.log(`workers on Redis: 1,100 requests -> ${scripts} quota script calls`);
      assert.equal(answered, 1000, "both workers' requests are in the summed metrics");
      assert.ok(scripts > 0 && scripts < 1100, `script calls: ${scripts}`);
      // Each process that counts in Redis leaves a receipt of its own.
      assert.equal((await redisKeys(`${prefix}receipt:*`)).length, senders);
    });

    it('a stop writes every count to PostgreSQL', async (t) => {
      if (skip) return t.skip(skip);
      const outcome = await stopInstance(server!);
      server = undefined;
      assert.equal(outcome.code, 0);
      const { rows } = await db!.query<{ used: number | string }>(
        'select q.used from quota_usage q join api_keys k on k.id = q.key_id where k.prefix = $1 and q.day = $2',
        [keyPrefix(key), TODAY],
      );
      assert.equal(Number(rows[0]?.used), 1000);
    });
  });
}
