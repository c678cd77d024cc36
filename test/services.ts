import { randomBytes } from 'node:crypto';

/** Where the PostgreSQL test server is; the default matches the development and CI machines. */
export const POSTGRES_URL = process.env.EXRATES_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** CI (and anyone who sets EXRATES_REQUIRE_SERVICES=1) must have the servers: a missing one fails there. */
export const SERVICES_REQUIRED = process.env.CI === 'true' || process.env.EXRATES_REQUIRE_SERVICES === '1';

export async function postgresAvailable(): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (error) {
    if (SERVICES_REQUIRED) throw new Error(`PostgreSQL is required here but unreachable at ${POSTGRES_URL}: ${String(error)}`);
    console.log(`# SKIPPING PostgreSQL suites: no server at ${POSTGRES_URL} (set EXRATES_TEST_POSTGRES_URL)`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema for one test file, so suites never see each other's tables; dropped afterwards. */
export async function createPostgresSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const schema = `exrates_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  // Ended even if the statement fails, so an open connection cannot keep the test process alive.
  try {
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  const separator = POSTGRES_URL.includes('?') ? '&' : '?';
  return {
    url: `${POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Where the Redis test server is; the default matches the development and CI machines. */
export const REDIS_URL = process.env.EXRATES_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisAvailable(): Promise<boolean> {
  const { Redis } = await import('ioredis');
  // One attempt, no reconnects: a missing server must answer "no" quickly, not be retried forever.
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (error) {
    if (SERVICES_REQUIRED) throw new Error(`Redis is required here but unreachable at ${REDIS_URL}: ${String(error)}`);
    console.log(`# SKIPPING Redis suites: no server at ${REDIS_URL} (set EXRATES_TEST_REDIS_URL)`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** Deletes every Redis key matching a glob pattern; SCAN, so a busy shared server is not blocked. */
export async function deleteRedisKeys(pattern: string): Promise<number> {
  const { Redis } = await import('ioredis');
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  let deleted = 0;
  try {
    let cursor = '0';
    // Bounded: a keyspace that kept growing under us must not loop forever.
    for (let round = 0; round < 10_000; round += 1) {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0) deleted += await client.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    client.disconnect();
  }
  return deleted;
}
