import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { BOC_METADATA, createBocProvider, parseBocObservations } from '../../src/providers/boc.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';

const [recording] = recordingsOf('boc');
const recorded = recording!;
const text = recorded.body.toString('utf8');
const GROUP_PATH = '/valet/observations/group/FX_RATES_DAILY/json';

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

interface Valet {
  seriesDetail: Record<string, { label: string }>;
  observations: Array<Record<string, string | { v: string }>>;
}

/** The recorded answer read independently of the parser: day → currency → `1/` and the published string. */
function expectedFromRecording(): Map<string, Record<string, string>> {
  const valet = JSON.parse(text) as Valet;
  const byDay = new Map<string, Record<string, string>>();
  for (const observation of valet.observations) {
    const rates: Record<string, string> = {};
    for (const [name, value] of Object.entries(observation)) {
      if (name === 'd') continue;
      const label = valet.seriesDetail[name]!.label;
      assert.ok(label.endsWith('/CAD'), label);
      rates[label.slice(0, 3)] = `1/${(value as { v: string }).v}`;
    }
    byDay.set(observation['d'] as string, rates);
  }
  return byDay;
}

/** A Valet answer of one series and the given observations. */
function valet(label: string, observations: unknown[]): string {
  return JSON.stringify({ seriesDetail: { FXTEST: { label, description: 'test', dimension: { key: 'd', name: 'Date' } } }, observations });
}

describe('Bank of Canada parser on the recorded Valet answer', () => {
  const document = parseBocObservations(text);

  it('stores each published value, Canadian dollars per unit, as its exact reciprocal, on the five recorded days', () => {
    assert.equal(document.provider, 'boc');
    assert.equal(document.base, 'CAD');
    const expected = expectedFromRecording();
    assert.deepEqual(
      document.days.map((d) => d.day),
      ['2026-03-12', '2026-03-13', '2026-03-16', '2026-03-17', '2026-03-18'],
    );
    for (const day of document.days) assert.deepEqual(day.rates, expected.get(day.day), day.day);
    const last = document.days.at(-1)!.rates;
    assert.equal(last['USD'], '1/1.3706');
    assert.equal(last['GBP'], '1/1.8258');
    // Trailing zeros and tiny values stay as written.
    assert.equal(last['JPY'], '1/0.008590');
    assert.equal(last['IDR'], '1/0.000081');
    assert.equal(last['TRY'], '1/0.03100');
  });

  it('leaves out the currencies the group describes but did not publish (MYR, THB, VND)', () => {
    for (const day of document.days) {
      assert.equal(Object.keys(day.rates).length, 23, day.day);
      for (const code of ['MYR', 'THB', 'VND']) assert.equal(day.rates[code], undefined, `${code} on ${day.day}`);
    }
  });

  it('dates each day at 16:30 Eastern time, in daylight time after 8 March 2026', () => {
    assert.equal(document.days[0]!.asOf, '2026-03-12T20:30:00Z');
    const winter = parseBocObservations(valet('USD/CAD', [{ d: '2026-01-05', FXTEST: { v: '1.3780' } }]));
    assert.equal(winter.days[0]!.asOf, '2026-01-05T21:30:00Z');
  });
});

describe('Bank of Canada parser on other answers', () => {
  it('stores a series quoted per Canadian dollar as published, units of the currency per dollar', () => {
    const perDollar = parseBocObservations(valet('CAD/USD', [{ d: '2026-03-18', FXTEST: { v: '0.7296' } }]));
    assert.deepEqual(perDollar.days[0]!.rates, { USD: '0.7296' });
  });

  it('skips empty values and days with nothing published, and reads an empty answer as no days', () => {
    const document = parseBocObservations(
      valet('USD/CAD', [
        { d: '2026-03-17', FXTEST: { v: '' } },
        { d: '2026-03-18', FXTEST: { v: '1.3706' } },
        { d: '2026-03-19' },
      ]),
    );
    assert.deepEqual(
      document.days.map((d) => [d.day, d.rates]),
      [['2026-03-18', { USD: '1/1.3706' }]],
    );
    assert.deepEqual(parseBocObservations(valet('USD/CAD', [])).days, []);
  });

  it('reads a value written as a JSON number by its literal text', () => {
    const document = parseBocObservations('{"seriesDetail":{"FXUSDCAD":{"label":"USD/CAD"}},"observations":[{"d":"2026-03-18","FXUSDCAD":{"v":1.3700}}]}');
    assert.equal(document.days[0]!.rates['USD'], '1/1.3700');
  });

  it('rejects malformed answers with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /body is empty/],
      ['<html><body>Service unavailable</body></html>', /HTML or XML page/],
      ['{"seriesDetail":{"FXUSDCAD":{"label":"USD/CAD"}},"observations":[{"d":"2026-03-18","FXUSDCAD":{"v":"1.37', /invalid or truncated JSON/],
      ['[]', /expected an object/],
      ['{"observations":[]}', /"seriesDetail" is undefined/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXOTHER: { v: '1.3706' } }]), /FXOTHER, a series the answer does not describe/],
      [valet('USD/EUR', []), /not quoted against the Canadian dollar/],
      [valet('US dollar', []), /no label of the form XXX\/CAD/],
      [valet('USD/CAD', [{ d: '18/03/2026', FXTEST: { v: '1.3706' } }]), /no date "d"/],
      [valet('USD/CAD', [{ d: '2026-02-30', FXTEST: { v: '1.3706' } }]), /no date "d"/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: { v: '1.37' } }, { d: '2026-03-18', FXTEST: { v: '1.37' } }]), /2026-03-18 appears twice/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: { v: '1,3706' } }]), /FXTEST on 2026-03-18: "1,3706" is not a plain decimal/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: { v: '-1.3706' } }]), /not a plain decimal/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: { v: '0.0000' } }]), /the rate is zero/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: '1.3706' }]), /is the string/],
      [valet('USD/CAD', [{ d: '2026-03-18', FXTEST: { v: true } }]), /the value is true/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseBocObservations(body), feedError(pattern), body.slice(0, 80));
  });
});

describe('Bank of Canada provider against a local Valet', () => {
  let server: BankServer;
  let failWith: number | null = null;

  before(async () => {
    server = await startBankServer((url) => {
      if (failWith !== null) return { status: failWith, body: 'unavailable', contentType: 'text/plain' };
      if (`${url.pathname}${url.search}` === recorded.pathAndQuery) return { body: recorded.body, contentType: recorded.contentType };
      const start = url.searchParams.get('start_date');
      const end = url.searchParams.get('end_date');
      if (url.pathname !== GROUP_PATH || start === null || [...url.searchParams.keys()].length !== (end === null ? 1 : 2)) return undefined;
      // Valet's own answer to a range: the same document with the observations within it.
      const answer = JSON.parse(text) as Valet;
      answer.observations = answer.observations.filter((o) => (o['d'] as string) >= start && (end === null || (o['d'] as string) <= end));
      return { body: JSON.stringify(answer), contentType: recorded.contentType };
    });
  });
  after(() => server.close());

  const provider = (clockIso: string, baseUrl = server.origin) => createBocProvider({ baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('asks for the last week exactly as recorded and answers with the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-19T12:00:00Z', `${server.origin}/`).latest();
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.equal(latest.provider, 'boc');
    assert.deepEqual(latest.days, [parseBocObservations(text).days.at(-1)]);
  });

  it('asks for a range with start_date and end_date and keeps the days within it', async () => {
    server.requests.length = 0;
    const series = await provider('2026-03-19T12:00:00Z').series({ from: '2026-03-13', to: '2026-03-17' });
    assert.deepEqual(server.requests, [`${GROUP_PATH}?start_date=2026-03-13&end_date=2026-03-17`]);
    assert.deepEqual(
      series.days.map((d) => d.day),
      ['2026-03-13', '2026-03-16', '2026-03-17'],
    );
    const full = parseBocObservations(text);
    assert.deepEqual(series.days, full.days.slice(1, 4));
  });

  it('fails latest when the week holds no published day', async () => {
    await assert.rejects(provider('2026-03-30T12:00:00Z').latest(), feedError(/nothing published in the 7 days to 2026-03-30/));
  });

  it('turns an HTTP error into a FeedError', async () => {
    failWith = 503;
    try {
      await assert.rejects(provider('2026-03-19T12:00:00Z').latest(), feedError(/HTTP 503/));
    } finally {
      failWith = null;
    }
  });

  it('describes itself', () => {
    const made = provider('2026-03-20T12:00:00Z');
    assert.deepEqual([made.id, made.base], ['boc', 'CAD']);
    assert.deepEqual(BOC_METADATA, {
      name: 'Bank of Canada',
      label: 'Bank of Canada',
      kind: 'central bank',
      base: 'CAD',
      quotes: BOC_METADATA.quotes,
      termsUrl: 'https://www.bankofcanada.ca/terms/',
      schedule: BOC_METADATA.schedule,
    });
    assert.match(BOC_METADATA.schedule, /16:30 Eastern/);
  });
});
