import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { createNbrbProvider, NBRB_METADATA, nbrbCurrencies, parseNbrbDynamics, parseNbrbRates } from '../../src/providers/nbrb.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { literal, nbrbDynamics, nbrbRecordings, nbrbStandIn, rawEntries } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recordings = nbrbRecordings;
const table = recordings[0]!;
const tableText = table.body.toString('utf8');
const dynamics = nbrbDynamics;

describe('NBRB parsers, on the recorded documents', () => {
  it('nbrb/01.json (the day\'s table, 30 currencies): roubles per Cur_Scale units made exact per-unit rates', () => {
    const document = parseNbrbRates(tableText);
    assert.equal(document.provider, 'nbrb');
    assert.equal(document.base, 'BYN');
    assert.deepEqual(document.days.map((d) => d.day), ['2026-03-17']);
    const rates = document.days[0]!.rates;
    const entries = rawEntries(tableText);
    assert.equal(entries.length, 30);
    assert.equal(Object.keys(rates).length, 30);
    for (const entry of entries) {
      const code = literal(entry, 'Cur_Abbreviation');
      const stored = rates[code]!;
      assert.match(stored, /^1\/\d+(\.\d+)?$/, code);
      // Read independently with decimal.js from the published literal and scale.
      assert.ok(new Decimal(stored.slice(2)).eq(new Decimal(literal(entry, 'Cur_OfficialRate')).div(literal(entry, 'Cur_Scale'))), code);
    }
    assert.equal(rates['USD'], '1/2.9463');
    assert.equal(rates['AUD'], '1/2.0700');
    assert.equal(rates['AMD'], '1/0.0078014');
    assert.equal(rates['VND'], '1/0.000112071');
    assert.equal(rates['IRR'], '1/0.000002229');
    assert.equal(validateDocument(document, clockAt('2026-03-17T12:00:00Z')).document.days.length, 1);
  });

  it('each currency\'s recorded dynamics (1 to 17 March): every calendar day, at the table\'s scale, meeting the table on the 17th', () => {
    const currencies = nbrbCurrencies(tableText);
    assert.equal(dynamics.size, currencies.length);
    const today = parseNbrbRates(tableText).days[0]!.rates;
    for (const currency of currencies) {
      const text = dynamics.get(currency.id)!.body.toString('utf8');
      const document = parseNbrbDynamics(text, currency);
      assert.deepEqual(document.days.map((d) => d.day), Array.from({ length: 17 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`), currency.code);
      rawEntries(text).forEach((entry, i) => {
        const stored = document.days[i]!.rates[currency.code]!;
        assert.ok(new Decimal(stored.slice(2)).eq(new Decimal(literal(entry, 'Cur_OfficialRate')).div(currency.scale)), `${currency.code} ${document.days[i]!.day}`);
      });
      assert.equal(document.days.at(-1)!.rates[currency.code], today[currency.code], currency.code);
    }
    // The weekend carries Friday's rate (6, 7 and 8 March).
    const vnd = parseNbrbDynamics(dynamics.get('512')!.body.toString('utf8'), { id: '512', code: 'VND', scale: '100000' });
    assert.deepEqual(vnd.days.slice(5, 8).map((d) => d.rates['VND']), ['1/0.000110652', '1/0.000110652', '1/0.000110652']);
  });

  it('a malformed table or series refuses the document', () => {
    const usd = (fields: string) => `[{"Cur_ID":431,"Date":"2026-03-17T00:00:00","Cur_Abbreviation":"USD",${fields}}]`;
    assert.throws(() => parseNbrbRates(usd('"Cur_Scale":1,"Cur_OfficialRate":0')), feedError(/Cur_OfficialRate is the number 0, not a positive number/));
    assert.throws(() => parseNbrbRates(usd('"Cur_Scale":"1","Cur_OfficialRate":2.9')), feedError(/Cur_Scale is the string/));
    assert.throws(() => parseNbrbRates(usd('"Cur_Scale":3,"Cur_OfficialRate":1')), feedError(/no exact per-unit decimal/));
    assert.throws(() => parseNbrbRates(usd('"Cur_Scale":1,"Cur_OfficialRate":"2.9463"')), feedError(/not a positive number/));
    assert.throws(() => parseNbrbRates('[{"Cur_ID":431,"Date":"17.03.2026","Cur_Abbreviation":"USD","Cur_Scale":1,"Cur_OfficialRate":2.9}]'), feedError(/Date is the string "17.03.2026"/));
    assert.throws(() => parseNbrbRates('{"error":"x"}'), feedError(/expected an array/));
    assert.throws(() => parseNbrbRates('<html>busy</html>'), feedError(/HTML or XML page/));
    const usdDay = '{"Cur_ID":431,"Date":"2026-03-17T00:00:00","Cur_OfficialRate":2.9463}';
    const currency = { id: '431', code: 'USD', scale: '1' };
    assert.deepEqual(parseNbrbDynamics(`[${usdDay}]`, currency).days[0]!.rates, { USD: '1/2.9463' });
    assert.throws(() => parseNbrbDynamics(`[${usdDay}]`, { ...currency, id: '145' }), feedError(/Cur_ID 431 in the series of Cur_ID 145/));
    assert.throws(() => parseNbrbDynamics(`[${usdDay},${usdDay}]`, currency), feedError(/USD is quoted twice on 2026-03-17/));
  });
});

describe('NBRB provider against a local stand-in', () => {
  let server: BankServer;
  const logged: Array<{ obj: object; msg?: string }> = [];
  before(async () => {
    server = await startBankServer(nbrbStandIn);
  });
  after(() => server.close());
  const provider = (now = '2026-03-17T15:00:00Z') =>
    createNbrbProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0, log: { info: (obj, msg) => logged.push({ obj, ...(msg === undefined ? {} : { msg }) }) } });

  it('latest: the table of today (UTC), asked by date', async () => {
    server.requests.length = 0;
    const document = await provider().latest();
    assert.deepEqual(server.requests, ['/exrates/rates?ondate=2026-03-17&periodicity=0']);
    assert.deepEqual(document, parseNbrbRates(tableText));
  });

  it('a range: the table, then each currency\'s series exactly as recorded, gathered into days', async () => {
    server.requests.length = 0;
    const document = await provider().series({ from: '2026-03-01', to: '2026-03-17' });
    assert.equal(server.requests[0], '/exrates/rates?ondate=2026-03-17&periodicity=0');
    assert.deepEqual(server.requests.slice(1), recordings.slice(2).map((r) => r.pathAndQuery));
    assert.equal(document.days.length, 17);
    for (const day of document.days) assert.equal(Object.keys(day.rates).length, 30, day.day);
    assert.deepEqual(document.days.at(-1), parseNbrbRates(tableText).days[0]);
  });

  it('five years: a year of a currency a request, nothing after today, with progress lines', async () => {
    server.requests.length = 0;
    logged.length = 0;
    const document = await provider().series({ from: '2021-03-18', to: '2026-03-31' });
    assert.equal(server.requests.length, 1 + 6 * 30);
    for (const path of server.requests.slice(1)) {
      const q = new URL(path, 'http://x').searchParams;
      const days = (Date.parse(q.get('endDate')!) - Date.parse(q.get('startDate')!)) / 86_400_000 + 1;
      assert.ok(days >= 1 && days <= 365, path);
      assert.ok(q.get('endDate')! <= '2026-03-17', path);
    }
    assert.equal(document.days.length, 17);
    assert.ok(logged.some((l) => l.msg === 'loading history in paced requests'));
    assert.ok(logged.some((l) => l.msg === 'history loaded'));
  });

  it('one currency failing fails the whole load', async () => {
    const broken = await startBankServer((url) =>
      url.pathname === '/exrates/rates' ? { body: table.body, contentType: table.contentType } : url.pathname.endsWith('/451') ? { status: 500, body: 'oops', contentType: 'text/plain' } : { body: '[]', contentType: 'application/json' },
    );
    try {
      const failing = createNbrbProvider({ baseUrl: broken.origin, timeoutMs: 5000, clock: clockAt('2026-03-17T15:00:00Z'), paceMs: 0 });
      await assert.rejects(failing.series({ from: '2026-03-01', to: '2026-03-17' }), feedError(/dynamics\/451.*HTTP 500/));
    } finally {
      await broken.close();
    }
  });

  it('describes itself', () => {
    assert.deepEqual([NBRB_METADATA.base, NBRB_METADATA.kind], ['BYN', 'central bank']);
    assert.match(NBRB_METADATA.schedule, /Minsk/);
  });
});
