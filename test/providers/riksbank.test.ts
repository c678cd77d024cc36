import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { createRiksbankProvider, parseRiksbankObservations, RIKSBANK_METADATA } from '../../src/providers/riksbank.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';

const recorded = recordingsOf('rb')[0]!;
const text = recorded.body.toString('utf8');
const GROUP_PATH = '/swea/v1/Observations/ByGroup/130';
const OBSERVATION = /\{"seriesId":"(\w+)","date":"([\d-]+)","value":([^}]*)\}/g;

const fixedClock = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

/** The recorded observations read from the raw text, each value as its literal digits. */
function recordedObservations(): Array<{ seriesId: string; date: string; value: string }> {
  return [...text.matchAll(OBSERVATION)].map((m) => ({ seriesId: m[1]!, date: m[2]!, value: m[3]! }));
}

describe('Riksbank parser on the recorded SWEA answer', () => {
  const document = parseRiksbankObservations(text);

  it('stores every published number, kronor per unit, as `1/` and the number as written, on the four recorded days', () => {
    assert.equal(document.provider, 'riksbank');
    assert.equal(document.base, 'SEK');
    assert.deepEqual(
      document.days.map((d) => d.day),
      ['2026-03-24', '2026-03-25', '2026-03-26', '2026-03-27'],
    );
    const observations = recordedObservations();
    assert.equal(observations.length, 120);
    for (const { seriesId, date, value } of observations) {
      const rates = document.days.find((d) => d.day === date)!.rates;
      if (seriesId === 'SEKETT') {
        assert.equal(value, '1');
        assert.equal(rates['SEK'], undefined);
      } else {
        assert.equal(rates[seriesId.slice(3, 6)], `1/${value}`, `${seriesId} ${date}`);
      }
    }
    for (const day of document.days) assert.equal(Object.keys(day.rates).length, 29, day.day);
    const first = document.days[0]!.rates;
    assert.equal(first['USD'], '1/9.35344');
    assert.equal(first['AUD'], '1/6.5');
    assert.equal(first['IDR'], '1/0.00055');
  });

  it('reads this API per unit even for the currencies the bank lists per 100 (yen at about 0.06 kronor)', () => {
    const rates = document.days[0]!.rates;
    assert.equal(rates['JPY'], '1/0.05885');
    assert.equal(rates['DKK'], '1/1.44876');
  });

  it('dates each day at 12:10 Stockholm time', () => {
    assert.equal(document.days[0]!.asOf, '2026-03-24T11:10:00Z');
  });
});

describe('Riksbank parser on other answers', () => {
  it('skips null values, keeps the literal of an exponent-written number, and reads [] as no days', () => {
    const document = parseRiksbankObservations(
      '[{"seriesId":"SEKUSDPMI","date":"2026-03-24","value":null},{"seriesId":"SEKIDRPMI","date":"2026-03-24","value":5.5e-4},{"seriesId":"SEKEURPMI","date":"2026-03-24","value":10.8200}]',
    );
    assert.deepEqual(document.days[0]!.rates, { IDR: '1/0.00055', EUR: '1/10.8200' });
    assert.deepEqual(parseRiksbankObservations('[]').days, []);
  });

  it('rejects malformed answers with a clear error', () => {
    const one = (fields: string) => `[{${fields}}]`;
    const cases: Array<[string, RegExp]> = [
      ['', /body is empty/],
      ['<!DOCTYPE html><html></html>', /HTML or XML page/],
      ['[{"seriesId":"SEKUSDPMI","date":"2026-03-24","value":9.3', /invalid or truncated JSON/],
      ['{"error":"Too many requests"}', /expected an array of observations, got an object/],
      ['[1]', /observation #0 is the number 1/],
      [one('"date":"2026-03-24","value":9.35'), /observation #0 has no "seriesId"/],
      [one('"seriesId":"SEKUSDPMI","value":9.35'), /has no "date"/],
      [one('"seriesId":"SEKUSDPMI","date":"2026-03-24"'), /has no "value"/],
      [one('"seriesId":"SEKUSDPMI","date":"24/03/2026","value":9.35'), /"date" is the string "24\/03\/2026"/],
      [one('"seriesId":"SECBREPOEFF","date":"2026-03-24","value":2.25'), /"SECBREPOEFF" is not a series of a currency against the krona/],
      [one('"seriesId":"SEKUSDPMI","date":"2026-03-24","value":"9.35"'), /the value is the string "9.35", not a number/],
      [one('"seriesId":"SEKUSDPMI","date":"2026-03-24","value":-9.35'), /not a plain decimal/],
      [one('"seriesId":"SEKUSDPMI","date":"2026-03-24","value":0'), /the rate is zero/],
      ['[{"seriesId":"SEKUSDPMI","date":"2026-03-24","value":9.35},{"seriesId":"SEKUSDPMI","date":"2026-03-24","value":9.36}]', /USD is quoted twice/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseRiksbankObservations(body), feedError(pattern), body.slice(0, 100));
  });
});

describe('Riksbank provider against a local SWEA API', () => {
  let server: BankServer;
  const ROUTE = new RegExp(`^${GROUP_PATH}/(\\d{4}-\\d{2}-\\d{2})/(\\d{4}-\\d{2}-\\d{2})$`);

  before(async () => {
    server = await startBankServer((url) => {
      if (`${url.pathname}${url.search}` === recorded.pathAndQuery) return { body: recorded.body, contentType: recorded.contentType };
      const match = ROUTE.exec(url.pathname);
      if (!match || url.search !== '') return undefined;
      const [, from, to] = match as unknown as [string, string, string];
      // The API's answer to another window: the recorded observations within it, as written.
      const kept = [...text.matchAll(OBSERVATION)].filter((m) => m[2]! >= from && m[2]! <= to).map((m) => m[0]);
      return { body: `[${kept.join(',')}]`, contentType: recorded.contentType };
    });
  });
  after(() => server.close());

  const provider = (clockIso: string, baseUrl = server.origin) => createRiksbankProvider({ baseUrl, timeoutMs: 5_000, clock: fixedClock(clockIso) });

  it('answers a range from the recorded request exactly', async () => {
    server.requests.length = 0;
    const series = await provider('2026-03-30T12:00:00Z', `${server.origin}/`).series({ from: '2026-03-24', to: '2026-03-28' });
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(series, parseRiksbankObservations(text));
  });

  it('asks for the last eight days for latest and answers with the newest day', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-03-30T12:00:00Z').latest();
    assert.deepEqual(server.requests, [`${GROUP_PATH}/2026-03-22/2026-03-30`]);
    assert.deepEqual(latest.days, [parseRiksbankObservations(text).days.at(-1)]);
  });

  it('fails latest when the window holds no published day', async () => {
    await assert.rejects(provider('2026-04-20T12:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-04-20/));
  });

  it('turns a missing document into a FeedError', async () => {
    await assert.rejects(provider('2026-03-30T12:00:00Z', `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    const made = provider('2026-03-20T12:00:00Z');
    assert.deepEqual([made.id, made.base], ['riksbank', 'SEK']);
    assert.equal(RIKSBANK_METADATA.name, 'Sveriges Riksbank');
    assert.equal(RIKSBANK_METADATA.kind, 'central bank');
    assert.equal(RIKSBANK_METADATA.base, 'SEK');
    assert.match(RIKSBANK_METADATA.schedule, /12:10 Stockholm/);
  });
});
