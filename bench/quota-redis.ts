/**
 * `node --import tsx bench/quota-redis.ts [--clients 50] [--requests 40000] [--keys 1000] [--save]`: what
 * batching buys the Redis quota counter (src/storage/redis/quota-store.ts), against the simplest
 * correct design, one check-and-increment script call per request. Both count the same requests
 * (each of `clients` concurrent clients sends its next request when the last is answered, over
 * `keys` keys whose counters exist already) on the Redis at EXRATES_REDIS_URL (default
 * redis://127.0.0.1:6379), over a fresh SQLite store. Measured per request: Redis calls (the
 * commands ioredis sent), Redis's own time in them (INFO commandstats) and this process's CPU.
 * Redis is shared with whatever else runs on the machine; its keys here are under a prefix of
 * their own, deleted at the end. `--save` writes the results to bench/results/quota-redis/ (not among the bench's runs, which docs/performance.md is generated from).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { Clock, QuotaStore } from '../src/core/ports.js';
import type { Logger } from '../src/core/refresh.js';
import { migrateToLatest, openDatabase } from '../src/storage/database.js';
import { createQuotaStore } from '../src/storage/quota-store.js';
import { countRedisCommands, openRedis, type RedisClient } from '../src/storage/redis/connection.js';
import { redisKeyspace } from '../src/storage/redis/keyspace.js';
import { createRedisQuotaStore } from '../src/storage/redis/quota-store.js';
import { tempDir } from '../test/support/stores.js';

const { values } = parseArgs({
  options: { clients: { type: 'string', default: '50' }, requests: { type: 'string', default: '40000' }, keys: { type: 'string', default: '1000' }, save: { type: 'boolean', default: false } },
});
const CLIENTS = Number(values.clients);
const REQUESTS = Number(values.requests);
const KEYS = Number(values.keys);
const LIMIT = 1_000_000_000;
const REDIS_URL = process.env.EXRATES_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DAY = '2026-02-12';
const clock: Clock = { now: () => new Date('2026-02-12T12:00:00Z') };
const quiet: Logger = { info() {}, warn() {}, error() {} };

// The simplest correct counter: one call per request, checked and incremented in one step.
const CHECK_AND_INCREMENT = `
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v >= tonumber(ARGV[1]) then return {0, v} end
return {1, redis.call('INCR', KEYS[1])}
`;

function oneCallPerRequest(redis: RedisClient, prefix: string): QuotaStore {
  redis.defineCommand('measureCheckAndIncrement', { numberOfKeys: 1, lua: CHECK_AND_INCREMENT });
  const keys = redisKeyspace(prefix, false, '');
  const call = (redis as unknown as { measureCheckAndIncrement(key: string, limit: number): Promise<[number, number]> }).measureCheckAndIncrement.bind(redis);
  return {
    async consume(keyId, day, limit) {
      const [allowed, used] = await call(keys.counter(keyId, day), limit);
      return { allowed: allowed === 1, used };
    },
    used: () => Promise.reject(new Error('not measured')),
    close: () => Promise.resolve(),
  };
}

/** Redis's own microseconds in scripts so far (EVALSHA and EVAL), from INFO commandstats. */
async function scriptMicros(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let micros = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=\d+,usec=(\d+)/gm)) micros += Number(match[2]);
  return micros;
}

async function measure(name: string, quotas: QuotaStore, keyIds: string[], admin: Redis) {
  // Warm-up: the scripts loaded, the code compiled.
  await Promise.all(keyIds.map((keyId) => quotas.consume(keyId, DAY, LIMIT)));
  let commands = 0;
  const stop = countRedisCommands(() => (commands += 1));
  const redisBefore = await scriptMicros(admin);
  commands = 0;
  const cpuBefore = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < REQUESTS) {
        const keyId = keyIds[next++ % keyIds.length]!;
        await quotas.consume(keyId, DAY, LIMIT);
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const sent = commands;
  stop();
  const redisMicros = (await scriptMicros(admin)) - redisBefore;
  return {
    design: name,
    redisCallsPerRequest: sent / REQUESTS,
    redisMicrosPerRequest: redisMicros / REQUESTS,
    processCpuMicrosPerRequest: (cpu.user + cpu.system) / REQUESTS,
  };
}

const dir = tempDir('exrates-quota-redis-');
const database = await openDatabase(`sqlite:${dir.path}/measure.db`);
const prefix = `exrates-measure:${randomUUID()}:`;
const admin = new Redis(REDIS_URL);
const clients: RedisClient[] = [];
try {
  await migrateToLatest(database.db);
  const store = createQuotaStore(database.db);
  const keyIds = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  const connect = async () => {
    const redis = await openRedis(REDIS_URL, quiet);
    clients.push(redis);
    return redis;
  };
  const simple = await measure('one script call per request', oneCallPerRequest(await connect(), `${prefix}simple:`), keyIds, admin);
  const batchedStore = createRedisQuotaStore({ redis: await connect(), store, log: quiet, clock, prefix: `${prefix}batched:`, flushIntervalMs: 3_600_000 });
  const batched = await measure('batched (src/storage/redis/quota-store.ts)', batchedStore, keyIds, admin);
  await batchedStore.close();
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const startedAt = new Date().toISOString();
  const results = { startedAt, commit, node: process.version, cpus: cpus().length, clients: CLIENTS, requests: REQUESTS, keys: KEYS, rows: [simple, batched] };
  console.log(JSON.stringify(results, null, 2));
  if (values.save) {
    const file = new URL(`results/quota-redis/${startedAt.slice(0, 19).replace(/:/g, '-')}Z-${commit}.json`, import.meta.url);
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`written to ${file.pathname}`);
  }
  console.log(`\n${CLIENTS} clients, ${REQUESTS} requests over ${KEYS} keys, node ${process.version}`);
  console.log('design'.padEnd(46) + 'Redis calls/req  Redis µs/req  process CPU µs/req');
  for (const row of results.rows) {
    console.log(
      row.design.padEnd(46) +
        row.redisCallsPerRequest.toFixed(3).padStart(15) +
        row.redisMicrosPerRequest.toFixed(2).padStart(14) +
        row.processCpuMicrosPerRequest.toFixed(1).padStart(20),
    );
  }
} finally {
  for (const redis of clients) redis.disconnect();
  let cursor = '0';
  do {
    const [nextCursor, found] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = nextCursor;
    if (found.length > 0) await admin.del(...found);
  } while (cursor !== '0');
  admin.disconnect();
  await database.close();
  dir.remove();
}
