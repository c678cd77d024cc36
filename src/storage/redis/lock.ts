import { randomUUID } from 'node:crypto';
import type { Lock } from '../../core/ports.js';
import { DEFAULT_REDIS_PREFIX, type RedisClient } from './connection.js';
import { redisKeyspace } from './keyspace.js';

// KEYS[1] lock; ARGV[1] token. Deletes the lock only if we still hold it.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** A lock shared by every instance on one Redis (or cluster): SET NX PX with a token, released only by its holder. */
export function createRedisLock(redis: RedisClient, prefix = DEFAULT_REDIS_PREFIX): Lock {
  const keys = redisKeyspace(prefix, redis.isCluster, '');
  return {
    async tryAcquire(name, ttlMs) {
      const key = keys.lock(name);
      const token = randomUUID();
      const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
      if (ok !== 'OK') return null;
      return async () => {
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      };
    },
    async isHeld(name) {
      return (await redis.exists(keys.lock(name))) === 1;
    },
  };
}
