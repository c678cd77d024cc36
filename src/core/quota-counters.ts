import type { Clock, QuotaCount, QuotaJournal, QuotaStore, StoredQuotaCounts } from './ports.js';
import type { Logger } from './refresh.js';
import type { Day } from './time.js';

const FOLD_BATCH = 100;
/** How often the journal is folded into the stored counts and emptied. */
const FOLD_MS = 1_000;
/** A journal write that failed is tried again after this long: not every few milliseconds while the store is down. */
const RETRY_MS = 1_000;
/** A write that keeps failing is logged at most this often, not at every attempt. */
const WARN_EVERY_MS = 30_000;

/** A warning logged at most once per `everyMs`, saying how many were left out since the last. */
function rateLimitedWarning(log: Logger, clock: Clock, message: string, everyMs: number): (error: unknown) => void {
  let lastAt = -Infinity;
  let skipped = 0;
  return (error) => {
    const now = clock.now().getTime();
    if (now - lastAt < everyMs) {
      skipped += 1;
      return;
    }
    log.warn({ err: error instanceof Error ? error.message : String(error), ...(skipped > 0 ? { failuresNotLogged: skipped } : {}) }, message);
    lastAt = now;
    skipped = 0;
  };
}

/**
 * This process's quota counters when there is no Redis: first what the journals hold (appended by
 * a process killed before its fold) is folded into the stored counts (not by a command that runs
 * beside a server: it would take that server's journal), then requests are counted in memory
 * (`createBufferedQuotaStore`).
 */
export async function openQuotaCounters(
  store: StoredQuotaCounts,
  journals: { own: QuotaJournal; leftBehind: readonly QuotaJournal[] },
  options: { flushMs: number; replayJournal: boolean; log: Logger; clock: Clock },
): Promise<QuotaStore> {
  if (options.replayJournal) {
    const replayed = await foldLeftovers(store, journals.leftBehind);
    if (replayed > 0) options.log.info({ counts: replayed }, 'folded in the quota journal left by a process that did not stop cleanly');
  }
  return createBufferedQuotaStore(store, journals.own, options);
}

/**
 * Folds what journals hold into the stored counts, the highest count per key and day, then
 * forgets it; resolves how many counts were folded in. Counts are raised, never lowered, so a
 * fold cut short by another kill is done again whole at the next start.
 */
export async function foldLeftovers(store: StoredQuotaCounts, journals: readonly QuotaJournal[]): Promise<number> {
  const highest = new Map<string, QuotaCount>();
  const drops: Array<() => Promise<void>> = [];
  for (const journal of journals) {
    const { counts, drop } = await journal.leftover();
    drops.push(drop);
    for (const { keyId, day, used } of counts) {
      const name = `${keyId}:${day}`;
      const seen = highest.get(name);
      if (!seen) highest.set(name, { keyId, day, used });
      else if (seen.used < used) seen.used = used;
    }
  }
  const entries = [...highest.values()];
  for (let i = 0; i < entries.length; i += FOLD_BATCH) await store.raiseMany(entries.slice(i, i + FOLD_BATCH));
  for (const drop of drops) await drop();
  return highest.size;
}

/**
 * Quota counters held in memory, so a request costs no write. Exact within this process. The
 * counts changed since the last append are appended to the journal every `flushMs` (a timer
 * armed only while something changed), and folded into the stored counts every second, after
 * which the journal forgets the appends folded in: a killed process (not a stopped one) forgives
 * at most the requests of the last `flushMs` and of the append in progress, and its journal is
 * folded in at the next start (`foldLeftovers`, before this store is made). For several
 * processes on one store, use Redis (EXRATES_REDIS_URL) instead.
 */
export function createBufferedQuotaStore(store: StoredQuotaCounts, journal: QuotaJournal, options: { flushMs: number; log: Logger; clock: Clock }): QuotaStore {
  interface Counter {
    keyId: string;
    day: Day;
    used: number;
    /** The stored count on its way, until it is added in. */
    loading: Promise<void> | undefined;
  }
  /** What is written of a counter: its count as it is now. */
  const countOf = (c: Counter): QuotaCount => ({ keyId: c.keyId, day: c.day, used: c.used });
  /** By day, then key: a finished day's counters are forgotten together. */
  const counters = new Map<Day, Map<string, Counter>>();
  /**
   * Changed since the last journal write, and since the last fold began. Each write and fold
   * takes the set and starts a new one, which collects what changes while it is written.
   */
  let unjournaled = new Set<Counter>();
  let unfolded = new Set<Counter>();
  /** The last append's id, and the last one forgotten. */
  let journaledId = 0;
  let trimmedId = 0;
  let closed = false;
  const journalWarning = rateLimitedWarning(options.log, options.clock, 'could not write the quota journal; will retry', WARN_EVERY_MS);
  const foldWarning = rateLimitedWarning(options.log, options.clock, 'could not write quota counters; will retry', WARN_EVERY_MS);

  /**
   * Set when a fold failed: the next append holds every count not folded in, and the appends
   * before it are forgotten, so that the journal does not grow for as long as the store cannot
   * be written.
   */
  let snapshotDue = false;

  async function writeJournal(): Promise<boolean> {
    const snapshot = snapshotDue;
    snapshotDue = false;
    if (snapshot) for (const c of unfolded) unjournaled.add(c);
    const changed = unjournaled;
    unjournaled = new Set();
    const before = journaledId;
    try {
      journaledId = await journal.append(Array.from(changed, countOf));
    } catch (error) {
      for (const c of changed) unjournaled.add(c);
      snapshotDue ||= snapshot;
      journalWarning(error);
      return false;
    }
    if (snapshot && before > trimmedId) {
      // Appends are never two at once: every one before this holds no count it lacks.
      try {
        await journal.trim(before);
        trimmedId = before;
      } catch (error) {
        journalWarning(error);
      }
    }
    return true;
  }

  async function fold(): Promise<void> {
    // Every append made before the fold began holds counts no higher than those it writes:
    // those appends may be forgotten once every batch is in.
    const through = journaledId;
    const entries = [...unfolded];
    unfolded = new Set();
    // Batches of FOLD_BATCH keys, one statement and transaction each, with requests served in
    // between: SQLite writes block the event loop, and a thousand keys at once would hold every
    // request for tens of milliseconds.
    for (let i = 0; i < entries.length; i += FOLD_BATCH) {
      const batch = entries.slice(i, i + FOLD_BATCH);
      try {
        await store.raiseMany(batch.map(countOf));
      } catch (error) {
        for (const c of entries.slice(i)) unfolded.add(c);
        foldWarning(error);
        snapshotDue = true;
        scheduleJournal(options.flushMs);
        return;
      }
      if (i + FOLD_BATCH < entries.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (through > trimmedId) {
      try {
        await journal.trim(through);
        trimmedId = through;
      } catch (error) {
        foldWarning(error);
      }
    }
    // Yesterday's counters are done once written.
    const today = options.clock.now().toISOString().slice(0, 10);
    for (const [day, byKey] of counters) {
      if (day >= today) continue;
      for (const [keyId, c] of byKey) if (!unjournaled.has(c) && !unfolded.has(c)) byKey.delete(keyId);
      if (byKey.size === 0) counters.delete(day);
    }
  }

  // Never two journal writes, nor two folds, at once; each timer is armed only while there is
  // something to write, so an idle process does nothing.
  let journalTimer: NodeJS.Timeout | undefined;
  let journaling: Promise<void> | undefined;
  function scheduleJournal(delayMs: number): void {
    if (journalTimer || journaling || closed) return;
    journalTimer = setTimeout(() => {
      journalTimer = undefined;
      journaling = writeJournal().then((written) => {
        journaling = undefined;
        if (written) scheduleFold();
        if (unjournaled.size > 0 || snapshotDue) scheduleJournal(written ? options.flushMs : RETRY_MS);
      });
    }, delayMs);
    journalTimer.unref();
  }
  let foldTimer: NodeJS.Timeout | undefined;
  let folding: Promise<void> | undefined;
  function scheduleFold(): void {
    if (foldTimer || folding || closed) return;
    foldTimer = setTimeout(() => {
      foldTimer = undefined;
      folding = fold().then(() => {
        folding = undefined;
        if (unfolded.size > 0 || journaledId > trimmedId) scheduleFold();
      });
    }, FOLD_MS);
    foldTimer.unref();
  }

  /** Counts one request on a loaded counter unless it reached the limit. */
  function take(c: Counter, limit: number): { allowed: boolean; used: number } {
    if (c.used >= limit) return { allowed: false, used: c.used };
    c.used += 1;
    unjournaled.add(c);
    unfolded.add(c);
    if (journalTimer === undefined) scheduleJournal(options.flushMs);
    if (foldTimer === undefined) scheduleFold();
    return { allowed: true, used: c.used };
  }

  return {
    async consume(keyId, day, limit) {
      let byKey = counters.get(day);
      if (!byKey) counters.set(day, (byKey = new Map()));
      let c = byKey.get(keyId);
      if (!c) {
        const entry: Counter = { keyId, day, used: 0, loading: undefined };
        entry.loading = store.used(keyId, day).then((used) => {
          entry.used += used;
          entry.loading = undefined;
        });
        const held = byKey;
        held.set(keyId, entry);
        c = entry;
        entry.loading.catch(() => held.delete(keyId));
      }
      if (c.loading) await c.loading;
      return take(c, limit);
    },
    async used(keyId, day) {
      const c = counters.get(day)?.get(keyId);
      if (c && !c.loading) return c.used;
      return store.used(keyId, day);
    },
    async close() {
      closed = true;
      clearTimeout(journalTimer);
      clearTimeout(foldTimer);
      await journaling;
      await folding;
      // Everything counted goes into the stored counts, and the journal with it.
      await fold();
      await journal.close();
    },
  };
}
