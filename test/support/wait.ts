/** Waiting in tests: a plain pause, and polling until something holds with a deadline that names what was awaited. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls every `pollMs` until the condition holds, failing after `timeoutMs`; resolves with the milliseconds it took. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string, pollMs = 10): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(pollMs);
  }
  return performance.now() - started;
}

/**
 * Lets real I/O run (turns of the event loop, no timers) until the condition holds, then a few
 * turns more: for a test whose clock is mocked and stands still, where `waitFor`'s pause would never end.
 */
export async function settleUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
