import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { createMnbProvider, MNB_METADATA, mnbRequest, parseMnbResponse } from '../../src/providers/mnb.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recorded = recordingsOf('mnb')[0]!;
const text = recorded.body.toString('utf8');
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
// The recorded answer cut into its frame and its (escaped) days, as text: no value rewritten.
const FIRST_DAY = text.indexOf('&lt;Day ');
const HEAD = text.slice(0, FIRST_DAY);
const TAIL = text.slice(text.lastIndexOf('&lt;/Day&gt;') + '&lt;/Day&gt;'.length);
const DAYS = text.slice(FIRST_DAY, text.length - TAIL.length).split(/(?=&lt;Day )/);
const dayOf = (day: string) => /&lt;Day date="([\d-]+)"/.exec(day)![1]!;
const withDays = (...days: string[]) => `${HEAD}${days.join('')}${TAIL}`;

describe('MNB parser on the recorded SOAP answer', () => {
  const document = parseMnbResponse(text);

  it('stores forints per unit, or per 100, with the decimal comma read as the point, as the exact reciprocal', () => {
    assert.equal(document.provider, 'mnb');
    assert.equal(document.base, 'HUF');
    // Newest first in the answer, ascending here.
    assert.deepEqual(document.days.map((d) => d.day), ['2025-03-24', '2025-03-25', '2025-03-26', '2025-03-27', '2025-03-28']);
    let checked = 0;
    for (const day of DAYS) {
      const rates = document.days.find((d) => d.day === dayOf(day))!.rates;
      const found = [...day.matchAll(/&lt;Rate unit="(\d+)" curr="([A-Z]{3})"&gt;([\d,]+)&lt;\/Rate&gt;/g)];
      assert.equal(Object.keys(rates).length, found.length);
      for (const [, unit, code, value] of found as unknown as Array<[string, string, string, string]>) {
        assert.ok(new D(rates[code]!.slice(2)).eq(new D(value.replace(',', '.')).div(unit)), `${code} ${dayOf(day)}`);
        checked += 1;
      }
    }
    assert.equal(checked, 160);
    const last = document.days.at(-1)!.rates;
    assert.equal(last['EUR'], '1/402.61');
    assert.equal(last['JPY'], '1/2.4817');
    assert.equal(last['IDR'], '1/0.0226');
  });

  it('reads the direction and the units right: within 1% of the ECB\'s crosses on every day', () => {
    const comparison = compareWithEcb(document, 0.01);
    assert.deepEqual(comparison.far, []);
    assert.ok(comparison.checked >= 120, `${comparison.checked}`);
    for (const code of ['EUR', 'USD', 'JPY', 'KRW', 'IDR']) assert.ok(comparison.currencies.has(code), code);
  });

  it('dates each day at noon Budapest time', () => {
    assert.equal(document.days[0]!.asOf, '2025-03-24T11:00:00Z');
    assert.equal(document.days.at(-1)!.asOf, '2025-03-28T11:00:00Z');
  });

  it('rejects malformed answers with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /the XML is empty/],
      ['<html><body>Bad gateway', /got an HTML page instead of XML/],
      ['<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring xml:lang="en">Invalid date</faultstring></s:Fault></s:Body></s:Envelope>', /the service answered a fault: "Invalid date"/],
      [text.replace(/GetExchangeRatesResult/g, 'GetCurrenciesResult'), /holds no GetExchangeRatesResult/],
      [withDays(DAYS[0]!.replace('date="2025-03-28"', 'date="2025.03.28"')), /Day date "2025.03.28" is not a date/],
      [withDays(DAYS[0]!.replace('curr="EUR"', 'curr="euro"')), /a Rate whose currency is "euro"/],
      [withDays(DAYS[0]!.replace('curr="EUR"&gt;402,61', 'curr="EUR"&gt;402.61')), /EUR on 2025-03-28: "402.61" is not a decimal with a comma/],
      [withDays(DAYS[0]!.replace('curr="EUR"&gt;402,61', 'curr="EUR"&gt;0,00')), /the rate is zero/],
      [withDays(DAYS[0]!.replace('unit="1" curr="EUR"', 'curr="EUR"')), /EUR on 2025-03-28: the Rate has no unit/],
      [withDays(DAYS[0]!.replace('unit="100" curr="JPY"', 'unit="0" curr="JPY"')), /"0" is not a whole number of units/],
      [withDays(DAYS[0]!, DAYS[0]!), /AUD is quoted twice on 2025-03-28/],
      [text.slice(0, text.length - 300), /not well-formed/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseMnbResponse(body), feedError(pattern), body.slice(0, 100));
  });

  it('reads an answer without days as no days', () => {
    assert.deepEqual(parseMnbResponse(withDays()).days, []);
  });
});

describe('MNB provider against a local SOAP service', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url, request) => {
      if (`${url.pathname}${url.search}` !== recorded.pathAndQuery || request.method !== 'POST' || !String(request.headers['content-type']).startsWith('text/xml')) return undefined;
      const from = /<web:startDate>([\d-]+)<\/web:startDate>/.exec(request.body)?.[1];
      const to = /<web:endDate>([\d-]+)<\/web:endDate>/.exec(request.body)?.[1];
      if (from === undefined || to === undefined || request.body !== mnbRequest(from, to)) return { status: 500, body: 'SOAP fault', contentType: 'text/plain' };
      // The service's answer for the range: the recorded days within it.
      return { body: withDays(...DAYS.filter((day) => dayOf(day) >= from && dayOf(day) <= to)), contentType: recorded.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createMnbProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 10 });

  it('POSTs the recorded request exactly for the recorded range', async () => {
    server.requests.length = 0;
    server.bodies.length = 0;
    const document = await provider('2025-03-28T13:00:00Z').series({ from: '2025-03-24', to: '2025-03-28' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(server.bodies, [recorded.requestBody]);
    assert.deepEqual(document, parseMnbResponse(text));
  });

  it('latest: the last 8 days asked for, the newest kept', async () => {
    server.bodies.length = 0;
    const latest = await provider('2025-03-30T12:00:00Z').latest();
    assert.deepEqual(server.bodies, [mnbRequest('2025-03-22', '2025-03-30')]);
    assert.deepEqual(latest.days.map((d) => d.day), ['2025-03-28']);
  });

  it('the first 5-year load: six spans of at most a year, in turn, logged as a paced load', async () => {
    server.bodies.length = 0;
    const clock = clockAt('2025-03-30T12:00:00Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2025-03-30' };
    const document = await provider('2025-03-30T12:00:00Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    const spans = server.bodies.map((body) => [/<web:startDate>([\d-]+)</.exec(body)![1]!, /<web:endDate>([\d-]+)</.exec(body)![1]!]);
    assert.equal(spans.length, 6);
    assert.equal(spans[0]![0], range.from);
    assert.equal(spans.at(-1)![1], '2025-03-30');
    for (let i = 1; i < spans.length; i++) assert.equal(Date.parse(spans[i]![0]!) - Date.parse(spans[i - 1]![1]!), 86_400_000);
    assert.equal(document.days.length, 5);
    assert.deepEqual(lines.map((l) => l.msg).filter((m) => m !== 'still loading history'), ['loading history in paced requests', 'history loaded']);
    assert.deepEqual([lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['mnb', 6]);
  });

  it('fails on an error answer', async () => {
    await assert.rejects(provider('2025-03-28T13:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    assert.deepEqual([MNB_METADATA.base, MNB_METADATA.kind, MNB_METADATA.label], ['HUF', 'central bank', 'MNB']);
    assert.match(MNB_METADATA.schedule, /11:00 Budapest time/);
  });
});
