/**
 * Quotas and locks on a Redis Cluster of three nodes started by this suite: the quota counter
 * exact across two instances, batches split along hash slots, the lock held by one instance at a
 * time, and two real `exrates serve` processes on one PostgreSQL schema exact on one key.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Cluster } from 'ioredis';
import type { Clock, QuotaStore } from '../../src/core/ports.js';
import type { Logger } from '../../src/core/refresh.js';
import { createQuotaStore } from '../../src/storage/quota-store.js';
import { countRedisCommands, openRedis, type RedisClient } from '../../src/storage/redis/connection.js';
import { createRedisLock } from '../../src/storage/redis/lock.js';
import { createRedisQuotaStore } from '../../src/storage/redis/quota-store.js';
import { fakeUpstreamVars, processEnv } from '../support/env.js';
import { get, type Reply } from '../support/http.js';
import { createKey, ensureBuilt, startInstances, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { clusterToolsMissing, startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { createPostgresSchema, postgresAvailable, SERVICES_REQUIRED, storeEngines, tempDir, type TestStore } from '../support/stores.js';
import { startFakeUpstreams, TODAY, type FakeUpstreams } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';
import { pool } from './load.js';

const NOW = new Date('2026-02-12T12:00:00Z');
const DAY = '2026-02-12';
const clock: Clock = { now: () => new Date(NOW.getTime()) };
const quiet: Logger = { info() {}, warn() {}, error() {} };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const sortedUsed = (results: Array<{ used: number }>) => results.map((r) => r.used).sort((a, b) => a - b);

let cluster: RedisCluster | undefined;
let admin: Cluster | undefined;
let skip = '';
const clients = new Set<RedisClient>();

async function connect(): Promise<RedisClient> {
  const redis = await openRedis(cluster!.url, quiet);
  clients.add(redis);
  return redis;
}

/** The port of the node serving a key's slot. */
async function nodeOf(key: string): Promise<number> {
  const slot = await admin!.cluster('KEYSLOT', key);
  const slots = await admin!.cluster('SLOTS');
  return slots.find(([from, to]) => slot >= from && slot <= to)![2]![1];
}

before(async () => {
  skip = clusterToolsMissing();
  if (skip && SERVICES_REQUIRED) throw new Error(`a Redis Cluster is required here: ${skip}`);
  if (skip) return;
  cluster = await startRedisCluster();
  admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0]! }], { redisOptions: { maxRetriesPerRequest: 1 } });
  admin.on('error', () => undefined);
});

after(async () => {
  for (const redis of clients) redis.disconnect();
  admin?.disconnect();
  await cluster?.stop();
});

describe('Redis Cluster: quota counter and lock', () => {
  let opened: TestStore | null = null;
  let store: ReturnType<typeof createQuotaStore>;
  const stores = new Set<QuotaStore>();
  const quotaStore = async () => {
    const quotas = createRedisQuotaStore({ redis: await connect(), store, clock, log: quiet });
    stores.add(quotas);
    return quotas;
  };

  before(async () => {
    if (skip) return;
    opened = await storeEngines('exrates-cluster-')[0]!.open();
    store = createQuotaStore(opened!.database.db);
  });
  after(async () => {
    for (const quotas of stores) await quotas.close?.();
    await opened?.close();
  });

  test('1,100 requests over two instances on a key of 1,000: exactly 1,000 allowed, counted 1..1,000', async (t) => {
    if (skip) return t.skip(skip);
    const [a, b] = [await quotaStore(), await quotaStore()];
    const keyId = `test-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 1100 }, (_, i) => (i % 2 ? a : b).consume(keyId, DAY, 1000)));
    const allowed = results.filter((r) => r.allowed);
    assert.equal(allowed.length, 1000);
    assert.deepEqual(sortedUsed(allowed), range(1, 1000));
    assert.deepEqual(new Set(results.filter((r) => !r.allowed).map((r) => r.used)), new Set([1000]));
    // The counter carries the key's id as hash tag: its slot is the key's.
    assert.equal(await admin!.get(`exrates:quota:{${keyId}}:${DAY}`), '1000');
    await Promise.all([a.close?.(), b.close?.()]);
    stores.clear();
    assert.equal(await store.used(keyId, DAY), 1000);
  });

  test('the requests of one turn for keys on every node: one batch, a script call per key, each decision exact', async (t) => {
    if (skip) return t.skip(skip);
    const quotas = await quotaStore();
    const keyIds = Array.from({ length: 30 }, () => `test-${randomUUID()}`);
    const nodes = new Set(await Promise.all(keyIds.map((keyId) => nodeOf(`{${keyId}}`))));
    assert.equal(nodes.size, 3, 'the 30 keys are spread over the three nodes');
    await Promise.all(keyIds.map((keyId) => quotas.consume(keyId, DAY, 8)));
    const commands: string[] = [];
    const stop = countRedisCommands((command) => commands.push(command));
    let results: Array<{ allowed: boolean; used: number }>;
    try {
      results = await Promise.all(Array.from({ length: 300 }, (_, i) => quotas.consume(keyIds[i % 30]!, DAY, 8)));
    } finally {
      stop();
    }
    for (const [k, keyId] of keyIds.entries()) {
      const mine = results.filter((_, i) => i % 30 === k);
      assert.deepEqual(sortedUsed(mine.filter((r) => r.allowed)), range(2, 8), keyId);
    }
    const scripts = commands.filter((command) => command === 'evalsha' || command === 'eval');
    // One batch (the turn's 300), a call per key: a script touches the keys of one hash slot only.
    assert.equal(scripts.filter((command) => command === 'evalsha').length, 30, `300 requests: ${commands.join(' ')}`);
    assert.deepEqual(
      commands.filter((command) => command !== 'evalsha' && command !== 'eval'),
      [],
      'nothing but the scripts (an EVAL where a node did not hold the script yet)',
    );
  });

  test('a lock: of two instances trying at once exactly one acquires; released, the other takes it', async (t) => {
    if (skip) return t.skip(skip);
    const [a, b] = [createRedisLock(await connect()), createRedisLock(await connect())];
    for (let round = 0; round < 10; round += 1) {
      const name = `test:${randomUUID()}`;
      const [ra, rb] = await Promise.all([a.tryAcquire(name, 5_000), b.tryAcquire(name, 5_000)]);
      assert.equal([ra, rb].filter((r) => r !== null).length, 1, `round ${round}`);
      assert.equal(await (ra ? b : a).isHeld(name), true);
      await (ra ?? rb)!();
      assert.equal(await a.isHeld(name), false);
      const again = await (ra ? b : a).tryAcquire(name, 5_000);
      assert.ok(again);
      await again();
    }
  });
});

describe('two exrates instances on one PostgreSQL and a Redis Cluster', () => {
  let fake: FakeUpstreams | undefined;
  let schema: { url: string; drop(): Promise<void> } | undefined;
  let setup: ProcessSetup;
  let reason = '';
  const dir = tempDir('exrates-cluster-scale-');
  const instances: Instance[] = [];
  const agents: http.Agent[] = [];

  before(async () => {
    reason = skip || ((await postgresAvailable()) ? '' : 'PostgreSQL not available');
    if (reason) return;
    await ensureBuilt();
    fake = await startFakeUpstreams();
    schema = await createPostgresSchema();
    setup = { cwd: dir.path, env: processEnv({ EXRATES_DATABASE_URL: schema.url, EXRATES_REDIS_URL: cluster!.url, ...fakeUpstreamVars(fake) }) };
    await startInstances(['A', 'B'], setup, instances);
    for (const _ of instances) agents.push(new http.Agent({ keepAlive: true, maxSockets: 64 }));
  });

  after(async () => {
    for (const agent of agents) agent.destroy();
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await schema?.drop();
    await fake?.close();
    dir.remove();
  });

  test('a free key exhausted over both instances: 1,100 requests are exactly 1,000 answered and 100 refused', async (t) => {
    if (reason) return t.skip(reason);
    const key = await createKey(setup, 'free');
    const call = (i: number): Promise<Reply> =>
      get(`${instances[i % 2]!.base}/api/v1/rate?from=EUR&to=CHF`, { headers: { 'X-Api-Key': key }, agent: agents[i % 2]!, timeoutMs: 15_000 });
    const replies = await pool(Array.from({ length: 1100 }, (_, i) => i), 200, (i) => call(i));
    const byStatus: Record<number, number> = {};
    for (const reply of replies) byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;
    assert.deepEqual(byStatus, { 200: 1000, 429: 100 }, instances.map((instance) => instance.output.join('').slice(-3000)).join('\n'));
    const remaining = replies
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']))
      .sort((a, b) => b - a);
    assert.deepEqual(remaining, Array.from({ length: 1000 }, (_, i) => 999 - i));
    // The instances' last batches reach the cluster after their answers.
    let used: unknown;
    const usage = async () => JSON.parse((await get(`${instances[0]!.base}/api/v1/usage`, { headers: { 'X-Api-Key': key }, agent: agents[0]! })).body).used as unknown;
    await waitFor(async () => (used = await usage()) === 1000, 1_500, 'the cluster to hold the count').catch(() => undefined);
    assert.equal(used, 1000);
    const perInstance = [0, 1].map((n) => replies.filter((r, i) => i % 2 === n && r.status === 200).length);
    console.log(`cluster quota: 1100 requests over 2 instances on a 3-node Redis Cluster -> 1000 x 200 (A ${perInstance[0]}, B ${perInstance[1]}), 100 x 429 (day ${TODAY})`);
  });
});
