import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createDnbProvider, DNB_METADATA, dnbQuery, parseDnbCsv, parseStatbankDay } from '../../src/providers/dnb.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recorded = recordingsOf('dnb')[0]!;
const text = recorded.body.toString('utf8');
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const csv = (...lines: string[]) => `VALUTA;KURTYP;TID;INDHOLD\r\n${lines.map((l) => `${l}\r\n`).join('')}`;
/** The recorded lines from `from` (a StatBank day) on, as the service answers `>=from`. */
const answerFrom = (since: string) => {
  const [header, ...lines] = text.split('\r\n').filter((l) => l !== '');
  return `${[header, ...lines.filter((l) => l.split(';')[2]! >= since)].join('\r\n')}\r\n`;
};

describe('Danmarks Nationalbank parser on the recorded StatBank CSV', () => {
  const document = parseDnbCsv(text);

  it('stores kroner per 100 units as the exact reciprocal of kroner per unit, on every recorded day', () => {
    assert.equal(document.provider, 'dnb');
    assert.equal(document.base, 'DKK');
    assert.equal(document.days.length, 269);
    assert.deepEqual([document.days[0]!.day, document.days.at(-1)!.day], ['2025-03-03', '2026-03-31']);
    // Independently: each line read with decimal.js, per 100 units, as kroner per unit.
    let checked = 0;
    for (const line of text.split('\r\n').slice(1)) {
      if (line === '') continue;
      const [code, , tid, value] = line.split(';') as [string, string, string, string];
      const day = `${tid.slice(0, 4)}-${tid.slice(5, 7)}-${tid.slice(8, 10)}`;
      const stored = document.days.find((d) => d.day === day)!.rates[code];
      if (value === '..') {
        assert.equal(stored, undefined, `${code} ${day}`);
        continue;
      }
      assert.ok(stored?.startsWith('1/'), `${code} ${day}`);
      assert.ok(new D(stored!.slice(2)).eq(new D(value).div(100)), `${code} ${day}: ${stored} for ${value} per 100`);
      checked += 1;
    }
    assert.equal(checked, 8_007);
    const july = document.days.find((d) => d.day === '2025-07-08')!.rates;
    assert.equal(july['EUR'], '1/7.460900');
    assert.equal(july['IDR'], '1/0.000391');
    // The lev joined the euro on 1 January 2026: no rate set after it.
    assert.equal(document.days.at(-1)!.rates['BGN'], undefined);
  });

  it('reads the direction and the scale right: within 1% of the ECB\'s crosses on every common day', () => {
    const comparison = compareWithEcb(document, 0.01);
    assert.deepEqual(comparison.far, []);
    assert.ok(comparison.checked > 7_000, `${comparison.checked}`);
    assert.ok(comparison.currencies.has('EUR') && comparison.currencies.has('JPY') && comparison.currencies.has('IDR'));
  });

  it('dates each day at 16:00 Copenhagen time', () => {
    assert.equal(document.days[0]!.asOf, '2025-03-03T15:00:00Z');
    assert.equal(document.days.find((d) => d.day === '2025-07-08')!.asOf, '2025-07-08T14:00:00Z');
  });

  it('reads StatBank days strictly', () => {
    assert.equal(parseStatbankDay('2025M07D08'), '2025-07-08');
    for (const bad of ['2025M7D8', '2025-07-08', '2025M02D30', '2025M07']) assert.equal(parseStatbankDay(bad), null, bad);
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /CSV is empty/],
      ['<html><body>Error</body></html>', /HTML or XML page/],
      ['VALUTA;TID;INDHOLD\r\nEUR;2025M07D08;746.09\r\n', /no KURTYP column/],
      [csv('EUR;KBH;2025-07-08;746.09'), /TID "2025-07-08" is not a day like 2025M07D08/],
      [csv('EUR;KBM;2025M07D08;746.09'), /KURTYP "KBM" is not the daily rate KBH/],
      [csv('DKK;KBH;2025M07D08;100'), /"DKK" is not a foreign currency code/],
      [csv('EUR;KBH;2025M07D08;746,09'), /"746,09" is not a plain decimal/],
      [csv('EUR;KBH;2025M07D08;0.00'), /the rate is zero/],
      [csv('EUR;KBH;2025M07D08;746.09', 'EUR;KBH;2025M07D08;746.10'), /EUR is quoted twice on 2025-07-08/],
      [csv('EUR;KBH;2025M07D08'), /line 2 has 3 fields/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseDnbCsv(body), feedError(pattern), body.slice(0, 100));
  });
});

describe('Danmarks Nationalbank provider against a local StatBank', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url, request) => {
      if (`${url.pathname}${url.search}` !== recorded.pathAndQuery || request.method !== 'POST' || request.headers['content-type'] !== 'application/json') return undefined;
      // StatBank's answer to a query of the recorded shape: the recorded lines from its day on.
      const since = /"Tid","values":\[">=(\d{4}M\d{2}D\d{2})"\]/.exec(request.body)?.[1];
      if (since === undefined || request.body !== dnbQuery(`${since.slice(0, 4)}-${since.slice(5, 7)}-${since.slice(8, 10)}`)) return { status: 400, body: '{"errorTypeCode":"EXTRACT-NOTFOUND"}', contentType: 'application/json' };
      return { body: answerFrom(since), contentType: recorded.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }) =>
    createDnbProvider({ baseUrl: `${server.origin}/`, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 10 });

  it('POSTs the recorded query exactly for the recorded range', async () => {
    server.requests.length = 0;
    server.bodies.length = 0;
    const document = await provider('2026-04-04T10:14:25Z').series({ from: '2025-03-03', to: '2026-04-04' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(server.bodies, [recorded.requestBody]);
    assert.deepEqual(document, parseDnbCsv(text));
  });

  it('latest: the last 10 days asked for, the newest day kept', async () => {
    server.bodies.length = 0;
    const latest = await provider('2026-04-04T10:14:25Z').latest();
    assert.deepEqual(server.bodies, [dnbQuery('2026-03-25')]);
    assert.deepEqual(latest.days, [parseDnbCsv(text).days.at(-1)]);
  });

  it('the first 5-year load is one request from the retention start on, cut to the range', async () => {
    server.bodies.length = 0;
    const clock = clockAt('2026-04-04T10:14:25Z');
    const lines: string[] = [];
    const range = { from: retentionStart(clock, 5), to: '2026-03-10' };
    const document = await provider('2026-04-04T10:14:25Z', { info: (_obj, msg) => lines.push(msg ?? '') }).series(range);
    assert.deepEqual(server.bodies, [dnbQuery(range.from)]);
    assert.equal(document.days.at(-1)!.day, '2026-03-10');
    assert.equal(document.days[0]!.day, '2025-03-03');
    assert.deepEqual(lines, []);
  });

  it('fails on an error answer and when the last 10 days hold nothing', async () => {
    await assert.rejects(createDnbProvider({ baseUrl: `${server.origin}/v2`, timeoutMs: 5_000, clock: clockAt('2026-04-04T10:00:00Z') }).latest(), feedError(/HTTP 404/));
    await assert.rejects(provider('2026-05-20T10:00:00Z').latest(), feedError(/nothing published in the 10 days to 2026-05-20/));
  });

  it('describes itself', () => {
    assert.deepEqual([DNB_METADATA.base, DNB_METADATA.kind], ['DKK', 'central bank']);
    assert.match(DNB_METADATA.schedule, /16:00 Copenhagen time/);
  });
});
