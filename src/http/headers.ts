/** Sent with every answer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };

/**
 * The CORS policy: browsers call rate APIs directly, from any origin, sending their key in
 * X-Api-Key. The keyed API applies it to its answers; Fastify's CORS plugin to the rest and to
 * every preflight.
 */
export const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['X-Api-Key', 'If-None-Match', 'If-Modified-Since'],
  exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag', 'Content-Disposition', 'WWW-Authenticate'],
  maxAge: 86400,
};
