/**
 * Quota counters kept in memory (no Redis) with the journal that bounds what a kill forgives: the
 * buffered store of src/core/quota-counters.ts on a real store with the journal the service gives it,
 * files beside an SQLite file and a table of a PostgreSQL schema. A kill is simulated by cutting
 * the store and journal off (every call after it never answers), so nothing is written any more,
 * and opening the counters again on the same store, with a new journal as a new process would.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBufferedQuotaStore, foldLeftovers, openQuotaCounters } from '../../src/core/quota-counters.js';
import type { Clock, QuotaCount, QuotaJournal, QuotaStore, StoredQuotaCounts } from '../../src/core/ports.js';
import type { Logger } from '../../src/core/refresh.js';
import { quotaJournals } from '../../src/storage/quota-journal.js';
import { createQuotaStore } from '../../src/storage/quota-store.js';
import { storeEngines, type TestStore } from '../support/stores.js';
import { sleep, waitFor } from '../support/wait.js';

const DAY = '2026-03-06';
const clock: Clock = { now: () => new Date('2026-03-06T12:00:00Z') };
const FLUSH_MS = 10;
/** The fold runs every second (FOLD_MS in quota-counters.ts). */
const FOLD_MS = 1_000;

function recordingLog(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (_object, message) => void warnings.push(message ?? ''), error() {} };
}

/** The store and journal as a process sees them, with a switch that stops every call from answering: a kill. */
function killable(store: StoredQuotaCounts, journal: QuotaJournal): { store: StoredQuotaCounts; journal: QuotaJournal; kill(): void; appends: () => number } {
  let killed = false;
  let appends = 0;
  const never = new Promise<never>(() => undefined);
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      killed ? never : call(...args);
  return {
    store: {
      used: guard((keyId: string, day: string) => store.used(keyId, day)),
      raiseMany: guard((entries: ReadonlyArray<QuotaCount>) => store.raiseMany(entries)),
    },
    journal: {
      append: guard((entries) => {
        appends += 1;
        return journal.append(entries);
      }),
      trim: guard((id) => journal.trim(id)),
      leftover: guard(() => journal.leftover()),
      close: () => journal.close(),
    },
    kill: () => {
      killed = true;
    },
    appends: () => appends,
  };
}

for (const engine of storeEngines('exrates-journal-')) {
  describe(`quota journal on ${engine.name}`, () => {
    let opened: TestStore | null = null;
    let stored: ReturnType<typeof createQuotaStore>;
    /** The journals of one process: a new process (a restart) gets new ones. */
    let journals: ReturnType<typeof quotaJournals>;
    let keyNumber = 0;
    const open = new Set<QuotaStore>();

    before(async () => {
      opened = await engine.open();
      if (opened) {
        stored = createQuotaStore(opened.database.db);
        journals = quotaJournals(opened.database);
      }
    });
    after(async () => {
      for (const quotas of open) await quotas.close?.();
      await opened?.close();
    });

    const newKey = () => `key-${++keyNumber}`;
    /** What the journal holds now: every count appended and not yet forgotten. */
    const journalCounts = async (): Promise<QuotaCount[]> => (await journals.own.leftover()).counts;
    /** The journal files beside an SQLite file (none where the journal is a table). */
    const journalFiles = () => {
      const file = opened!.database.file;
      return file === undefined ? [] : readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}-quota-`));
    };
    /** The highest count the journal holds for a key today. */
    const journaled = async (keyId: string) => Math.max(0, ...(await journalCounts()).filter((c) => c.keyId === keyId && c.day === DAY).map((c) => c.used));
    const buffered = (store: StoredQuotaCounts, journal: QuotaJournal = journals.own, log: Logger = recordingLog()) => {
      const quotas = createBufferedQuotaStore(store, journal, { flushMs: FLUSH_MS, log, clock });
      open.add(quotas);
      return quotas;
    };
    const consumeTimes = async (quotas: QuotaStore, keyId: string, times: number) => {
      for (let i = 0; i < times; i += 1) await quotas.consume(keyId, DAY, 1_000);
    };

    test('the counts changed are in the journal within the interval, and a fold writes them and empties the journal', async (t) => {
      if (!opened) return t.skip('server not available');
      const quotas = buffered(stored);
      const [a, b] = [newKey(), newKey()];
      await consumeTimes(quotas, a, 5);
      await consumeTimes(quotas, b, 3);
      const started = performance.now();
      const inJournal = await waitFor(async () => (await journaled(a)) === 5 && (await journaled(b)) === 3, 2_000, 'the journal to hold 5 and 3');
      const stillUnfolded = (await stored.used(a, DAY)) === 0;
      t.diagnostic(`journaled ${Math.round(inJournal)} ms after the last request (interval ${FLUSH_MS} ms); folded then: ${!stillUnfolded}`);
      // On a loaded machine the write may come late; it must come well before the fold.
      assert.ok(inJournal < FOLD_MS / 2, `journaled within ${Math.round(inJournal)} ms`);
      if (performance.now() - started < FOLD_MS / 2) assert.ok(stillUnfolded, 'the stored count waits for the fold');
      await waitFor(async () => (await stored.used(a, DAY)) === 5 && (await journalCounts()).length === 0, 3_000, 'the fold of 5 and an empty journal');
      assert.equal(await stored.used(b, DAY), 3);
      // Only what changed goes in the next append.
      await consumeTimes(quotas, a, 1);
      await waitFor(async () => (await journaled(a)) === 6, 2_000, 'the journal to hold 6');
      assert.deepEqual(await journalCounts(), [{ keyId: a, day: DAY, used: 6 }]);
    });

    test('an idle process writes nothing', async (t) => {
      if (!opened) return t.skip('server not available');
      const cut = killable(stored, journals.own);
      const quotas = buffered(cut.store, cut.journal);
      const keyId = newKey();
      await consumeTimes(quotas, keyId, 2);
      await waitFor(() => cut.appends() === 1, 2_000, 'one journal write');
      await sleep(20 * FLUSH_MS);
      assert.equal(cut.appends(), 1, 'no journal write without a change');
    });

    test('after a kill, the journal is folded in at the next start: nothing journaled is forgiven', async (t) => {
      if (!opened) return t.skip('server not available');
      const cut = killable(stored, journals.own);
      const quotas = buffered(cut.store, cut.journal);
      const [a, b] = [newKey(), newKey()];
      await stored.raiseMany([{ keyId: b, day: DAY, used: 40 }]);
      await consumeTimes(quotas, a, 7);
      await consumeTimes(quotas, b, 2);
      await waitFor(async () => (await journaled(a)) === 7 && (await journaled(b)) === 42, 2_000, 'the journal to hold 7 and 42');
      cut.kill();
      open.delete(quotas);
      assert.equal(await stored.used(a, DAY), 0, 'killed before its fold');
      // A higher stored count (written by a process after this one's journal) is never lowered.
      const c = newKey();
      await journals.own.append([{ keyId: c, day: DAY, used: 3 }]);
      await stored.raiseMany([{ keyId: c, day: DAY, used: 10 }]);

      // A new process, with journals of its own.
      journals = quotaJournals(opened.database);
      const log = recordingLog();
      const restarted = await openQuotaCounters(stored, journals, { flushMs: FLUSH_MS, replayJournal: true, log, clock });
      open.add(restarted);
      assert.deepEqual(await journalCounts(), [], 'the journal is emptied');
      assert.equal(await stored.used(a, DAY), 7);
      assert.equal(await stored.used(b, DAY), 42);
      assert.equal(await stored.used(c, DAY), 10);
      assert.deepEqual(await restarted.consume(a, DAY, 1_000), { allowed: true, used: 8 }, 'counting continues from the journal');
      await restarted.close?.();
      open.delete(restarted);
      // Replaying again finds nothing.
      assert.equal(await foldLeftovers(stored, journals.leftBehind), 0);
    });

    test('several appends are replayed as the highest count per key and day', async (t) => {
      if (!opened) return t.skip('server not available');
      const [a, b] = [newKey(), newKey()];
      await journals.own.append([{ keyId: a, day: DAY, used: 4 }, { keyId: b, day: '2026-03-05', used: 9 }]);
      await journals.own.append([{ keyId: a, day: DAY, used: 6 }]);
      // Not in order: an append is a snapshot, and the highest count wins whatever its append.
      await journals.own.append([{ keyId: a, day: DAY, used: 5 }, { keyId: b, day: DAY, used: 1 }]);
      assert.equal(await foldLeftovers(stored, journals.leftBehind), 3);
      assert.deepEqual([await stored.used(a, DAY), await stored.used(b, '2026-03-05'), await stored.used(b, DAY)], [6, 9, 1]);
      assert.deepEqual(await journalCounts(), []);
    });

    test('journal ids only grow, also after the journal was emptied', async (t) => {
      if (!opened) return t.skip('server not available');
      const first = await journals.own.append([{ keyId: newKey(), day: DAY, used: 1 }]);
      await journals.own.trim(first);
      assert.deepEqual(await journalCounts(), []);
      const second = await journals.own.append([{ keyId: newKey(), day: DAY, used: 1 }]);
      assert.ok(second > first, `${second} after ${first}`);
      await journals.own.trim(second);
    });

    test('a failed journal write keeps the counters for the next one and warns once, not at every attempt', async (t) => {
      if (!opened) return t.skip('server not available');
      let failures = 2;
      let attempts = 0;
      const failing: QuotaJournal = {
        ...journals.own,
        append: (entries) => {
          attempts += 1;
          if (failures > 0) {
            failures -= 1;
            return Promise.reject(new Error('disk full'));
          }
          return journals.own.append(entries);
        },
      };
      const log = recordingLog();
      const quotas = buffered(stored, failing, log);
      const [a, b] = [newKey(), newKey()];
      await consumeTimes(quotas, a, 3);
      await waitFor(() => attempts === 1, 2_000, 'the first attempt');
      // Counted while the journal is failing: in the same append as the earlier counts.
      await consumeTimes(quotas, b, 2);
      await waitFor(async () => (await journaled(a)) === 3 && (await journaled(b)) === 2, 5_000, 'the journal after two failures');
      assert.equal(attempts, 3);
      assert.deepEqual(log.warnings, ['could not write the quota journal; will retry']);
      await quotas.close?.();
      open.delete(quotas);
      assert.deepEqual([await stored.used(a, DAY), await stored.used(b, DAY)], [3, 2]);
    });

    test('close folds everything in and empties the journal', async (t) => {
      if (!opened) return t.skip('server not available');
      const quotas = buffered(stored);
      const keyId = newKey();
      await consumeTimes(quotas, keyId, 4);
      await waitFor(async () => (await journaled(keyId)) === 4, 2_000, 'the journal to hold 4');
      await consumeTimes(quotas, keyId, 2);
      await quotas.close?.();
      open.delete(quotas);
      assert.equal(await stored.used(keyId, DAY), 6);
      assert.deepEqual(await journalCounts(), []);
      assert.deepEqual(journalFiles(), [], 'no journal file is left behind');
    });

    test('while the store cannot be written, the journal keeps one snapshot of the counts instead of growing', async (t) => {
      if (!opened) return t.skip('server not available');
      let storeDown = true;
      let appended = 0;
      const outage: StoredQuotaCounts = {
        used: (keyId, day) => stored.used(keyId, day),
        raiseMany: (entries) => (storeDown ? Promise.reject(new Error('database is locked')) : stored.raiseMany(entries)),
      };
      const counting: QuotaJournal = {
        ...journals.own,
        append: (entries) => {
          appended += entries.length;
          return journals.own.append(entries);
        },
      };
      const log = recordingLog();
      const quotas = buffered(outage, counting, log);
      const keys = Array.from({ length: 20 }, newKey);
      const until = performance.now() + 3.5 * FOLD_MS;
      let rounds = 0;
      while (performance.now() < until) {
        for (const keyId of keys) await quotas.consume(keyId, DAY, 1_000_000);
        rounds += 1;
        await sleep(FLUSH_MS);
      }
      const latest = async () => (await Promise.all(keys.map((keyId) => journaled(keyId)))).every((count) => count === rounds);
      await waitFor(latest, 2_000, "each key's latest count in the journal");
      const held = await journalCounts();
      t.diagnostic(`${appended} counts appended over ${rounds} rounds, ${held.length} held; files ${journalFiles().length}`);
      assert.ok(log.warnings.includes('could not write quota counters; will retry'), 'the folds failed');
      assert.ok(held.length < appended * 0.6, `the journal holds ${held.length} of the ${appended} counts appended`);
      assert.ok(journalFiles().length <= 3, `${journalFiles().length} journal files`);
      storeDown = false;
      await quotas.close?.();
      open.delete(quotas);
      for (const keyId of keys) assert.equal(await stored.used(keyId, DAY), rounds);
      assert.deepEqual(await journalCounts(), []);
    });

    test("a journal left in the store's table by an earlier version is folded in at start", async (t) => {
      if (!opened) return t.skip('server not available');
      const keyId = newKey();
      await opened.database.db.insertInto('quota_journal').values({ counts: JSON.stringify([[keyId, DAY, 12]]) }).execute();
      const log = recordingLog();
      const restarted = await openQuotaCounters(stored, quotaJournals(opened.database), { flushMs: FLUSH_MS, replayJournal: true, log, clock });
      open.add(restarted);
      assert.equal(await stored.used(keyId, DAY), 12);
      assert.deepEqual(await opened.database.db.selectFrom('quota_journal').select('id').execute(), []);
      await restarted.close?.();
      open.delete(restarted);
    });

    test('an append cut short by an operating system crash is skipped; the others are folded in', async (t) => {
      if (!opened) return t.skip('server not available');
      const file = opened.database.file;
      if (file === undefined) return t.skip("the journal is the store's table here: its appends are transactions");
      const [a, b] = [newKey(), newKey()];
      await journals.own.append([{ keyId: a, day: DAY, used: 5 }]);
      // What a process killed by a crash of the machine may leave: a file whose last line was cut.
      const cut = join(dirname(file), `${basename(file)}-quota-1-${'0'.repeat(12)}-1`);
      writeFileSync(cut, `${JSON.stringify([[a, DAY, 8]])}\n[["${b}","${DAY}",`);
      assert.equal(await foldLeftovers(stored, journals.leftBehind), 1);
      assert.equal(await stored.used(a, DAY), 8);
      assert.equal(await stored.used(b, DAY), 0);
      assert.deepEqual(readdirSync(dirname(file)).filter((name) => name.includes('-quota-')), [], 'every journal file read is deleted');
    });
  });
}
