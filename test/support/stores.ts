/**
 * Stores for tests: a temp folder for SQLite files, a PostgreSQL schema per test file, and the
 * Redis server with its key cleanup. The servers' addresses come from the environment so CI and a
 * developer's machine can differ; where EXRATES_REQUIRE_SERVICES=1 (and on CI) a missing server
 * fails the suite instead of skipping it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';

export function tempDir(prefix = 'exrates-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Where the PostgreSQL test server is; the default matches the development and CI machines. */
export const POSTGRES_URL = process.env.EXRATES_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Where the Redis test server is; the default matches the development and CI machines. */
export const REDIS_URL = process.env.EXRATES_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** CI (and anyone who sets EXRATES_REQUIRE_SERVICES=1) must have the servers: a missing one fails there. */
export const SERVICES_REQUIRED = process.env.CI === 'true' || process.env.EXRATES_REQUIRE_SERVICES === '1';

/** Whether a server answers `probe`; a missing one fails where servers are required, and is skipped with a note elsewhere. */
async function reachable(name: string, url: string, variable: string, probe: () => Promise<void>, end: () => Promise<void>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch (error) {
    if (SERVICES_REQUIRED) throw new Error(`${name} is required here but unreachable at ${url}: ${String(error)}`);
    console.log(`# SKIPPING ${name} suites: no server at ${url} (set ${variable})`);
    return false;
  } finally {
    await end().catch(() => undefined);
  }
}

export async function postgresAvailable(): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  return reachable(
    'PostgreSQL',
    POSTGRES_URL,
    'EXRATES_TEST_POSTGRES_URL',
    async () => {
      await client.connect();
      await client.query('select 1');
    },
    () => client.end(),
  );
}

export async function redisAvailable(): Promise<boolean> {
  const { Redis } = await import('ioredis');
  // One attempt, no reconnects: a missing server must answer "no" quickly, not be retried forever.
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  client.on('error', () => undefined);
  return reachable(
    'Redis',
    REDIS_URL,
    'EXRATES_TEST_REDIS_URL',
    async () => {
      await client.connect();
      await client.ping();
    },
    async () => client.disconnect(),
  );
}

/** Why a suite that needs both PostgreSQL and Redis must skip ('' when both are up). */
export async function missingEngines(): Promise<string> {
  const [redisUp, postgresUp] = [await redisAvailable(), await postgresAvailable()];
  if (!redisUp) return 'Redis not available';
  if (!postgresUp) return 'PostgreSQL not available';
  return '';
}

/** A fresh schema for one test file (or bench run), so suites never see each other's tables; dropped afterwards. */
export async function createPostgresSchema(baseUrl = POSTGRES_URL, prefix = 'exrates_test_'): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const schema = `${prefix}${randomBytes(6).toString('hex')}`;
  // Ended even if the statement fails, so an open connection cannot keep the test process alive.
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create schema ${schema}`);
  const separator = baseUrl.includes('?') ? '&' : '?';
  return {
    url: `${baseUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: () => run(`drop schema if exists ${schema} cascade`),
  };
}

/** Deletes every Redis key matching a glob pattern; SCAN, so a busy shared server is not blocked. */
export async function deleteRedisKeys(pattern: string, url = REDIS_URL): Promise<number> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
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

/** A migrated store on one engine, and how to give it back. */
export interface TestStore {
  database: OpenDatabase;
  close(): Promise<void>;
}

export interface StoreEngine {
  name: 'SQLite' | 'PostgreSQL';
  /** A fresh migrated store, or null when the engine's server is not available here. */
  open(): Promise<TestStore | null>;
}

async function migrated(url: string, release: () => Promise<void>): Promise<TestStore> {
  let database: OpenDatabase | undefined;
  try {
    database = await openDatabase(url);
    await migrateToLatest(database.db);
  } catch (error) {
    await database?.close();
    await release();
    throw error;
  }
  const opened = database;
  return {
    database: opened,
    async close() {
      await opened.close();
      await release();
    },
  };
}

/** Every storage engine, for suites that hold each adapter to the same tests. */
export function storeEngines(tempPrefix?: string): StoreEngine[] {
  return [
    {
      name: 'SQLite',
      async open() {
        const dir = tempDir(tempPrefix);
        return migrated(`sqlite:${join(dir.path, 'store.db')}`, async () => dir.remove());
      },
    },
    {
      name: 'PostgreSQL',
      async open() {
        if (!(await postgresAvailable())) return null;
        const schema = await createPostgresSchema();
        return migrated(schema.url, () => schema.drop());
      },
    },
  ];
}
