/** Every machine-readable problem code the service can answer with (SPEC §7). */
export const ERROR_CODES = [
  'invalid_currency',
  'unsupported_currency',
  'unsupported_source',
  'invalid_amount',
  'invalid_range',
  'invalid_format',
  'invalid_date',
  'missing_parameter',
  'unauthorized',
  'quota_exceeded',
  'no_history',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'payload_too_large',
  'malformed_request',
  'request_timeout',
  'header_too_large',
  'unsupported_media_type',
  'feed_unavailable',
  'service_unavailable',
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

/** The store or Redis could not answer: the request fails fast with a 503 and may be retried. */
export class UnavailableError extends Error {
  constructor(readonly dependency: string, options?: { cause?: unknown }) {
    super(`${dependency} is unavailable`, options);
    this.name = 'UnavailableError';
  }
}

/**
 * Wraps every method of a store so a failure surfaces as UnavailableError: callers answer 503
 * instead of a 500, and never see driver internals.
 */
export function guardDependency<T extends object>(target: T, dependency: string): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          if (result instanceof Promise) {
            return result.catch((error: unknown) => {
              throw error instanceof UnavailableError || error instanceof DomainError ? error : new UnavailableError(dependency, { cause: error });
            });
          }
          return result;
        } catch (error) {
          throw error instanceof UnavailableError || error instanceof DomainError ? error : new UnavailableError(dependency, { cause: error });
        }
      };
    },
  });
}
