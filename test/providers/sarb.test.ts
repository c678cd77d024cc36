import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { parseBnrXml } from '../../src/providers/bnr.js';
import { createSarbProvider, mergeSarbSeries, parseSarbSeries, SARB_METADATA, SARB_SERIES } from '../../src/providers/sarb.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { storedValue } from '../support/ecb-check.js';

const recordings = recordingsOf('sarb');
/** Each recording's series code, from its request. */
const codeOf = (pathAndQuery: string) => pathAndQuery.split('/').at(-3)!;
const texts = new Map(recordings.map((r) => [codeOf(r.pathAndQuery), r.body.toString('utf8')]));
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const observation = (name: string, value: string, period = '2026-03-27T00:00:00') => `[{"Period":"${period}","Timeseries":"${name}","Description":"x","Value":${value},"FormatNumber":"0.0000","FormatDate":"yyyy-MM-dd"}]`;

describe('SARB parser on the recorded series', () => {
  const merged = mergeSarbSeries([...texts].map(([code, text]) => parseSarbSeries(text, code)));

  it('stores the rand per dollar, pound and euro as the reciprocal, and the other series as published', () => {
    assert.equal(texts.size, 23);
    assert.deepEqual(Object.keys(SARB_SERIES).sort(), [...texts.keys()].sort());
    assert.equal(merged.base, 'ZAR');
    assert.deepEqual(merged.days.map((d) => d.day), ['2026-03-24', '2026-03-25', '2026-03-26', '2026-03-27']);
    let checked = 0;
    for (const [code, text] of texts) {
      // Independently: each observation's period, name and value literal.
      for (const m of text.matchAll(/"Period":"(\d{4}-\d{2}-\d{2})T00:00:00","Timeseries":"([^"]+)","Description":"[^"]*","Value":([\d.]+)/g)) {
        const [, day, name, value] = m as unknown as [string, string, string, string];
        const stored = merged.days.find((d) => d.day === day)!.rates[SARB_SERIES[code]!.currency];
        assert.equal(stored, name.startsWith('Rand per ') ? `1/${value}` : value, `${code} ${day} ${name}`);
        checked += 1;
      }
    }
    assert.equal(checked, 92);
    const last = merged.days.at(-1)!.rates;
    assert.equal(last['USD'], '1/17.1302');
    assert.equal(last['EUR'], '1/19.7408');
    assert.equal(last['JPY'], '9.3324');
    assert.equal(last['KES'], '7.5890');
    assert.equal(merged.days.at(-1)!.asOf, '2026-03-27T08:30:00Z');
  });

  it('reads each direction right: within 3% of the BNR\'s crosses through the dollar', () => {
    const lei = parseBnrXml(recordingsOf('bnr')[0]!.body.toString('utf8'));
    let checked = 0;
    for (const day of merged.days) {
      const bnr = lei.days.find((d) => d.day === day.day)!.rates;
      for (const [code, stored] of Object.entries(day.rates)) {
        if (bnr[code] === undefined || code === 'USD') continue;
        // Units of the currency per dollar, by each bank.
        const bySarb = storedValue(stored).div(storedValue(day.rates['USD']!));
        const byBnr = storedValue(bnr[code]!).div(storedValue(bnr['USD']!));
        assert.ok(bySarb.div(byBnr).minus(1).abs().lt(0.03), `${day.day} ${code}: ${bySarb.toSignificantDigits(6).toString()} vs ${byBnr.toSignificantDigits(6).toString()}`);
        checked += 1;
      }
    }
    assert.ok(checked >= 60, `${checked}`);
    // Dollars per euro from the two rand series: near 1.15 in late March 2026.
    assert.ok(new D(storedValue(merged.days[0]!.rates['USD']!)).div(storedValue(merged.days[0]!.rates['EUR']!)).minus('1.15').abs().lt('0.05'));
  });

  it('rejects malformed answers with a clear error', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['', 'EXCX135D', /the body is empty/],
      ['<html>Error</html>', 'EXCX135D', /HTML or XML page/],
      ['[]', 'EXCX999D', /"EXCX999D" is not a series read here/],
      ['{"Message":"An error has occurred."}', 'EXCX135D', /expected a list of observations/],
      [observation('Rand per US Dollar', '17.1302', '27/03/2026'), 'EXCX135D', /Period is the string "27\/03\/2026"/],
      [observation('US Dollar per Rand', '0.0584'), 'EXCX135D', /the series is named the string "US Dollar per Rand", not "Rand per …"/],
      [observation('Rand per Yen', '0.1072'), 'EXCB120D', /the series is named the string "Rand per Yen", not "… per Rand"/],
      [observation('Rand per US Dollar', '"17.1302"'), 'EXCX135D', /Value is the string "17.1302", not a positive number/],
      [observation('Rand per US Dollar', '0'), 'EXCX135D', /Value is the number 0/],
      [observation('Rand per US Dollar', 'null'), 'EXCX135D', /Value is null/],
    ];
    for (const [body, code, pattern] of cases) assert.throws(() => parseSarbSeries(body, code), feedError(pattern), body.slice(0, 100));
    assert.deepEqual(parseSarbSeries('[]', 'EXCX135D').days, []);
  });
});

describe('SARB provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url) => {
      const m = /^\/SarbWebApi\/WebIndicators\/Shared\/GetTimeseriesObservations\/([A-Z0-9]+)\/(\d{4}-\d{2}-\d{2})T00:00:00\/(\d{4}-\d{2}-\d{2})T00:00:00$/.exec(url.pathname);
      const text = m ? texts.get(m[1]!) : undefined;
      if (!m || text === undefined) return undefined;
      // The bank's answer for the range: the recorded observations within it, as written.
      const kept = [...text.matchAll(/\{"Period":"(\d{4}-\d{2}-\d{2})T[^}]*\}/g)].filter((o) => o[1]! >= m[2]! && o[1]! <= m[3]!).map((o) => o[0]);
      return { body: `[${kept.join(',')}]`, contentType: recordings[0]!.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createSarbProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 1 });

  it('a range: the recorded requests exactly, one per series in turn, as one document', async () => {
    server.requests.length = 0;
    const document = await provider('2026-04-05T00:34:09Z').series({ from: '2026-03-23', to: '2026-03-27' });
    assert.deepEqual(server.requests, recordings.map((r) => r.pathAndQuery));
    assert.deepEqual(document, mergeSarbSeries([...texts].map(([code, text]) => parseSarbSeries(text, code))));
  });

  it('latest: the last 8 days of each series, the newest day kept', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-29T12:00:00Z').latest();
    assert.equal(server.requests.length, 23);
    assert.ok(server.requests.every((r) => r.endsWith('/2026-03-21T00:00:00/2026-03-29T00:00:00')));
    assert.deepEqual(latest.days.map((d) => [d.day, Object.keys(d.rates).length]), [['2026-03-27', 23]]);
  });

  it('the first 5-year load: six spans of at most a year, each a request per series, logged as a paced load', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-03-29T12:00:00Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-03-29' };
    const document = await provider('2026-03-29T12:00:00Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    assert.equal(server.requests.length, 6 * 23);
    const spans = [...new Set(server.requests.map((r) => r.split('/').slice(-2).join('/')))];
    assert.equal(spans.length, 6);
    assert.equal(spans[0]!.slice(0, 10), range.from);
    assert.equal(spans.at(-1)!.slice(-19, -9), '2026-03-29');
    assert.equal(document.days.length, 4);
    assert.deepEqual(lines.map((l) => l.msg).filter((m) => m !== 'still loading history'), ['loading history in paced requests', 'history loaded']);
    assert.deepEqual([lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['sarb', 6]);
  });

  it('fails on an error answer', async () => {
    await assert.rejects(provider('2026-03-29T12:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    assert.deepEqual([SARB_METADATA.base, SARB_METADATA.kind, SARB_METADATA.label], ['ZAR', 'central bank', 'SARB']);
    assert.match(SARB_METADATA.schedule, /10:30 Johannesburg time/);
  });
});
