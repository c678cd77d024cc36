import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createRbaProvider, parseRbaCsv, parseRbaDate, RBA_METADATA } from '../../src/providers/rba.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recorded = recordingsOf('rba')[0]!;
const text = recorded.body.toString('utf8');
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const HEAD = ['F11.1  EXCHANGE RATES', 'Title,A$1=USD,Trade-weighted Index May 1970 = 100,A$1=JPY', 'Units,USD,Index,JPY', 'Series ID,FXRUSD,FXRTWI,FXRJY'];
const csv = (...lines: string[]) => `${[...HEAD, ...lines].join('\n')}\n`;

describe('RBA parser on the recorded table F11.1', () => {
  const document = parseRbaCsv(text);

  it('stores every published number as written, units of the currency per Australian dollar', () => {
    assert.equal(document.provider, 'rba');
    assert.equal(document.base, 'AUD');
    // Independently from the bytes: the Units line and each data line after Series ID.
    const lines = text.replace(/^\uFEFF/, '').split('\n');
    const units = lines.find((l) => l.startsWith('Units,'))!.split(',');
    const data = lines.filter((l) => /^\d{2}-[A-Z][a-z]{2}-\d{4},/.test(l));
    assert.equal(data.length, 808);
    assert.equal(document.days.length, 808);
    let checked = 0;
    data.forEach((line, i) => {
      const fields = line.split(',');
      const expected: Record<string, string> = {};
      fields.slice(1).forEach((value, c) => {
        const unit = units[c + 1]!;
        if (value !== '' && unit !== 'Index') expected[unit === 'SDR' ? 'XDR' : unit] = value;
      });
      assert.deepEqual(document.days[i]!.rates, expected, fields[0]);
      checked += Object.keys(expected).length;
    });
    assert.equal(checked, 14_896);
    assert.deepEqual(document.days[0]!.day, '2023-01-03');
    assert.deepEqual(document.days.at(-1)!.day, '2026-03-20');
    const last = document.days.at(-1)!.rates;
    assert.equal(last['USD'], '0.7088');
    assert.equal(last['IDR'], '12039');
    assert.equal(last['XDR'], '0.5217');
    // The trade-weighted index is no currency; the dirham and the rand are no longer published.
    assert.ok(!('Index' in last) && !('TWI' in last) && !('AED' in last) && !('ZAR' in last));
  });

  it('reads the direction right: within 3% of the ECB\'s crosses on every common day', () => {
    const comparison = compareWithEcb(document, 0.03);
    assert.deepEqual(comparison.far, []);
    assert.ok(comparison.checked > 10_000, `${comparison.checked}`);
    for (const code of ['USD', 'JPY', 'GBP', 'CNY', 'INR', 'IDR', 'NZD', 'CHF', 'CAD']) assert.ok(comparison.currencies.has(code), code);
  });

  it('dates each day at 16:00 Sydney time', () => {
    assert.equal(document.days[0]!.asOf, '2023-01-03T05:00:00Z');
    assert.equal(document.days.find((d) => d.day === '2025-07-01')!.asOf, '2025-07-01T06:00:00Z');
  });

  it('reads its dates strictly', () => {
    assert.equal(parseRbaDate('03-Jan-2023'), '2023-01-03');
    for (const bad of ['3-Jan-2023', '03-JAN-2023', '30-Feb-2024', '2023-01-03']) assert.equal(parseRbaDate(bad), null, bad);
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /CSV is empty/],
      ['<html><body>Maintenance</body></html>', /HTML or XML page/],
      ['Title,A$1=USD\nSeries ID,FXRUSD\n03-Jan-2023,0.6828\n', /no Units line/],
      [csv('03-Jan-2023,0.6828,61.40'), /line 5 has 3 fields, the header has 4/],
      [csv('03-Jan-2023,0.6828,61.40,88.48').replace('A$1=JPY', 'JPY per A$'), /\(JPY\) is titled "JPY per A\$", not A\$1=JPY/],
      [csv('03-Jan-2023,0.6828,61.40,88.48').replace('Units,USD,Index,JPY', 'Units,USD,Index,Yen'), /unit "Yen" is not a currency code/],
      [csv('2023-01-03,0.6828,61.40,88.48'), /"2023-01-03" is not a date like "03-Jan-2023"/],
      [csv('03-Jan-2023,0.68 28,61.40,88.48'), /"0.68 28" is not a plain decimal/],
      [csv('03-Jan-2023,0.0000,61.40,88.48'), /the rate is zero/],
      [csv('03-Jan-2023,0.6828,61.40,88.48', '03-Jan-2023,0.6829,61.40,88.48'), /USD is quoted twice on 2023-01-03/],
      [csv('03-Jan-2023,"0.6828",61.40,88.48'), /quotes a field/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseRbaCsv(body), feedError(pattern), body.slice(0, 100));
  });

  it('skips the index and empty cells; the trailing empty lines are no rows', () => {
    const document = parseRbaCsv(`${csv('03-Jan-2023,0.6828,61.40,', '04-Jan-2023,,61.50,')}\n\n\n`);
    assert.deepEqual(document.days, [{ day: '2023-01-03', asOf: '2023-01-03T05:00:00Z', rates: { USD: '0.6828' } }]);
  });
});

describe('RBA provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    // The bank's one file, as recorded, at its path.
    server = await startBankServer((url) => (`${url.pathname}${url.search}` === recorded.pathAndQuery ? { body: recorded.body, contentType: recorded.contentType } : undefined));
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createRbaProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 10 });

  it('latest: the recorded request, the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-22T21:00:00Z').latest();
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(latest.days, [parseRbaCsv(text).days.at(-1)]);
  });

  it('the first 5-year load is one request of the file, cut to the range; it reaches back to 2023', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-03-22T21:00:00Z');
    const lines: string[] = [];
    const range = { from: retentionStart(clock, 5), to: '2026-03-22' };
    const document = await provider('2026-03-22T21:00:00Z', { info: (_obj, msg) => lines.push(msg ?? '') }).series(range);
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.equal(document.days.length, 808);
    assert.deepEqual(lines, [], 'one request is no long load');
    const march = await provider('2026-03-22T21:00:00Z').series({ from: '2026-03-16', to: '2026-03-18' });
    assert.deepEqual(march.days.map((d) => d.day), ['2026-03-16', '2026-03-17', '2026-03-18']);
  });

  it('fails latest when the file holds nothing of the last 8 days, and on an error answer', async () => {
    await assert.rejects(provider('2026-04-15T12:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-04-15/));
    await assert.rejects(provider('2026-03-22T21:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('declares its first day and that its history is one document, for a load of every year', () => {
    const made = provider('2026-03-22T21:00:00Z');
    assert.deepEqual([made.firstDay, made.seriesInOneDocument], ['2023-01-03', true]);
    assert.equal(made.firstDay, parseRbaCsv(text).days[0]!.day);
  });

  it('describes itself', () => {
    assert.deepEqual([RBA_METADATA.base, RBA_METADATA.kind, RBA_METADATA.termsUrl], ['AUD', 'central bank', 'https://www.rba.gov.au/copyright/']);
    assert.match(RBA_METADATA.schedule, /16:00 Sydney time/);
  });
});
