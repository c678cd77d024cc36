import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { parseBocObservations } from '../../src/providers/boc.js';
import { BOI_METADATA, createBoiProvider, parseBoiCsv } from '../../src/providers/boi.js';
import { parseNorgesBankCsv } from '../../src/providers/norgesbank.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';

const recorded = recordingsOf('boi')[0]!;
const text = recorded.body.toString('utf8');
const DATA_PATH = '/FusionEdgeServer/sdmx/v2/data/dataflow/BOI.STATISTICS/EXR/1.0/';
const HEADER = 'SERIES_CODE,FREQ,BASE_CURRENCY,COUNTER_CURRENCY,UNIT_MEASURE,DATA_TYPE,DATA_SOURCE,TIME_COLLECT,CONF_STATUS,PUB_WEBSITE,UNIT_MULT,COMMENTS,TIME_PERIOD,OBS_VALUE,RELEASE_STATUS';

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};
const row = (from: string, to: string, unit: string, day: string, value: string, { measure = to, type = 'OF00' } = {}) =>
  `RER_${from}_${to},D,${from},${to},${measure},${type},BOI_MRKT,V,F,Y,${unit},,${day},${value},YP`;
const csv = (...rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
/** Stored rates as the numbers the banks published: units of the bank's currency per unit of each. */
const published = (rates: Record<string, string>): Record<string, Decimal> =>
  Object.fromEntries(Object.entries(rates).map(([code, text]) => [code, text.startsWith('1/') ? new Decimal(text.slice(2)) : new Decimal(1).div(text)]));

describe('Bank of Israel parser on the recorded SDMX CSV', () => {
  const document = parseBoiCsv(text);

  it('stores shekels per unit as `1/` and the exact per-unit number on the three recorded days, per-10 and per-100 quotations scaled', () => {
    assert.equal(document.provider, 'boi');
    assert.equal(document.base, 'ILS');
    assert.deepEqual(
      document.days.map((d) => [d.day, Object.keys(d.rates).length]),
      [
        ['2026-03-02', 14],
        ['2026-03-05', 7],
        ['2026-03-06', 7],
      ],
    );
    let checked = 0;
    for (const line of text.trimEnd().split('\n').slice(1)) {
      const f = line.split(',');
      const [from, unit, day, value] = [f[2]!, f[10]!, f[12]!, f[13]!];
      const rate = document.days.find((d) => d.day === day)!.rates[from]!;
      // Read independently with decimal.js, written with the published decimals plus UNIT_MULT.
      const decimals = (value.split('.')[1] ?? '').length + Number(unit);
      assert.equal(rate, `1/${new Decimal(value).div(new Decimal(10).pow(Number(unit))).toFixed(decimals)}`, `${from} ${day}: ${value} per 10^${unit}`);
      if (unit === '0') assert.equal(rate, `1/${value}`);
      checked += 1;
    }
    assert.equal(checked, 28);
    const first = document.days[0]!.rates;
    assert.equal(first['USD'], '1/3.073');
    assert.equal(first['JPY'], '1/0.01971');
    assert.equal(first['LBP'], '1/0.00003');
    assert.equal(first['EGP'], '1/0.0589');
  });

  it('reads every pair the right way round: near the Bank of Canada\'s and Norges Bank\'s crosses a week or two later', () => {
    // No other recording has these days; rates a few weeks apart still fall within 10%, while
    // a misread unit (×10, ×100) or direction does not.
    const others = [parseBocObservations(recordingsOf('boc')[0]!.body.toString('utf8')), parseNorgesBankCsv(recordingsOf('nb')[0]!.body.toString('utf8'))];
    const rates = published(document.days[0]!.rates);
    const checked = new Set<string>();
    for (const [currency, rate] of Object.entries(rates)) {
      for (const other of others) {
        const first = published(other.days[0]!.rates);
        if (!first['ILS'] && other.base !== 'ILS') {
          // Through the US dollar when the other bank does not quote the shekel.
          if (!first[currency] || !first['USD']) continue;
          const cross = new Decimal(first[currency]).div(first['USD']).mul(rates['USD']!);
          assert.ok(cross.div(rate).minus(1).abs().lt(0.1), `${currency}: ${rate} shekels, ${cross.toFixed(6)} through ${other.base}`);
        } else {
          const perUnit = currency === other.base ? '1' : first[currency];
          if (!perUnit) continue;
          const cross = new Decimal(perUnit).div(first['ILS']!);
          assert.ok(cross.div(rate).minus(1).abs().lt(0.1), `${currency}: ${rate} shekels, ${cross.toFixed(6)} through ${other.base}`);
        }
        checked.add(currency);
      }
    }
    assert.deepEqual([...checked].sort(), ['AUD', 'CAD', 'CHF', 'DKK', 'EUR', 'GBP', 'JPY', 'NOK', 'SEK', 'USD', 'ZAR']);
    // The Jordanian dinar is pegged at 0.709 per US dollar.
    assert.ok(new Decimal(rates['USD']!).div('0.709').div(rates['JOD']!).minus(1).abs().lt(0.01));
  });

  it('dates each day at 15:30 Israel time, 12:30 on Fridays', () => {
    assert.equal(document.days[0]!.asOf, '2026-03-02T13:30:00Z');
    assert.equal(document.days[2]!.asOf, '2026-03-06T10:30:00Z');
    assert.equal(parseBoiCsv(csv(row('USD', 'ILS', '0', '2026-07-01', '3.5'))).days[0]!.asOf, '2026-07-01T12:30:00Z');
  });
});

describe('Bank of Israel parser on other files', () => {
  it('skips empty values and reads a header alone as no days', () => {
    const document = parseBoiCsv(csv(row('USD', 'ILS', '0', '2026-03-02', ''), row('EUR', 'ILS', '0', '2026-03-02', '3.5601')));
    assert.deepEqual(document.days[0]!.rates, { EUR: '1/3.5601' });
    assert.deepEqual(parseBoiCsv(`${HEADER}\n`).days, []);
  });

  it('stores a row quoted per shekel as it reads, units of the currency per shekel, scaled per one shekel', () => {
    assert.deepEqual(parseBoiCsv(csv(row('ILS', 'USD', '0', '2026-03-02', '0.3254'))).days[0]!.rates, { USD: '0.3254' });
    assert.deepEqual(parseBoiCsv(csv(row('ILS', 'JPY', '1', '2026-03-02', '492.5'))).days[0]!.rates, { JPY: '49.25' });
  });

  it('rejects malformed files with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /CSV is empty/],
      ['<?xml version="1.0"?><error/>', /HTML or XML page/],
      ['BASE_CURRENCY,COUNTER_CURRENCY,TIME_PERIOD,OBS_VALUE\nUSD,ILS,2026-03-02,3.073\n', /no UNIT_MEASURE column/],
      [csv(row('USD', 'ILS', '0', '02/03/2026', '3.073')), /TIME_PERIOD "02\/03\/2026" is not a date/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '3.073', { type: 'OF01' })), /data type "OF01" is not the representative rate OF00/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '3.073', { measure: 'USD' })), /the value is in "USD", not in ILS/],
      [csv(row('USD', 'ILS', 'x', '2026-03-02', '3.073')), /UNIT_MULT "x"/],
      [csv(row('USD', 'EUR', '0', '2026-03-02', '0.86')), /not quoted against the shekel/],
      [csv(row('U$D', 'ILS', '0', '2026-03-02', '3.073')), /"U\$D" is not a currency code/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '3,073')), /line 2 has 16 fields/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '-3.073')), /"-3.073" is not a plain decimal/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '0.000')), /the rate is zero/],
      [csv(row('USD', 'ILS', '0', '2026-03-02', '3.073'), row('USD', 'ILS', '0', '2026-03-02', '3.074')), /USD is quoted twice on 2026-03-02/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseBoiCsv(body), feedError(pattern), body.slice(0, 100));
  });
});

describe('Bank of Israel provider against a local SDMX service', () => {
  let server: BankServer;

  before(async () => {
    server = await startBankServer((url) => {
      if (`${url.pathname}${url.search}` === recorded.pathAndQuery) return { body: recorded.body, contentType: recorded.contentType };
      const from = url.searchParams.get('startperiod');
      const to = url.searchParams.get('endperiod');
      if (url.pathname !== DATA_PATH || url.searchParams.get('c[DATA_TYPE]') !== 'OF00' || url.searchParams.get('format') !== 'csv' || !from || !to) return undefined;
      // The service's answer to another window: the recorded rows within it, as written.
      const [header, ...rows] = text.trimEnd().split('\n');
      const kept = rows.filter((line) => line.split(',')[12]! >= from && line.split(',')[12]! <= to);
      return { body: `${[header, ...kept].join('\n')}\n`, contentType: recorded.contentType };
    });
  });
  after(() => server.close());

  const provider = (clockIso: string, baseUrl = server.origin) => createBoiProvider({ baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('answers a range from the recorded request exactly', async () => {
    server.requests.length = 0;
    const series = await provider('2026-03-20T14:00:00Z', `${server.origin}/`).series({ from: '2026-03-01', to: '2026-03-20' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(series, parseBoiCsv(text));
  });

  it('asks for the last ten days for latest and answers with the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-09T12:00:00Z').latest();
    assert.deepEqual(server.requests, [`${DATA_PATH}?c%5BDATA_TYPE%5D=OF00&endperiod=2026-03-09&format=csv&startperiod=2026-02-27`]);
    assert.deepEqual(latest.days, [parseBoiCsv(text).days.at(-1)]);
  });

  it('fails latest when the window holds no published day', async () => {
    await assert.rejects(provider('2026-03-20T14:00:00Z').latest(), feedError(/nothing published in the 10 days to 2026-03-20/));
  });

  it('turns a missing document into a FeedError', async () => {
    await assert.rejects(provider('2026-03-09T12:00:00Z', `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    const made = provider('2026-03-20T12:00:00Z');
    assert.deepEqual([made.id, made.base], ['boi', 'ILS']);
    assert.equal(BOI_METADATA.name, 'Bank of Israel');
    assert.equal(BOI_METADATA.kind, 'central bank');
    assert.equal(BOI_METADATA.base, 'ILS');
    assert.match(BOI_METADATA.schedule, /15:30 Israel time/);
  });
});
