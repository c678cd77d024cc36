/** The PostgreSQL and Redis test servers; kept here for the suites that import them from this path. */
export {
  createPostgresSchema,
  deleteRedisKeys,
  POSTGRES_URL,
  postgresAvailable,
  REDIS_URL,
  redisAvailable,
  SERVICES_REQUIRED,
} from './support/stores.js';
