/**
 * A value that a cache or an in-memory counter can give at once, and a store only later. The
 * everyday request is answered from such caches: awaiting a value that is already there would
 * still cost a promise and a turn of the microtask queue per step, several per request.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Runs `next` on the value: now when it is there, when it arrives when it is a promise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
