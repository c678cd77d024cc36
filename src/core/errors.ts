/** Every machine-readable problem code the service can answer with (SPEC §7). */
export const ERROR_CODES = [
  'invalid_currency',
  'unsupported_currency',
  'invalid_amount',
  'invalid_range',
  'invalid_format',
  'missing_parameter',
  'unauthorized',
  'quota_exceeded',
  'no_history',
  'not_found',
  'method_not_allowed',
  'feed_unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error the core raises on purpose; the HTTP layer turns it into problem+json, the CLI into a message. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: { param?: string; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Upstream data that is malformed, truncated or implausible. Never stored. */
export class FeedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedError';
  }
}
