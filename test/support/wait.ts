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
