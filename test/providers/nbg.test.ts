import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createNbgProvider, NBG_METADATA, parseNbgRates } from '../../src/providers/nbg.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { recorded as recordedFile } from '../support/central-banks.js';
import { storedValue } from '../support/ecb-check.js';

const recordings = recordingsOf('nbg');
const texts = recordings.map((r) => r.body.toString('utf8'));
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const one = (currency: string) =>
  `[{"date":"2026-03-03T00:00:00.000Z","currencies":[{"code":"USD","quantity":1,"rateFormated":"2.6759","rate":2.6759,"date":"2026-03-02T17:01:08.614Z","validFromDate":"2026-03-03T00:00:00.000Z"},${currency}]}]`;

describe('NBG parser on the recorded answers', () => {
  it('stores lari per quantity units as the exact reciprocal of lari per unit, under the day the rate is valid from', () => {
    const [first, second, third] = texts.map(parseNbgRates);
    // Asked for 2 March (a Monday): the rate set on Friday 27 February, valid from Saturday 28.
    assert.deepEqual(first!.days.map((d) => d.day), ['2026-02-28']);
    // Asked for 3 and 4 March: the rate set on 2 March, valid from 3 March (the 3rd is a holiday in Georgia).
    assert.deepEqual(second!.days.map((d) => d.day), ['2026-03-03']);
    assert.deepEqual(third, second);
    texts.forEach((text, i) => {
      const rates = parseNbgRates(text).days[0]!.rates;
      // Independently: each currency's code, quantity and rate literal, read with decimal.js.
      const found = [...text.matchAll(/"code":"([A-Z]{3})","quantity":(\d+),"rateFormated":"[\d.]+","diffFormated":"[\d.]+","rate":([\d.]+)/g)];
      assert.equal(found.length, 42, recordings[i]!.pathAndQuery);
      assert.equal(Object.keys(rates).length, 42);
      for (const [, code, quantity, rate] of found as unknown as Array<[string, string, string, string]>) {
        assert.ok(new D(rates[code]!.slice(2)).eq(new D(rate).div(quantity)), `${code}: ${rates[code]} for ${rate} per ${quantity}`);
      }
    });
    const rates = first!.days[0]!.rates;
    assert.equal(rates['USD'], `1/${/"code":"USD","quantity":1,"rateFormated":"[\d.]+","diffFormated":"[\d.]+","rate":([\d.]+)/.exec(texts[0]!)![1]!}`);
    assert.equal(rates['AMD'], '1/0.0070960');
    assert.equal(rates['IRR'], '1/0.00000204');
    assert.equal(first!.days[0]!.asOf, '2026-02-28T00:00:00Z');
  });

  it('reads the direction and the quantities right: within 3% of the NBU\'s crosses through the hryvnia', () => {
    // The NBU's recorded hryvnias per unit on the day the NBG's second rate is valid from.
    const nbu = recordedFile('nbu/01.json').toString('utf8');
    const hryvnias = new Map([...nbu.matchAll(/"exchangedate":"03\.03\.2026","r030":\d+,"cc":"([A-Z]{3})".*?"rate_per_unit":([\d.]+)/g)].map((m) => [m[1]!, new D(m[2]!)]));
    const rates = parseNbgRates(texts[1]!).days[0]!.rates;
    let checked = 0;
    for (const [code, text] of Object.entries(rates)) {
      const perHryvnia = code === 'UAH' ? new D(1) : hryvnias.get(code);
      if (!perHryvnia) continue;
      const cross = hryvnias.get('GEL')!.div(perHryvnia);
      assert.ok(storedValue(text).div(cross).minus(1).abs().lt(0.03), `${code}: ${text} vs ${cross.toSignificantDigits(8).toString()}`);
      checked += 1;
    }
    assert.equal(checked, 30);
  });

  it('rejects malformed answers with a clear error', () => {
    const ok = '{"code":"EUR","quantity":1,"rate":3.1581,"validFromDate":"2026-03-03T00:00:00.000Z"}';
    const cases: Array<[string, RegExp]> = [
      ['', /the body is empty/],
      ['<html>Service Unavailable</html>', /HTML or XML page/],
      ['{"message":"error"}', /expected a list of days/],
      ['[{"date":"2026-03-03","currencies":[]}]', /day #0: date is the string "2026-03-03", not a day at midnight/],
      ['[{"date":"2026-03-03T00:00:00.000Z"}]', /currencies is undefined, not a list/],
      [one(ok.replace('"EUR"', '"eur"')), /code is the string "eur"/],
      [one(ok.replace('"EUR"', '"GEL"')), /code is the string "GEL"/],
      [one(ok.replace('2026-03-03T00:00:00.000Z', '2026-03-04T00:00:00.000Z')), /EUR on 2026-03-03 is valid from 2026-03-04T00:00:00.000Z, not from the day it is listed under/],
      [one(ok.replace('3.1581', '"3.1581"')), /EUR on 2026-03-03: rate is the string "3.1581", not a positive number/],
      [one(ok.replace('3.1581', '0')), /rate is the number 0, not a positive number/],
      [one(ok.replace('"quantity":1', '"quantity":"1"')), /quantity is the string "1"/],
      [one(ok.replace('"quantity":1', '"quantity":1.5')), /"1.5" is not a whole number of units/],
      [one(ok.replace('"EUR"', '"USD"')), /USD is quoted twice on 2026-03-03/],
      [texts[0]!.slice(0, 5000), /invalid or truncated JSON/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseNbgRates(body), feedError(pattern), body.slice(0, 100));
    assert.deepEqual(parseNbgRates('[]').days, []);
  });
});

describe('NBG provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url) => {
      const day = url.searchParams.get('date') ?? '';
      if (url.pathname !== '/gw/api/ct/monetarypolicy/currencies/' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
      // The recorded answer of the newest rate valid on that day; before the first, none ('[]').
      const valid = recordings.filter((r) => /"date":"([\d-]+)T/.exec(r.body.toString('utf8'))![1]! <= day).at(-1);
      return { body: valid?.body ?? '[]', contentType: recordings[0]!.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createNbgProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 1 });

  it('latest: the rate valid today, the recorded request', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-04T09:00:00Z').latest();
    assert.deepEqual(server.requests, [recordings[2]!.pathAndQuery]);
    assert.deepEqual(latest.days, parseNbgRates(texts[2]!).days);
  });

  it('a range: the recorded requests, each day keeping only a rate that begins on it', async () => {
    server.requests.length = 0;
    const document = await provider('2026-03-04T09:00:00Z').series({ from: '2026-03-02', to: '2026-03-04' });
    assert.deepEqual(server.requests, recordings.map((r) => r.pathAndQuery));
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-03']);
  });

  it('the first 5-year load: a request per day up to today, in turn, with progress lines', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-03-04T09:00:00Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-03-10' };
    const document = await provider('2026-03-04T09:00:00Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    const asked = server.requests.map((r) => new URL(r, 'http://x').searchParams.get('date')!);
    assert.equal(asked[0], range.from);
    assert.equal(asked.at(-1), '2026-03-04');
    assert.equal(asked.length, (Date.parse('2026-03-04') - Date.parse(range.from)) / 86_400_000 + 1, 'every day, none twice');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-02-28', '2026-03-03']);
    assert.equal(lines[0]!.msg, 'loading history in paced requests');
    assert.deepEqual([lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['nbg', asked.length]);
    assert.equal(lines.at(-1)!.msg, 'history loaded');
  });

  it('fails on an error answer and when no rate is valid today', async () => {
    await assert.rejects(provider('2026-03-04T09:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
    // A day before the first rate the stand-in holds: the API answers an empty list.
    await assert.rejects(provider('2026-02-20T09:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-02-20/));
  });

  it('describes itself', () => {
    assert.deepEqual([NBG_METADATA.base, NBG_METADATA.kind, NBG_METADATA.label], ['GEL', 'central bank', 'NBG']);
    assert.match(NBG_METADATA.schedule, /17:00 Tbilisi time/);
  });
});
