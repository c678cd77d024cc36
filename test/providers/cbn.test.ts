import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { CBN_METADATA, createCbnProvider, parseCbnRates } from '../../src/providers/cbn.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { cbnRecording, cbnStandIn } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recorded = cbnRecording;
const text = recorded.body.toString('utf8');
const DAYS = ['2026-05-14', '2026-05-15', '2026-05-18', '2026-05-19', '2026-05-20', '2026-05-21'];

describe('CBN parser, on the recorded document', () => {
  it('cbn/01.json (six business days, newest first, currencies named in words): naira per unit, the central rate, exact', () => {
    const document = parseCbnRates(text);
    assert.equal(document.base, 'NGN');
    assert.deepEqual(document.days.map((d) => d.day), DAYS);
    const entries = JSON.parse(text) as Array<{ currency: string; ratedate: string; centralrate: string }>;
    assert.equal(entries.length, 78);
    const codes: Record<string, string> = { CFA: 'XOF', 'DANISH KRONA': 'DKK', EURO: 'EUR', 'POUNDS STERLING': 'GBP', RIYAL: 'SAR', SDR: 'XDR', 'SOUTH AFRICAN RAND': 'ZAR', 'SWISS FRANC': 'CHF', 'UAE DIRHAM': 'AED', 'US DOLLAR': 'USD', YEN: 'JPY', 'YUAN/RENMINBI': 'CNY' };
    for (const entry of entries) {
      const rates = document.days.find((d) => d.day === entry.ratedate)!.rates;
      if (entry.currency === 'WAUA') continue;
      assert.equal(rates[codes[entry.currency]!], `1/${entry.centralrate}`, `${entry.ratedate} ${entry.currency}`);
    }
    for (const day of document.days) assert.deepEqual(Object.keys(day.rates).sort(), Object.values(codes).sort(), day.day);
    const newest = document.days.at(-1)!.rates;
    assert.equal(newest['USD'], '1/1371.8079');
    // Read the right way round: the riyal at its 3.75 peg and the CFA franc near 656 to the euro.
    assert.ok(new Decimal(newest['USD']!.slice(2)).div(newest['SAR']!.slice(2)).minus('3.75').abs().lt('0.01'));
    assert.ok(new Decimal(newest['EUR']!.slice(2)).div(newest['XOF']!.slice(2)).minus('655.957').abs().lt('3'));
    assert.equal(validateDocument(document, clockAt('2026-05-22T12:00:00Z')).document.days.length, 6);
  });

  it('a malformed document is refused whole; a name not mapped is left out', () => {
    const usd = (fields: string) => `[{"id":1,"currency":"US DOLLAR",${fields}}]`;
    assert.deepEqual(parseCbnRates(usd('"ratedate":"2026-05-21","centralrate":"1371.8079"')).days[0]!.rates, { USD: '1/1371.8079' });
    assert.throws(() => parseCbnRates(usd('"ratedate":"2026-05-21","centralrate":1371.8')), feedError(/centralrate is the number 1371\.8, not a string/));
    assert.throws(() => parseCbnRates(usd('"ratedate":"2026-05-21","centralrate":"1,371.80"')), feedError(/is not a plain decimal/));
    assert.throws(() => parseCbnRates(usd('"ratedate":"21/05/2026","centralrate":"1"')), feedError(/ratedate is the string "21\/05\/2026"/));
    assert.throws(() => parseCbnRates('{"message":"error"}'), feedError(/expected an array/));
    assert.throws(() => parseCbnRates('<html><body>Access denied</body></html>'), feedError(/HTML or XML page/));
    const one = '{"currency":"EURO","ratedate":"2026-05-21","centralrate":"1590.1997"}';
    assert.throws(() => parseCbnRates(`[${one},${one}]`), feedError(/EUR is quoted twice on 2026-05-21/));
    assert.deepEqual(parseCbnRates('[{"currency":"NEW CURRENCY","ratedate":"2026-05-21","centralrate":"1"}]').days, []);
  });
});

describe('CBN provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer(cbnStandIn);
  });
  after(() => server.close());
  const provider = (now: string, baseUrl = server.origin) => createCbnProvider({ baseUrl, timeoutMs: 5000, clock: clockAt(now), paceMs: 0 });

  it('latest: the recorded request, the newest day of it', async () => {
    server.requests.length = 0;
    const document = await provider('2026-05-22T12:50:00Z').latest();
    assert.deepEqual(server.requests, [recorded.pathAndQuery]);
    assert.deepEqual(document.days, [parseCbnRates(text).days.at(-1)]);
  });

  it('a range of any length: one request, cut to the range; five years hold what the answer holds', async () => {
    server.requests.length = 0;
    const week = await provider('2026-05-22T12:50:00Z').series({ from: '2026-05-15', to: '2026-05-19' });
    assert.deepEqual(week.days.map((d) => d.day), ['2026-05-15', '2026-05-18', '2026-05-19']);
    const years = await provider('2026-05-22T12:50:00Z').series({ from: '2021-05-22', to: '2026-05-22' });
    assert.deepEqual(years.days.map((d) => d.day), DAYS);
    assert.equal(server.requests.length, 2);
  });

  it('fails latest when the last week holds nothing, and turns a missing page into a FeedError', async () => {
    await assert.rejects(provider('2026-06-30T12:00:00Z').latest(), feedError(/nothing published in the 7 days to 2026-06-30/));
    await assert.rejects(provider('2026-05-22T12:00:00Z', `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
  });

  it('describes itself', () => {
    assert.deepEqual([CBN_METADATA.base, CBN_METADATA.kind, CBN_METADATA.termsUrl], ['NGN', 'central bank', 'https://www.cbn.gov.ng/Legal.html']);
  });
});
