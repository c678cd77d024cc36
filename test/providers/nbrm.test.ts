import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createNbrmProvider, NBRM_METADATA, parseNbrmRates } from '../../src/providers/nbrm.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recordings = recordingsOf('nbrm');
const texts = recordings.map((r) => r.body.toString('utf8'));
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const row = (fields: string) => `[{"rBr":39,"datum":"2026-03-02T00:00:00","valuta":"978","oznaka":"EUR","nomin":1,"sreden":61.6948,"datum_f":"2026-02-27T00:00:00",${fields}}]`;
/** The top-level objects of a recorded list, as written. */
const rowsOf = (text: string) => text.slice(1, -1).split(/(?<=\}),(?=\{)/);
const dayOfRow = (raw: string) => /"datum":"([\d-]+)T/.exec(raw)![1]!;

describe('NBRM parser on the recorded lists', () => {
  const document = parseNbrmRates(texts[0]!);

  it('stores denars per nomin units as the exact reciprocal, for every calendar day under the day it holds', () => {
    assert.equal(document.base, 'MKD');
    assert.equal(document.days.length, 90);
    assert.deepEqual([document.days[0]!.day, document.days.at(-1)!.day], ['2026-03-01', '2026-05-29']);
    let checked = 0;
    for (const raw of rowsOf(texts[0]!)) {
      const [, code, nomin, middle] = /"oznaka":"([A-Z]{3})".*?"nomin":(\d+),"sreden":([\d.]+)/.exec(raw)!;
      const stored = document.days.find((d) => d.day === dayOfRow(raw))!.rates[code!]!;
      assert.ok(new D(stored.slice(2)).eq(new D(middle!).div(nomin!)), `${code} ${dayOfRow(raw)}`);
      checked += 1;
    }
    assert.equal(checked, 2790);
    const sunday = document.days[0]!;
    assert.deepEqual([sunday.day, sunday.asOf, sunday.rates['EUR'], sunday.rates['IDR']], ['2026-03-01', '2026-03-01T00:00:00Z', '1/61.6948', '1/0.0031']);
    assert.deepEqual(parseNbrmRates(texts[1]!).days.map((d) => [d.day, Object.keys(d.rates).length]), [['2026-05-30', 31]]);
  });

  it('reads the direction right: within 3% of the ECB\'s crosses through the bank\'s own euro on the common days', () => {
    const comparison = compareWithEcb(document, 0.03);
    assert.deepEqual(comparison.far, []);
    assert.equal(comparison.checked, 112);
  });

  it('rejects malformed lists with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /the body is empty/],
      ['<!DOCTYPE html><html>', /HTML or XML page/],
      ['{"d":[]}', /expected a list of rates/],
      [row('"x":0').replace('2026-03-02T00:00:00', '02.03.2026'), /rate #0: datum is the string "02.03.2026", not a day/],
      [row('"x":0').replace('"EUR"', '"Euro"'), /oznaka is the string "Euro"/],
      [row('"x":0').replace('2026-02-27T00:00:00', '2026-03-03T00:00:00'), /EUR on 2026-03-02 is fixed on 2026-03-03T00:00:00, after the day it holds/],
      [row('"x":0').replace('61.6948', '"61,6948"'), /sreden is the string "61,6948", not a positive number/],
      [row('"x":0').replace('"nomin":1', '"nomin":"1"'), /nomin is the string "1"/],
      [`[${rowsOf(row('"x":0'))[0]!},${rowsOf(row('"x":0'))[0]!}]`, /EUR is quoted twice on 2026-03-02/],
      [texts[0]!.slice(0, 20_000), /invalid or truncated JSON/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseNbrmRates(body), feedError(pattern), body.slice(0, 100));
    assert.deepEqual(parseNbrmRates('[]').days, []);
  });
});

describe('NBRM provider against a local stand-in', () => {
  const rows = texts.flatMap(rowsOf);
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url) => {
      const exact = recordings.find((r) => r.pathAndQuery === `${url.pathname}${url.search}`);
      if (exact) return { body: exact.body, contentType: exact.contentType };
      const q = url.searchParams;
      const undot = (text: string | null) => (text && /^\d{2}\.\d{2}\.\d{4}$/.test(text) ? `${text.slice(6)}-${text.slice(3, 5)}-${text.slice(0, 2)}` : undefined);
      const from = undot(q.get('StartDate'));
      const to = undot(q.get('EndDate'));
      if (url.pathname !== '/KLServiceNOV/GetExchangeRate' || q.get('format') !== 'json' || !from || !to) return undefined;
      // The service's list for the range: the recorded rows within it, as written.
      return { body: `[${rows.filter((r) => dayOfRow(r) >= from && dayOfRow(r) <= to).join(',')}]`, contentType: recordings[0]!.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createNbrmProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 1 });

  it('a range: the recorded request exactly', async () => {
    server.requests.length = 0;
    const document = await provider('2026-05-30T13:57:03Z').series({ from: '2026-03-01', to: '2026-05-29' });
    assert.deepEqual(server.requests, [recordings[0]!.pathAndQuery]);
    assert.deepEqual(document, parseNbrmRates(texts[0]!));
  });

  it('latest: the last week asked for, the newest day not after today kept', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-05-30T13:57:03Z').latest();
    assert.deepEqual(server.requests, ['/KLServiceNOV/GetExchangeRate?EndDate=30.05.2026&StartDate=23.05.2026&format=json']);
    assert.deepEqual(latest.days, parseNbrmRates(texts[1]!).days);
  });

  it('the first 5-year load: quarters up to today, in turn, logged as a paced load', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-05-30T13:57:03Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-06-10' };
    const document = await provider('2026-05-30T13:57:03Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    assert.equal(server.requests.length, Math.ceil(((Date.parse('2026-05-30') - Date.parse(range.from)) / 86_400_000 + 1) / 92));
    assert.match(server.requests.at(-1)!, /EndDate=30\.05\.2026/);
    assert.equal(document.days.length, 91);
    assert.deepEqual([lines[0]!.msg, lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['loading history in paced requests', 'nbrm', server.requests.length]);
    assert.equal(lines.at(-1)!.msg, 'history loaded');
  });

  it('fails on an error answer', async () => {
    await assert.rejects(provider('2026-05-30T13:57:03Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    assert.deepEqual([NBRM_METADATA.base, NBRM_METADATA.kind, NBRM_METADATA.label], ['MKD', 'central bank', 'NBRM']);
  });
});
