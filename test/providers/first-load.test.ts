/**
 * The first history load of the banks answered by a range query (Bank of Canada, Norges Bank, the
 * Riksbank, the Bank of England, the Bank of Israel): the retained 5 years and a month are asked
 * in consecutive spans of at most a year, one after another with a pause, with progress lines as
 * Banca d'Italia's and the NBP's loads; a refresh of the last week stays one request. Against the
 * local stand-ins, which log every request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock, Provider } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createBocProvider } from '../../src/providers/boc.js';
import { createBoeProvider } from '../../src/providers/boe.js';
import { createBoiProvider } from '../../src/providers/boi.js';
import { createNorgesBankProvider } from '../../src/providers/norgesbank.js';
import { createRiksbankProvider } from '../../src/providers/riksbank.js';
import { startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';

const TODAY = '2026-03-25';
const clock: Clock = { now: () => new Date(`${TODAY}T22:00:00Z`) };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const fromBoe = (text: string) => {
  const [d, m, y] = text.split('/') as [string, string, string];
  return `${y}-${String(MONTHS.indexOf(m) + 1).padStart(2, '0')}-${d.padStart(2, '0')}`;
};

/** The range each bank's request asked for, read from its documented query. */
const asked: Record<string, (url: URL) => [string, string]> = {
  boc: (url) => [url.searchParams.get('start_date')!, url.searchParams.get('end_date')!],
  norgesbank: (url) => [url.searchParams.get('startPeriod')!, url.searchParams.get('endPeriod')!],
  riksbank: (url) => url.pathname.split('/').slice(-2) as [string, string],
  boe: (url) => [fromBoe(url.searchParams.get('Datefrom')!), fromBoe(url.searchParams.get('Dateto')!)],
  boi: (url) => [url.searchParams.get('startperiod')!, url.searchParams.get('endperiod')!],
};
const dayMs = 86_400_000;
const days = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / dayMs + 1;

describe('the first history load of the range-query banks, in paced spans of at most a year', () => {
  let banks: CentralBankStandIns;
  before(async () => {
    banks = await startCentralBankStandIns(TODAY);
  });
  after(() => banks.close());

  const PACE_MS = 40;
  const cases: Array<[keyof typeof asked & keyof CentralBankStandIns['requests'], (log: { info(obj: object, msg?: string): void }) => Provider]> = [
    ['boc', (log) => createBocProvider({ baseUrl: banks.boc.origin, timeoutMs: 5000, clock, log, paceMs: PACE_MS })],
    ['norgesbank', (log) => createNorgesBankProvider({ baseUrl: banks.norgesbank.origin, timeoutMs: 5000, clock, log, paceMs: PACE_MS })],
    ['riksbank', (log) => createRiksbankProvider({ baseUrl: banks.riksbank.origin, timeoutMs: 5000, clock, log, paceMs: PACE_MS })],
    ['boe', (log) => createBoeProvider({ baseUrl: banks.boe.origin, timeoutMs: 5000, clock, log, paceMs: PACE_MS })],
    ['boi', (log) => createBoiProvider({ baseUrl: banks.boi.origin, timeoutMs: 5000, clock, log, paceMs: PACE_MS })],
  ];

  for (const [bank, create] of cases) {
    it(`${bank}: six requests of consecutive spans from the retention start to today, in turn, logged as a paced load`, async () => {
      const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
      const provider = create({ info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) });
      const range = { from: retentionStart(clock, 5), to: TODAY };
      assert.equal(range.from, '2021-02-25');
      const start = banks.requests[bank].length;
      const began = Date.now();
      const document = await provider.series(range);
      const elapsed = Date.now() - began;
      const spans = banks.requests[bank].slice(start).map(asked[bank]!);
      // 2021-02-25 to 2026-03-25 is 1,855 days: five spans of 366 and one of 25.
      assert.deepEqual(
        spans.map(([from, to]) => days(from, to)),
        [366, 366, 366, 366, 366, 25],
      );
      assert.equal(spans[0]![0], range.from);
      assert.equal(spans.at(-1)![1], TODAY);
      for (let i = 1; i < spans.length; i++) assert.equal(Date.parse(spans[i]![0]) - Date.parse(spans[i - 1]![1]), dayMs, `span ${i} follows span ${i - 1}`);
      // Five pauses between six requests.
      assert.ok(elapsed >= 5 * PACE_MS, `took ${elapsed} ms`);
      assert.ok(document.days.length > 0 && document.days.every((d) => d.day >= range.from && d.day <= range.to));
      assert.deepEqual(
        lines.map((l) => l.msg).filter((m) => m !== 'still loading history'),
        ['loading history in paced requests', 'history loaded'],
      );
      assert.equal(lines[0]!.obj['provider'], bank);
      assert.equal(lines[0]!.obj['requests'], 6);
    });
  }

  it('a refresh of the last week is still one request, and logs nothing', async () => {
    for (const [bank, create] of cases) {
      const lines: unknown[] = [];
      const start = banks.requests[bank].length;
      await create({ info: (obj) => lines.push(obj) }).series({ from: '2026-03-18', to: TODAY });
      assert.equal(banks.requests[bank].length - start, 1, bank);
      assert.deepEqual(lines, [], bank);
    }
  });
});
