import type { Lock } from './ports.js';

/**
 * A lock within one process: enough when one process serves (the embedded default). Its TTLs run
 * on the machine's clock, not the service's Clock: a TTL bounds how long a holder blocks others in
 * real time, as the engines' locks do, and a frozen Clock would hold a lock for ever.
 */
export function createLocalLock(): Lock {
  const held = new Map<string, number>();
  return {
    async tryAcquire(name, ttlMs) {
      const now = Date.now();
      const until = held.get(name);
      if (until !== undefined && until > now) return null;
      const mine = now + ttlMs;
      held.set(name, mine);
      return async () => {
        if (held.get(name) === mine) held.delete(name);
      };
    },
    async isHeld(name) {
      const until = held.get(name);
      return until !== undefined && until > Date.now();
    },
  };
}
