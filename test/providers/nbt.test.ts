import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { FeedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/core/ports.js';
import { validateDocument } from '../../src/core/refresh.js';
import { createNbtProvider, NBT_METADATA, parseNbtRates } from '../../src/providers/nbt.js';
import { startBankServer, type BankServer } from '../support/bank-server.js';
import { field, nbtByDay, nbtEmptyDay, nbtRecordings, nbtStandIn } from '../support/bank-stand-ins.js';

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const feedError = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  assert.match(error.message, pattern);
  return true;
};

const recordings = nbtRecordings;
const byDay = nbtByDay;
const EMPTY_DAY = nbtEmptyDay;

describe('NBT parser, on the recorded documents', () => {
  it('nbt/01-03.xml (18 to 20 May, 36 currencies each): somoni per Nominal units made exact per-unit rates', () => {
    for (const [day, recording] of byDay) {
      const text = recording.body.toString('utf8');
      const document = parseNbtRates(text);
      assert.equal(document.base, 'TJS');
      assert.deepEqual(document.days.map((d) => d.day), [day]);
      const valutes = text.match(/<Valute ID="\d+">[\s\S]*?<\/Valute>/g)!;
      assert.equal(valutes.length, 36);
      const rates = document.days[0]!.rates;
      assert.equal(Object.keys(rates).length, 36);
      for (const valute of valutes) {
        const code = field(valute, 'CharCode');
        assert.ok(new Decimal(rates[code]!.slice(2)).eq(new Decimal(field(valute, 'Value')).div(field(valute, 'Nominal'))), `${day} ${code}`);
      }
      assert.equal(validateDocument(document, clockAt('2026-05-22T12:00:00Z')).document.days.length, 1);
    }
    const first = parseNbtRates(recordings[0]!.body.toString('utf8')).days[0]!.rates;
    assert.equal(first['USD'], '1/9.3450');
    assert.equal(first['UZS'], '1/0.000780');
    assert.equal(first['IRR'], '1/0.0000071');
    assert.equal(first['KGS'], '1/0.10686');
  });

  it('a day without rates is an empty document; a malformed one is refused whole', () => {
    assert.deepEqual(parseNbtRates(EMPTY_DAY('2026-05-21')).days, []);
    const usd = (inner: string) => `<?xml version="1.0" encoding="utf-8" ?><ValCurs Date="2026-05-18" name="Foreign Currency Market"><Valute ID="840">${inner}</Valute></ValCurs>`;
    assert.deepEqual(parseNbtRates(usd('<CharCode>USD</CharCode><Nominal>1</Nominal><Value>9.3450</Value>')).days[0]!.rates, { USD: '1/9.3450' });
    assert.throws(() => parseNbtRates(usd('<CharCode>USD</CharCode><Nominal>1</Nominal><Value>9,3450</Value>')), feedError(/"9,3450" is not a plain decimal/));
    assert.throws(() => parseNbtRates(usd('<CharCode>USD</CharCode><Nominal>1</Nominal><Value> 9.3450</Value>')), feedError(/is not a plain decimal/));
    assert.throws(() => parseNbtRates(usd('<CharCode>USD</CharCode><Nominal>x</Nominal><Value>9.3450</Value>')), feedError(/not a whole number of units/));
    assert.throws(() => parseNbtRates(usd('<CharCode>US</CharCode><Nominal>1</Nominal><Value>9.3450</Value>')), feedError(/CharCode "US" is not a currency code/));
    assert.throws(() => parseNbtRates(usd('<CharCode>USD</CharCode><Nominal>1</Nominal><Value>9.3450</Value>').replace('2026-05-18', '18.05.2026')), feedError(/ValCurs Date "18.05.2026"/));
    assert.throws(() => parseNbtRates(usd('<CharCode>USD</CharCode>').slice(0, -12)), feedError(/not well-formed/));
    assert.throws(() => parseNbtRates('<!DOCTYPE html><html><body>Maintenance</body></html>'), feedError(/HTML page/));
  });
});

describe('NBT provider against a local stand-in', () => {
  let server: BankServer;
  const logged: string[] = [];
  before(async () => {
    server = await startBankServer(nbtStandIn);
  });
  after(() => server.close());
  const provider = (now: string) => createNbtProvider({ baseUrl: server.origin, timeoutMs: 5000, clock: clockAt(now), paceMs: 0, log: { info: (_obj, msg) => logged.push(msg ?? '') } });

  it('latest: today (UTC), the recorded request exactly; before the morning\'s rates, the day before', async () => {
    server.requests.length = 0;
    assert.deepEqual(await provider('2026-05-19T09:00:00Z').latest(), parseNbtRates(recordings[1]!.body.toString('utf8')));
    assert.deepEqual(server.requests, [recordings[1]!.pathAndQuery]);
    server.requests.length = 0;
    const early = await provider('2026-05-21T02:00:00Z').latest();
    assert.deepEqual(early.days.map((d) => d.day), ['2026-05-20']);
    assert.deepEqual(server.requests, [`/en/kurs/export_xml.php?date=2026-05-21&export=xmlout`, recordings[2]!.pathAndQuery]);
  });

  it('a range: a request a day, the recorded ones exactly', async () => {
    server.requests.length = 0;
    const document = await provider('2026-05-22T09:00:00Z').series({ from: '2026-05-18', to: '2026-05-20' });
    assert.deepEqual(server.requests, recordings.map((r) => r.pathAndQuery));
    assert.deepEqual(document.days.map((d) => d.day), ['2026-05-18', '2026-05-19', '2026-05-20']);
  });

  it('five years: a paced request a day up to today, with progress lines', async () => {
    server.requests.length = 0;
    logged.length = 0;
    const document = await provider('2026-05-20T09:00:00Z').series({ from: '2021-05-21', to: '2026-06-30' });
    assert.equal(server.requests.length, (Date.parse('2026-05-20') - Date.parse('2021-05-21')) / 86_400_000 + 1);
    assert.equal(document.days.length, 3);
    assert.ok(logged.includes('loading history in paced requests') && logged.includes('history loaded'));
  });

  it('describes itself', () => {
    assert.deepEqual([NBT_METADATA.base, NBT_METADATA.kind, NBT_METADATA.termsUrl], ['TJS', 'central bank', null]);
  });
});
