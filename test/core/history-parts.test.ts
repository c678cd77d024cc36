/**
 * A history deeper than five years loads in parts, newest first, each stored as it comes: a load
 * cut short keeps its parts, and the next start continues before the oldest stored day and says
 * so; a history that reaches back far enough is left alone. On a real SQLite store, against the
 * Frankfurter stand-in (its v2 API on loopback), which logs every request.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import type { Clock, Provider, RateStore } from '../../src/core/ports.js';
import { syncProvider, type Logger } from '../../src/core/refresh.js';
import { createFrankfurterProvider } from '../../src/providers/frankfurter.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { tempDir } from '../helper.js';
import { FRANKFURTER_LATEST, frankfurterRate, startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';

const clock: Clock = { now: () => new Date('2026-02-12T12:00:00Z') };
/** Twelve years and the month of margin before 2026-02-12. */
const START = '2014-01-12';

function recordingLogger(): Logger & { messages: string[] } {
  const messages: string[] = [];
  const push = (_obj: object, msg?: string) => void messages.push(msg ?? '');
  return { messages, info: push, warn: push, error: push };
}

/** The provider until its `calls`-th series request, which fails as a load cut short by a stop would. */
function cutAt(provider: Provider, calls: number): Provider {
  let made = 0;
  return {
    ...provider,
    series: (range, options) => (++made >= calls ? Promise.reject(new FeedError('frankfurter: the load was stopped')) : provider.series(range, options)),
  };
}

describe('a twelve-year history in five-year parts', () => {
  let fake: FakeUpstreams;
  let database: OpenDatabase;
  let store: RateStore;
  const dir = tempDir('exrates-parts-');
  let frankfurter: Provider;
  /** The ranges of the series requests made since `from` (index into the stand-in's log), in order. */
  const seriesAsked = (from: number) =>
    fake.requests
      .slice(from)
      .filter((url) => url.pathname === '/frankfurter/v2/rates' && url.searchParams.has('from'))
      .map((url) => `${url.searchParams.get('from')}..${url.searchParams.get('to')}`);

  before(async () => {
    fake = await startFakeUpstreams();
    database = await openDatabase(`sqlite:${join(dir.path, 'parts.db')}`);
    await migrateToLatest(database.db);
    store = createRateStore(database.db);
    frankfurter = createFrankfurterProvider({ baseUrl: `${fake.frankfurter.url}`, timeoutMs: 5000, clock });
  });
  after(async () => {
    await database?.close();
    await fake?.close();
    dir.remove();
  });

  it('stores the newest part first; cut at the second, it keeps the first', async () => {
    const log = recordingLogger();
    const mark = fake.requests.length;
    const outcome = await syncProvider(cutAt(frankfurter, 2), store, clock, log, { currencies: ['KES'], years: 12 });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error!, /the load was stopped/);
    assert.deepEqual(seriesAsked(mark), ['2021-01-12..2026-02-12']);
    assert.equal(await store.latestDay('frankfurter'), FRANKFURTER_LATEST);
    assert.equal(await store.oldestDay('frankfurter'), '2021-01-12');
  });

  it('the next start continues before the oldest stored day, back to the retention start, and the log says so', async () => {
    const log = recordingLogger();
    const mark = fake.requests.length;
    const outcome = await syncProvider(frankfurter, store, clock, log, { currencies: ['KES'], years: 12, deepen: true });
    assert.equal(outcome.ok, true, outcome.error);
    assert.ok(log.messages.includes(`history of frankfurter stored from 2021-01-12: continuing the load back to ${START}`), log.messages.join(' | '));
    // Only what was missing, newest part first; the stored part is not asked for again.
    assert.deepEqual(seriesAsked(mark), ['2015-12-11..2021-01-11', `${START}..2015-12-10`]);
    // 2014-01-12 is a Sunday: the first weekday after it.
    assert.equal(await store.oldestDay('frankfurter'), '2014-01-13');
    const quotes = await store.allQuotes('frankfurter', { from: '2014-01-01', to: '2026-12-31' });
    const weekdays = quotes.map((q) => q.day);
    assert.equal(new Set(weekdays).size, weekdays.length, 'each day once');
    for (const quote of quotes) assert.equal(quote.rate, frankfurterRate('KES', quote.day), quote.day);
    assert.equal(outcome.latestDay, FRANKFURTER_LATEST);
  });

  it('a history that reaches the retention start is left alone at the next start', async () => {
    const log = recordingLogger();
    const mark = fake.requests.length;
    const outcome = await syncProvider(frankfurter, store, clock, log, { currencies: ['KES'], years: 12, deepen: true });
    assert.equal(outcome.ok, true, outcome.error);
    assert.deepEqual(seriesAsked(mark), []);
    assert.ok(!log.messages.some((m) => m.includes('continuing the load')), log.messages.join(' | '));
  });

  it('with the default five years, a first load is the one request it always was', async () => {
    const other = await openDatabase(`sqlite:${join(dir.path, 'five.db')}`);
    try {
      await migrateToLatest(other.db);
      const mark = fake.requests.length;
      const outcome = await syncProvider(frankfurter, createRateStore(other.db), clock, recordingLogger(), { currencies: ['NGN'] });
      assert.equal(outcome.ok, true, outcome.error);
      assert.deepEqual(seriesAsked(mark), ['2021-01-12..2026-02-12']);
    } finally {
      await other.close();
    }
  });
});
