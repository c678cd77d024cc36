import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../../core/refresh.js';
import { parseRedisUrl } from '../redis-url.js';

/** Namespace of every key this service writes; one per installation sharing a Redis. */
export const DEFAULT_REDIS_PREFIX = 'exrates:';

/** One Redis server, or a Redis Cluster: the commands this service sends work on both. */
export type RedisClient = Redis | Cluster;

/**
 * A Redis connection that fails fast: no offline queue, one retry per command and a short
 * command timeout, so a request never hangs on a Redis that is down. ioredis keeps reconnecting
 * in the background. On a cluster, the same holds for the connection to every node.
 */
export async function openRedis(url: string, log: Logger): Promise<RedisClient> {
  // Loaded only when Redis is configured: a single-process install on SQLite never needs it.
  const { Cluster, Redis } = await import('ioredis');
  const target = parseRedisUrl(url);
  const perCommand = { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 1_000 };
  const retry = (times: number) => Math.min(times * 200, 2_000);
  const redis: RedisClient = target.cluster
    ? new Cluster(target.nodes, {
        lazyConnect: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: retry,
        redisOptions: {
          ...perCommand,
          ...(target.username ? { username: target.username } : {}),
          ...(target.password ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        },
      })
    : new Redis(url, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: retry, ...perCommand });
  let wasReady = false;
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    if (wasReady) log.warn({ err: error.message }, 'redis connection error');
    wasReady = false;
    lastError = error;
  });
  redis.on('ready', () => {
    wasReady = true;
  });
  // A connection whose socket opened but whose handshake never completes (a black-holed route)
  // would wait for ever: give it a few seconds, then start over.
  let handshakeTimer: NodeJS.Timeout | undefined;
  redis.on('connect', () => {
    clearTimeout(handshakeTimer);
    handshakeTimer = setTimeout(() => {
      if (redis.status === 'connect') {
        log.warn({}, 'redis handshake did not complete; reconnecting');
        redis.disconnect(true);
      }
    }, 3_000);
    handshakeTimer.unref();
  });
  redis.on('end', () => clearTimeout(handshakeTimer));
  try {
    await redis.connect();
  } catch (error) {
    // Otherwise the client keeps reconnecting in the background, and a start that failed never exits.
    redis.disconnect();
    // connect() rejects with "Connection is closed."; the socket's own error says why.
    throw lastError ?? error;
  }
  return redis;
}

/**
 * Calls `count` with the name of every command any ioredis client of this process sends, through
 * the tracing channel ioredis publishes (one message per command sent to a server). Returns the
 * unsubscribe.
 */
export function countRedisCommands(count: (command: string) => void): () => void {
  // The start channel of ioredis's tracing channel `ioredis:command`.
  const name = 'tracing:ioredis:command:start';
  const onCommand = (message: unknown) => count((message as { command: string }).command);
  subscribe(name, onCommand);
  return () => {
    unsubscribe(name, onCommand);
  };
}
