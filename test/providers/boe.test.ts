import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { parseBocObservations } from '../../src/providers/boc.js';
import { BOE_METADATA, createBoeProvider, parseBoeCsv, parseBoeDate } from '../../src/providers/boe.js';
import { parseNorgesBankCsv } from '../../src/providers/norgesbank.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';

const recorded = recordingsOf('boe')[0]!;
const text = recorded.body.toString('utf8');
const DATA_PATH = '/boeapps/database/_iadb-fromshowcolumns.asp';

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

/** Stored rates as the numbers the banks published: units of the bank's currency per unit of each. */
const published = (rates: Record<string, string>): Record<string, Decimal> =>
  Object.fromEntries(Object.entries(rates).map(([code, text]) => [code, text.startsWith('1/') ? new Decimal(text.slice(2)) : new Decimal(1).div(text)]));

describe('Bank of England parser on the recorded CSV', () => {
  const document = parseBoeCsv(text);

  it('keeps every cell as written, units per pound, on the four recorded days', () => {
    assert.equal(document.provider, 'boe');
    assert.equal(document.base, 'GBP');
    assert.deepEqual(
      document.days.map((d) => d.day),
      ['2026-03-17', '2026-03-18', '2026-03-19', '2026-03-20'],
    );
    // The database ends its lines with CRLF.
    assert.ok(text.endsWith('5.8721\r\n'));
    const lines = text.trimEnd().split('\r\n');
    const cells = lines.slice(1).flatMap((line) => line.split(',').slice(1));
    const values = document.days.flatMap((d) => Object.values(d.rates));
    assert.equal(values.length, 26 * 4);
    assert.deepEqual([...values].sort(), [...cells].sort());
    const first = document.days[0]!.rates;
    assert.equal(first['USD'], '1.3343');
    assert.equal(first['EUR'], '1.1577');
    assert.equal(first['CAD'], '1.829');
    assert.equal(first['RON'], '5.8963');
    assert.equal(first['ILS'], '4.1357');
    assert.equal(first['KRW'], '1986.5526');
  });

  it('reads each series as the right currency, the right way round: crosses of Norges Bank and Bank of Canada agree within 1%', () => {
    // Independent recordings of the same days: Norges Bank's kroner per unit, the Bank of
    // Canada's Canadian dollars per unit. Units per pound = (base per pound) / (base per unit).
    const others = [parseNorgesBankCsv(recordingsOf('nb')[0]!.body.toString('utf8')), parseBocObservations(recordingsOf('boc')[0]!.body.toString('utf8'))];
    const checked = new Set<string>();
    for (const day of document.days) {
      for (const [currency, rate] of Object.entries(day.rates)) {
        for (const other of others) {
          const stored = other.days.find((d) => d.day === day.day)?.rates;
          const rates = stored && published(stored);
          const perPound = currency === other.base ? '1' : rates?.[currency];
          if (!rates?.['GBP'] || !perPound) continue;
          const cross = currency === other.base ? new Decimal(rates['GBP']) : new Decimal(rates['GBP']).div(perPound);
          const gap = cross.div(rate).minus(1).abs();
          assert.ok(gap.lt(0.01), `${currency} on ${day.day}: ${rate} per pound, ${cross.toFixed(6)} through ${other.base}`);
          checked.add(currency);
        }
      }
    }
    assert.equal(checked.size, 26, [...checked].sort().join(' '));
  });

  it('dates each day at 16:00 London time', () => {
    assert.equal(document.days[0]!.asOf, '2026-03-17T16:00:00Z');
    assert.equal(parseBoeCsv('DATE,XUDLUSS\n01 Jul 2026,1.30\n').days[0]!.asOf, '2026-07-01T15:00:00Z');
  });
});

describe('Bank of England parser on other files', () => {
  it('reads its dates strictly', () => {
    assert.equal(parseBoeDate('17 Mar 2026'), '2026-03-17');
    assert.equal(parseBoeDate('7 Apr 2026'), '2026-04-07');
    for (const bad of ['17 MAR 2026', '17 March 2026', '2026-03-17', '31 Feb 2026', '17 Mar 26', '17/Mar/2026']) assert.equal(parseBoeDate(bad), null, bad);
  });

  it('skips empty cells and days without any value, and reads a header alone as no days', () => {
    const document = parseBoeCsv('DATE,XUDLUSS,XUDLERS\n24 Dec 2026,,\n29 Dec 2026,1.3001,\n');
    assert.deepEqual(
      document.days.map((d) => [d.day, d.rates]),
      [['2026-12-29', { USD: '1.3001' }]],
    );
    assert.deepEqual(parseBoeCsv('DATE,XUDLUSS\n').days, []);
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /CSV is empty/],
      ['<!DOCTYPE html>\n<html><body>No data</body></html>', /HTML or XML page/],
      ['Date,XUDLUSS\n17 Mar 2026,1.3343\n', /does not start with DATE/],
      ['DATE,XUDLUSD\n17 Mar 2026,1.3343\n', /"XUDLUSD", not a known sterling spot series/],
      ['DATE,XUDLUSS,XUDLUSS\n17 Mar 2026,1.3343,1.3343\n', /names a series twice/],
      ['DATE,XUDLUSS\n2026-03-17,1.3343\n', /"2026-03-17" is not a date like "17 Mar 2026"/],
      ['DATE,XUDLUSS\n17 Mar 2026,1.3343\n17 Mar 2026,1.3344\n', /line 3 repeats 2026-03-17/],
      ['DATE,XUDLUSS\n17 Mar 2026,n/a\n', /XUDLUSS on 2026-03-17: "n\/a" is not a plain decimal/],
      ['DATE,XUDLUSS\n17 Mar 2026,0\n', /the rate is zero/],
      ['DATE,XUDLUSS\n17 Mar 2026,1.3343,1\n', /line 2 has 3 fields/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseBoeCsv(body), feedError(pattern), body.slice(0, 80));
  });
});

describe('Bank of England provider against a local database', () => {
  let server: BankServer;
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const isoOf = (boe: string) => {
    const [d, m, y] = boe.split(/[ /]/) as [string, string, string];
    return `${y}-${String(MONTHS.indexOf(m) + 1).padStart(2, '0')}-${d.padStart(2, '0')}`;
  };
  const recordedQuery = new URL(recorded.pathAndQuery, 'http://x').searchParams;

  before(async () => {
    server = await startBankServer((url) => {
      if (`${url.pathname}${url.search}` === recorded.pathAndQuery) return { body: recorded.body, contentType: recorded.contentType };
      const q = url.searchParams;
      if (url.pathname !== DATA_PATH || q.get('SeriesCodes') !== recordedQuery.get('SeriesCodes') || q.get('CSVF') !== 'TN' || q.get('csv.x') !== 'yes') return undefined;
      const from = isoOf(q.get('Datefrom')!);
      const to = isoOf(q.get('Dateto')!);
      // The database's answer to another window: the recorded rows within it, as written.
      const [header, ...rows] = text.trimEnd().split('\r\n');
      const kept = rows.filter((row) => isoOf(row.split(',')[0]!) >= from && isoOf(row.split(',')[0]!) <= to);
      return { body: `${[header, ...kept].join('\r\n')}\r\n`, contentType: recorded.contentType };
    });
  });
  after(() => server.close());

  const provider = (clockIso: string, baseUrl = server.origin) => createBoeProvider({ baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('answers a range from the recorded request exactly', async () => {
    server.requests.length = 0;
    const series = await provider('2026-03-31T12:00:00Z', `${server.origin}/`).series({ from: '2026-03-17', to: '2026-03-20' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(series, parseBoeCsv(text));
  });

  it('asks for the last eight days for latest and answers with the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-22T12:00:00Z').latest();
    assert.equal(server.requests.length, 1);
    assert.match(server.requests[0]!, /^\/boeapps\/database\/_iadb-fromshowcolumns\.asp\?CSVF=TN&Datefrom=14\/Mar\/2026&Dateto=22\/Mar\/2026&SeriesCodes=XUDLUSS,/);
    assert.deepEqual(latest.days, [parseBoeCsv(text).days.at(-1)]);
  });

  it('fails latest when the window holds no published day', async () => {
    await assert.rejects(provider('2026-04-20T12:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-04-20/));
  });

  it('turns a missing document into a FeedError', async () => {
    await assert.rejects(provider('2026-03-22T12:00:00Z', `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    const made = provider('2026-03-20T12:00:00Z');
    assert.deepEqual([made.id, made.base], ['boe', 'GBP']);
    assert.equal(BOE_METADATA.name, 'Bank of England');
    assert.equal(BOE_METADATA.kind, 'central bank');
    assert.equal(BOE_METADATA.base, 'GBP');
    assert.equal(BOE_METADATA.termsUrl, 'https://www.bankofengland.co.uk/legal');
    assert.match(BOE_METADATA.quotes, /16:00 London/);
  });
});
