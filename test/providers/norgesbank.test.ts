import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { createNorgesBankProvider, NORGES_BANK_METADATA, parseNorgesBankCsv } from '../../src/providers/norgesbank.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';

const recorded = recordingsOf('nb')[0]!;
const text = recorded.body.toString('utf8');
const DATA_PATH = '/api/data/EXR/B..NOK.SP';
const HEADER = 'FREQ,BASE_CUR,QUOTE_CUR,TENOR,DECIMALS,CALCULATED,UNIT_MULT,COLLECTION,TIME_PERIOD,OBS_VALUE';

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};
const row = (from: string, to: string, unit: string, day: string, value: string) => `B,${from},${to},SP,4,false,${unit},C,${day},${value}`;
const csv = (...rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;

describe('Norges Bank parser on the recorded SDMX-CSV', () => {
  const document = parseNorgesBankCsv(text);

  it('reads every currency on the seven recorded days, indices left out', () => {
    assert.equal(document.provider, 'norgesbank');
    assert.equal(document.base, 'NOK');
    assert.deepEqual(
      document.days.map((d) => d.day),
      ['2026-03-16', '2026-03-17', '2026-03-18', '2026-03-19', '2026-03-20', '2026-03-23', '2026-03-24'],
    );
    for (const day of document.days) {
      assert.equal(Object.keys(day.rates).length, 36, day.day);
      assert.equal(day.rates['I44'], undefined);
      assert.equal(day.rates['TWI'], undefined);
    }
  });

  it('stores kroner per unit as `1/` and the exact per-unit number, per-100 quotations scaled keeping every published digit', () => {
    // Read independently: every row divided by 10^UNIT_MULT with decimal.js, written with the
    // published decimals plus UNIT_MULT (so trailing zeros stay as published).
    const lines = text.trimEnd().split('\n').slice(1);
    let checked = 0;
    for (const line of lines) {
      const [, from, , , , , unit, , day, value] = line.split(',') as string[];
      if (from === 'I44' || from === 'TWI') continue;
      const rate = document.days.find((d) => d.day === day)!.rates[from!]!;
      const decimals = (value!.split('.')[1] ?? '').length + Number(unit);
      const perUnit = new Decimal(value!).div(new Decimal(10).pow(Number(unit))).toFixed(decimals);
      assert.equal(rate, `1/${perUnit}`, `${from} ${day}: ${value} per 10^${unit}`);
      if (unit === '0') assert.equal(rate, `1/${value}`, `${from} ${day}`);
      checked += 1;
    }
    assert.equal(checked, 36 * 7);
    const last = document.days.at(-1)!.rates;
    assert.equal(last['USD'], '1/9.7049');
    assert.equal(last['VND'], '1/0.000368');
    assert.equal(last['ISK'], '1/0.078');
    assert.equal(last['IDR'], '1/0.00057457');
    assert.equal(last['EUR'], '1/11.2305');
    assert.equal(last['DKK'], '1/1.5032');
    assert.equal(last['CHF'], '1/12.2805');
    assert.equal(last['HUF'], '1/0.028805');
    assert.equal(last['XDR'], '1/13.2271');
  });

  it('dates each day at 16:00 Oslo time', () => {
    assert.equal(document.days[0]!.asOf, '2026-03-16T15:00:00Z');
  });
});

describe('Norges Bank parser on other files', () => {
  it('skips empty and NaN values, and reads a file without rows as no days', () => {
    const document = parseNorgesBankCsv(csv(row('USD', 'NOK', '0', '2026-03-24', ''), row('EUR', 'NOK', '0', '2026-03-24', 'NaN'), row('GBP', 'NOK', '0', '2026-03-24', '12.95')));
    assert.deepEqual(document.days[0]!.rates, { GBP: '1/12.95' });
    assert.deepEqual(parseNorgesBankCsv(`${HEADER}\n`).days, []);
  });

  it('stores a row quoted per krone as it reads, units of the currency per krone, scaled per one krone', () => {
    assert.deepEqual(parseNorgesBankCsv(csv(row('NOK', 'XAU', '0', '2026-03-24', '0.00004'))).days[0]!.rates, { XAU: '0.00004' });
    assert.deepEqual(parseNorgesBankCsv(csv(row('NOK', 'USD', '0', '2026-03-24', '0.1037'))).days[0]!.rates, { USD: '0.1037' });
    assert.deepEqual(parseNorgesBankCsv(csv(row('NOK', 'JPY', '2', '2026-03-24', '1425.5'))).days[0]!.rates, { JPY: '14.255' });
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /CSV is empty/],
      ['<html><head><title>Error</title></head></html>', /HTML or XML page/],
      ['FREQ,BASE_CUR,QUOTE_CUR,TIME_PERIOD,OBS_VALUE\nB,USD,NOK,2026-03-24,10.1\n', /no UNIT_MULT column/],
      [csv(row('USD', 'NOK', '0', '24.03.2026', '10.1')), /TIME_PERIOD "24.03.2026" is not a date/],
      [csv(row('USD', 'NOK', '-2', '2026-03-24', '10.1')), /UNIT_MULT "-2"/],
      [csv(row('USD', 'NOK', '10', '2026-03-24', '10.1')), /UNIT_MULT "10"/],
      [csv(row('USD', 'EUR', '0', '2026-03-24', '0.86')), /USD\/EUR on 2026-03-24\) is not quoted against the krone/],
      [csv(row('NOK', 'NOK', '0', '2026-03-24', '1')), /not quoted against the krone/],
      [csv(row('usd', 'NOK', '0', '2026-03-24', '10.1')), /"usd" is not a currency code/],
      [csv(row('USD', 'NOK', '0', '2026-03-24', '10.1.1')), /"10.1.1" is not a plain decimal/],
      [csv(row('USD', 'NOK', '0', '2026-03-24', '1e1')), /"1e1" is not a plain decimal/],
      [csv(row('USD', 'NOK', '0', '2026-03-24', '0')), /the rate is zero/],
      [csv(row('USD', 'NOK', '0', '2026-03-24', '10.1'), row('USD', 'NOK', '0', '2026-03-24', '10.2')), /USD is quoted twice on 2026-03-24/],
      [`${HEADER}\nB,USD,NOK,SP,4,false,0,C,2026-03-24\n`, /line 2 has 9 fields/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseNorgesBankCsv(body), feedError(pattern), body.slice(0, 100));
  });
});

describe('Norges Bank provider against a local SDMX server', () => {
  let server: BankServer;

  before(async () => {
    server = await startBankServer((url) => {
      if (`${url.pathname}${url.search}` === recorded.pathAndQuery) return { body: recorded.body, contentType: recorded.contentType };
      const from = url.searchParams.get('startPeriod');
      const to = url.searchParams.get('endPeriod');
      if (url.pathname !== DATA_PATH || url.searchParams.get('format') !== 'csvdata' || !from || !to) return undefined;
      // The bank's answer to another window: the recorded rows within it, bytes unchanged.
      const [header, ...rows] = text.trimEnd().split('\n');
      const kept = rows.filter((line) => {
        const day = line.split(',')[8]!;
        return day >= from && day <= to;
      });
      return { body: `${[header, ...kept].join('\n')}\n`, contentType: recorded.contentType };
    });
  });
  after(() => server.close());

  const provider = (clockIso: string, baseUrl = server.origin) => createNorgesBankProvider({ baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('asks for the last eight days exactly as recorded and answers with the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-24T18:00:00Z', `${server.origin}/`).latest();
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(latest.days, [parseNorgesBankCsv(text).days.at(-1)]);
  });

  it('asks for a range with startPeriod and endPeriod', async () => {
    server.requests.length = 0;
    const series = await provider('2026-03-30T12:00:00Z').series({ from: '2026-03-18', to: '2026-03-20' });
    assert.deepEqual(server.requests, [`${DATA_PATH}?endPeriod=2026-03-20&format=csvdata&startPeriod=2026-03-18`]);
    assert.deepEqual(series.days, parseNorgesBankCsv(text).days.slice(2, 5));
  });

  it('fails latest when the window holds no published day', async () => {
    await assert.rejects(provider('2026-04-10T12:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-04-10/));
  });

  it('turns a missing document into a FeedError', async () => {
    await assert.rejects(provider('2026-03-24T18:00:00Z', `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    const made = provider('2026-03-20T12:00:00Z');
    assert.deepEqual([made.id, made.base], ['norgesbank', 'NOK']);
    assert.equal(NORGES_BANK_METADATA.name, 'Norges Bank');
    assert.equal(NORGES_BANK_METADATA.kind, 'central bank');
    assert.equal(NORGES_BANK_METADATA.base, 'NOK');
    assert.match(NORGES_BANK_METADATA.termsUrl!, /^https:\/\/www\.norges-bank\.no\//);
    assert.match(NORGES_BANK_METADATA.schedule, /16:00 Oslo/);
  });
});
