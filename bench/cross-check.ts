/**
 * What the cross-check costs, on local stand-ins of the default providers serving their recorded
 * documents: a refresh of every provider (each followed by the check, as the refresher runs it),
 * the check alone on what is then held, and the requests answered afterwards, which must not run
 * it again. Printed, never asserted (`node --import tsx bench/cross-check.ts`).
 */
import { crossCheck, parsePercent } from '../src/core/cross-check.js';
import { closeFakeFeeds, createFeedsService } from '../test/support/apps.js';
import { startCentralBankStandIns } from '../test/support/central-banks.js';
import { startFakeUpstreams } from '../test/support/upstreams.js';

const PROVIDERS = 'ecb,nbu,nbp,cnb,boc,norgesbank,riksbank,boe,boi,bancaditalia';
const RUNS = 50;

/** Stand-in days on which most recordings overlap: February (ECB, CNB, Banca d'Italia's whole day) and March (ECB, NBU, NBP, CNB, Bank of Israel). */
const SCENARIOS = [
  { name: 'February', ecbThrough: '2026-02-11', today: '2026-02-12', now: '2026-02-12T18:00:00Z', pairs: [['USD', 'AFN'], ['GBP', 'NGN'], ['JPY', 'CZK'], ['XDR', 'CHF']] },
  { name: 'March', ecbThrough: '2026-03-05', today: '2026-03-06', now: '2026-03-06T18:00:00Z', pairs: [['USD', 'UAH'], ['GBP', 'PLN'], ['JPY', 'CZK'], ['ILS', 'KZT']] },
] as const;

const ms = (start: number) => performance.now() - start;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

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
    const percent = parsePercent('2');
    const times: number[] = [];
    let findings = 0;
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      findings = crossCheck(data.values(), percent).findings.length;
      times.push(ms(t));
    }
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
        `the check alone ${median(times).toFixed(2)} ms (median of ${RUNS}), ${findings} findings; ` +
        `2000 live requests ${requests.toFixed(0)} ms, the check run again by them: ${before.findings !== after.findings ? 'yes' : 'no'}`,
    );
  } finally {
    await service.close();
    await banks.close();
    await closeFakeFeeds(fake);
  }
}
