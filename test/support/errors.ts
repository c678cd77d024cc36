/** Matching the core's typed errors in `assert.throws` / `assert.rejects`. */
import assert from 'node:assert/strict';
import { DomainError, FeedError } from '../../src/core/errors.js';

/** A validator for assert.throws/rejects: the error is a DomainError with this code and parameter. */
export function domainError(code: string, param?: string) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof DomainError, `expected DomainError ${code}, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.param, param);
    return true;
  };
}

/** A validator for assert.throws/rejects: the error is a FeedError whose message matches. */
export function feedError(pattern: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  };
}
