import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { BNR_METADATA, createBnrProvider, parseBnrXml } from '../../src/providers/bnr.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { compareWithEcb } from '../support/ecb-check.js';

const recorded = recordingsOf('bnr')[0]!;
const text = recorded.body.toString('utf8');
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
// The recorded file cut into its head, its Cubes and its tail, as bytes' text: no value rewritten.
const HEAD = text.slice(0, text.indexOf('<Cube '));
const TAIL = text.slice(text.lastIndexOf('</Cube>') + '</Cube>'.length);
const CUBES = text.slice(HEAD.length, text.length - TAIL.length).split(/(?=<Cube )/);
const cubeDay = (cube: string) => /<Cube date="([\d-]+)"/.exec(cube)![1]!;
const withCubes = (...cubes: string[]) => `${HEAD}${cubes.join('')}${TAIL}`;

describe('BNR parser on the recorded year file', () => {
  const document = parseBnrXml(text);

  it('stores lei per unit, or per multiplier units, as the exact reciprocal, on every recorded day', () => {
    assert.equal(document.provider, 'bnr');
    assert.equal(document.base, 'RON');
    assert.equal(document.days.length, 157);
    assert.deepEqual([document.days[0]!.day, document.days.at(-1)!.day], ['2026-01-05', '2026-08-19']);
    // Independently from the bytes: every Rate element, with decimal.js.
    let checked = 0;
    for (const cube of CUBES) {
      const rates = document.days.find((d) => d.day === cubeDay(cube))!.rates;
      for (const m of cube.matchAll(/<Rate currency="([A-Z]{3})"(?: multiplier="(\d+)")?>([^<]+)<\/Rate>/g)) {
        const [, code, multiplier, value] = m as unknown as [string, string, string | undefined, string];
        if (code === 'XAU') continue;
        assert.ok(new D(rates[code]!.slice(2)).eq(new D(value).div(multiplier ?? 1)), `${code} ${cubeDay(cube)}`);
        checked += 1;
      }
      assert.equal(Object.keys(rates).length, 36);
    }
    assert.equal(checked, 5809 - 157);
    const first = document.days[0]!.rates;
    assert.equal(first['EUR'], '1/5.0905');
    assert.equal(first['HUF'], '1/0.013247');
    assert.equal(first['IDR'], '1/0.000260');
    assert.equal(first['XDR'], `1/${/<Rate currency="XDR">([^<]+)</.exec(CUBES[0]!)![1]!}`);
    // A gram of gold is not the troy ounce XAU counts in.
    assert.equal(first['XAU'], undefined);
  });

  it('reads the direction and the multipliers right: within 2% of the ECB\'s crosses on every common day', () => {
    // 2%: the bank fixes at 13:00 Bucharest time, the ECB at 14:15 CET; the Brazilian real moved more than 1% between them in early March 2026.
    const comparison = compareWithEcb(document, 0.02);
    assert.deepEqual(comparison.far, []);
    assert.ok(comparison.checked > 1_000, `${comparison.checked}`);
    for (const code of ['EUR', 'USD', 'HUF', 'JPY', 'KRW', 'IDR', 'ISK']) assert.ok(comparison.currencies.has(code), code);
  });

  it('dates each day at 13:00 Bucharest time', () => {
    assert.equal(document.days[0]!.asOf, '2026-01-05T11:00:00Z');
    assert.equal(document.days.at(-1)!.asOf, '2026-08-19T10:00:00Z');
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /the XML is empty/],
      ['<html><body>Service unavailable', /got an HTML page instead of XML/],
      [text.slice(0, text.length - 200), /not well-formed/],
      ['<?xml version="1.0"?><Other/>', /not the BNR's DataSet of rates/],
      [withCubes(CUBES[0]!).replace('<OrigCurrency>RON</OrigCurrency>', '<OrigCurrency>EUR</OrigCurrency>'), /OrigCurrency is "EUR", not RON/],
      [withCubes(CUBES[0]!.replace('date="2026-01-05"', 'date="05.01.2026"')), /Cube date "05.01.2026" is not a date/],
      [withCubes(CUBES[0]!.replace('<Rate currency="EUR">5.0905', '<Rate currency="eur">5.0905')), /a Rate whose currency is "eur"/],
      [withCubes(CUBES[0]!.replace('<Rate currency="EUR">5.0905', '<Rate currency="EUR">5,0905')), /EUR on 2026-01-05: "5,0905" is not a plain decimal/],
      [withCubes(CUBES[0]!.replace('<Rate currency="EUR">5.0905', '<Rate currency="EUR"> 5.0905')), /" 5.0905" is not a plain decimal/],
      [withCubes(CUBES[0]!.replace('multiplier="100">1.3247', 'multiplier="hundred">1.3247')), /"hundred" is not a whole number of units/],
      [withCubes(CUBES[0]!.replace('<Rate currency="EUR">5.0905</Rate>', '<Rate currency="EUR"/>')), /EUR on 2026-01-05: the Rate holds no number/],
      [withCubes(CUBES[0]!, CUBES[0]!), /AED is quoted twice on 2026-01-05/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseBnrXml(body), feedError(pattern), body.slice(0, 100));
  });

  it('reads a file without days as no days', () => {
    assert.deepEqual(parseBnrXml(withCubes()).days, []);
  });
});

describe('BNR provider against a local stand-in', () => {
  let server: BankServer;
  let today = '2026-08-19';
  before(async () => {
    server = await startBankServer((url) => {
      const published = CUBES.filter((cube) => cubeDay(cube) <= today);
      // The day's file: the newest published Cube.
      if (url.pathname === '/nbrfxrates.xml') return { body: withCubes(published.at(-1)!), contentType: 'text/xml' };
      const year = /^\/files\/xml\/years\/nbrfxrates(\d{4})\.xml$/.exec(url.pathname)?.[1];
      if (year === undefined || url.search !== '') return undefined;
      if (`${url.pathname}` === recorded.pathAndQuery && today === '2026-08-19') return { body: recorded.body, contentType: recorded.contentType };
      // Another year: the recorded Cubes of it (none before 2026), in the recorded file's frame.
      return { body: withCubes(...published.filter((cube) => cubeDay(cube).startsWith(`${year}-`))), contentType: recorded.contentType };
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createBnrProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 10 });

  it('latest: the day\'s file', async () => {
    server.requests.length = 0;
    today = '2026-03-04';
    const latest = await provider('2026-03-04T13:00:00Z').latest();
    assert.deepEqual(server.requests, ['/nbrfxrates.xml']);
    assert.deepEqual(latest.days, parseBnrXml(text).days.filter((d) => d.day === '2026-03-04'));
  });

  it('a range within the year: the recorded request, cut to the range', async () => {
    server.requests.length = 0;
    today = '2026-08-19';
    const document = await provider('2026-08-19T16:13:10Z').series({ from: '2026-08-10', to: '2026-08-19' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(document.days.map((d) => d.day), ['2026-08-10', '2026-08-11', '2026-08-12', '2026-08-13', '2026-08-14', '2026-08-17', '2026-08-18', '2026-08-19']);
  });

  it('the first 5-year load: a year a request, in turn, logged as a paced load', async () => {
    server.requests.length = 0;
    today = '2026-08-19';
    const clock = clockAt('2026-08-19T16:13:10Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-08-19' };
    const began = Date.now();
    const document = await provider('2026-08-19T16:13:10Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    assert.deepEqual(server.requests, ['2021', '2022', '2023', '2024', '2025', '2026'].map((year) => `/files/xml/years/nbrfxrates${year}.xml`));
    assert.ok(Date.now() - began >= 5 * 10);
    assert.equal(document.days.length, 157);
    assert.deepEqual(lines.map((l) => l.msg).filter((m) => m !== 'still loading history'), ['loading history in paced requests', 'history loaded']);
    assert.deepEqual([lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['bnr', 6]);
  });

  it('fails on an error answer', async () => {
    await assert.rejects(provider('2026-08-19T16:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('declares the first day its history reaches, for a load of every year', () => {
    assert.equal(provider('2026-03-20T10:45:00Z').firstDay, '2005-01-03');
  });

  it('describes itself', () => {
    assert.deepEqual([BNR_METADATA.base, BNR_METADATA.kind, BNR_METADATA.label], ['RON', 'central bank', 'BNR']);
    assert.match(BNR_METADATA.schedule, /13:00 Bucharest time/);
  });
});
