/**
 * What the cross-check costs, on local stand-ins of the default providers serving their recorded
 * documents: a refresh of every provider (each followed by the check, as the refresher runs it);
 * the check alone of every stored day, as a process's first read of the store runs it (the last
 * CURRENT_WITHIN_DAYS days at once, the rest in the background); the check a refresh runs after
 * it, of the days one new document changed; and, as the baseline in the same run, the check of the
 * last CURRENT_WITHIN_DAYS days alone (what the check covered before it covered every stored day,
 * and what a first read now does before it answers). Then the requests answered afterwards, which must not run it again.
 * At five years of ten providers on a SQLite store, a rate book's first read: its first answer,
 * then the check of the older days in the background, how long it took in all, the longest the
 * event loop waited meanwhile (what a request arriving then waits), what it allocated and how
 * often it dropped the cached answers (generation).
 * Printed, never asserted (`node --import tsx bench/cross-check.ts`).
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { crossCheck, parsePercent, type CrossCheck } from '../src/core/cross-check.js';
import type { RateDocument } from '../src/core/ports.js';
import { CURRENT_WITHIN_DAYS, newestDay, type ProviderRates } from '../src/core/rate-index.js';
import { createRateBook } from '../src/core/rates.js';
import { addDays } from '../src/core/time.js';
import { migrateToLatest, openDatabase } from '../src/storage/database.js';
import { createRateStore } from '../src/storage/rate-store.js';
import { tempDir } from '../test/support/stores.js';
import { closeFakeFeeds, createFeedsService } from '../test/support/apps.js';
import { startCentralBankStandIns } from '../test/support/central-banks.js';
import { startFakeUpstreams } from '../test/support/upstreams.js';
import { heldRates, rebasedDocuments } from '../test/support/rebased.js';

const PROVIDERS = 'ecb,nbu,nbp,cnb,boc,norgesbank,riksbank,boe,boi,bancaditalia';
const RUNS = 50;

/** Stand-in days on which most recordings overlap: February (ECB, CNB, Banca d'Italia's whole day) and March (ECB, NBU, NBP, CNB, Bank of Israel). */
const SCENARIOS = [
  { name: 'February', ecbThrough: '2026-02-11', today: '2026-02-12', now: '2026-02-12T18:00:00Z', pairs: [['USD', 'AFN'], ['GBP', 'NGN'], ['JPY', 'CZK'], ['XDR', 'CHF']] },
  { name: 'March', ecbThrough: '2026-03-05', today: '2026-03-06', now: '2026-03-06T18:00:00Z', pairs: [['USD', 'UAH'], ['GBP', 'PLN'], ['JPY', 'CZK'], ['ILS', 'KZT']] },
] as const;

const ms = (start: number) => performance.now() - start;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** The three checks of one state of the providers' numbers, each the median of `runs`. */
function measureChecks(data: readonly ProviderRates[], runs: number) {
  const percent = parsePercent('2');
  const timed = (run: () => CrossCheck): { ms: number; check: CrossCheck } => {
    const times: number[] = [];
    let check!: CrossCheck;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      check = run();
      times.push(ms(t));
    }
    return { ms: median(times), check };
  };
  const whole = timed(() => crossCheck(data, percent));
  const newest = data.map(newestDay).filter((d) => d !== undefined).sort().at(-1)!;
  const recentDays = Array.from({ length: CURRENT_WITHIN_DAYS + 1 }, (_, i) => addDays(newest, -i));
  const empty = crossCheck([], percent);
  const baseline = timed(() => crossCheck(data, percent, { previous: empty, changed: recentDays }));
  // A refresh that brings the newest day: that day and the four after it are checked again.
  const refreshed = timed(() => crossCheck(data, percent, { previous: whole.check, changed: [newest] }));
  return (
    `the check of every stored day (${whole.check.days.size} days) ${whole.ms.toFixed(2)} ms, ${whole.check.findings.length} findings; ` +
    `baseline, the last ${CURRENT_WITHIN_DAYS} days alone, ${baseline.ms.toFixed(2)} ms (${(whole.ms / baseline.ms).toFixed(1)}×); ` +
    `after a refresh of the newest day ${refreshed.ms.toFixed(2)} ms (medians of ${runs})`
  );
}

for (const scenario of SCENARIOS) {
  const fake = await startFakeUpstreams();
  fake.ecb.historyThrough = scenario.ecbThrough;
  const banks = await startCentralBankStandIns(scenario.today);
  const service = await createFeedsService(fake, { env: { ...banks.env(), EXRATES_PROVIDERS: PROVIDERS, EXRATES_NOW: scenario.now } });
  try {
    const book = service.deps.book;
    const started = performance.now();
    await service.deps.refresher.refreshAll();
    const refresh = ms(started);
    const { data } = await book.snapshot();
    const numbers = [...data.values()].reduce((sum, d) => sum + [...d.series.values()].reduce((n, s) => n + s.days.length, 0), 0);
    const checks = measureChecks([...data.values()], RUNS);
    // Requests after the refresh (each pair asked once first: a first request may load a
    // currency's history, which is new data and is checked): the check held by the book is the
    // same object before and after.
    const pairs = scenario.pairs;
    for (const [from, to] of pairs) await book.liveRate(from, to);
    const before = await book.crossCheck();
    const t = performance.now();
    for (let i = 0; i < 2000; i++) {
      const [from, to] = pairs[i % pairs.length]!;
      await book.liveRate(from, to);
    }
    const requests = ms(t);
    const after = await book.crossCheck();
    console.log(
      `${scenario.name}: ${data.size} providers holding ${numbers} numbers; refreshAll (each refresh followed by the check) ${refresh.toFixed(0)} ms; ` +
        `${checks}; ` +
        `2000 live requests ${requests.toFixed(0)} ms, the check run again by them: ${before.findings !== after.findings ? 'yes' : 'no'}`,
    );
  } finally {
    await service.close();
    await banks.close();
    await closeFakeFeeds(fake);
  }
}

/**
 * At the size of every bank holding five years: ten providers, each the ECB's five years of
 * numbers re-expressed against another base (10 significant digits), so that each number has nine
 * comparators on every day.
 */
{
  const documents = rebasedDocuments(['USD', 'JPY', 'GBP', 'CHF', 'CZK', 'PLN', 'SEK', 'NOK', 'CAD', 'AUD'], '2021-03-05');
  const data = documents.map(heldRates);
  const numbers = data.reduce((sum, d) => sum + [...d.series.values()].reduce((n, s) => n + s.days.length, 0), 0);
  console.log(`Five years, ten providers: ${numbers} numbers; ${measureChecks(data, 5)}`);
  console.log(`Five years, ten providers, a first read: ${await firstRead(documents)}`);
}

/** Bytes allocated since the process began, where the runtime counts them (recent Node.js); undefined elsewhere. */
function allocatedBytes(): number | undefined {
  return (getHeapStatistics() as { total_allocated_bytes?: number }).total_allocated_bytes;
}

/**
 * A rate book's first read of `documents` from a SQLite store: the first answer (the recent days
 * checked at once), then the older days checked in the background until the whole check is
 * there, with the event loop's delays meanwhile (a 1 ms timer's lateness: what a request arriving
 * then waits for the check).
 */
async function firstRead(documents: readonly RateDocument[]): Promise<string> {
  const dir = tempDir('exrates-bench-');
  const database = await openDatabase(`sqlite:${join(dir.path, 'five-years.db')}`);
  try {
    await migrateToLatest(database.db);
    const store = createRateStore(database.db);
    for (const document of documents) await store.saveDocument(document);
    const newest = documents[0]!.days.at(-1)!.day;
    const book = createRateBook({ store, providers: documents.map((d) => d.provider), clock: { now: () => new Date(`${addDays(newest, 1)}T12:00:00Z`) } });
    const started = performance.now();
    await book.liveRate('USD', 'JPY');
    const first = ms(started);
    const delays = monitorEventLoopDelay({ resolution: 1 });
    delays.enable();
    const generation = book.generation();
    const allocated = allocatedBytes();
    const background = performance.now();
    const check = await book.crossCheck();
    const total = ms(background);
    delays.disable();
    const after = allocatedBytes();
    return (
      `first answer ${first.toFixed(0)} ms; the background check of the other days (${check.days.size} days checked in all, ${check.findings.length} findings) ` +
      `${total.toFixed(0)} ms, the event loop waiting at most ${(delays.max / 1e6).toFixed(1)} ms (99th percentile ${(delays.percentile(99) / 1e6).toFixed(1)} ms, ` +
      `mean ${(delays.mean / 1e6).toFixed(1)} ms), ${after === undefined || allocated === undefined ? '' : `${((after - allocated) / 1e6).toFixed(0)} MB allocated meanwhile, `}cached answers dropped ${book.generation() - generation} times`
    );
  } finally {
    await database.close();
    dir.remove();
  }
}
