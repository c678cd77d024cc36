import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/core/ports.js';
import { retentionStart } from '../../src/core/refresh.js';
import { parseBnrXml } from '../../src/providers/bnr.js';
import { createNbkProvider, NBK_METADATA, parseNbkRates } from '../../src/providers/nbk.js';
import { D } from '../e2e/independent.js';
import { recordingsOf, startBankServer, type BankServer } from '../support/bank-server.js';
import { feedError } from '../support/errors.js';
import { storedValue } from '../support/ecb-check.js';

const recordings = recordingsOf('nbk');
const texts = recordings.map((r) => r.body.toString('utf8'));
const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const item = (title: string, description: string, quant: string) => `<item><fullname>X</fullname><title>${title}</title><description>${description}</description><quant>${quant}</quant></item>`;
const doc = (date: string, ...items: string[]) => `<?xml version="1.0" encoding="utf-8"?>\n<rates><title>Official exchange rates</title><date>${date}</date>${items.join('')}</rates>`;

describe('NBK parser on the recorded documents', () => {
  it('stores tenge per quant units as the exact reciprocal of tenge per unit, under the document\'s date', () => {
    texts.forEach((text, i) => {
      const document = parseNbkRates(text);
      assert.equal(document.base, 'KZT');
      assert.deepEqual(document.days.map((d) => d.day), [`2026-04-0${i + 1}`]);
      assert.equal(document.days[0]!.asOf, `2026-04-0${i + 1}T00:00:00Z`);
      const rates = document.days[0]!.rates;
      // Independently: each item's title, description and quant, read with decimal.js.
      const items = [...text.matchAll(/<title>([A-Z]{3})<\/title>\s*<description>([\d.]+)<\/description>\s*<quant>(\d+)<\/quant>/g)];
      assert.equal(items.length, 39);
      assert.equal(Object.keys(rates).length, 39);
      for (const [, code, value, quant] of items as unknown as Array<[string, string, string, string]>) {
        assert.ok(new D(rates[code]!.slice(2)).eq(new D(value).div(quant)), `${code}: ${rates[code]} for ${value} per ${quant}`);
      }
    });
    const first = parseNbkRates(texts[0]!).days[0]!.rates;
    assert.equal(first['USD'], '1/478.77');
    assert.equal(first['AMD'], '1/1.272');
    assert.equal(first['KRW'], '1/0.3129');
    assert.equal(first['JPY'], '1/3');
    assert.equal(first['XDR'], '1/650.07');
  });

  it('reads the direction and the quantities right: within 3% of the BNR\'s crosses through the dollar on the same days', () => {
    const bnr = parseBnrXml(recordingsOf('bnr')[0]!.body.toString('utf8'));
    let checked = 0;
    for (const text of texts) {
      const day = parseNbkRates(text).days[0]!;
      const lei = bnr.days.find((d) => d.day === day.day)!.rates;
      for (const [code, stored] of Object.entries(day.rates)) {
        if (lei[code] === undefined || code === 'USD') continue;
        // Dollars per unit of the currency, by each bank.
        const byNbk = storedValue(day.rates['USD']!).div(storedValue(stored));
        const byBnr = storedValue(lei['USD']!).div(storedValue(lei[code]!));
        assert.ok(byNbk.div(byBnr).minus(1).abs().lt(0.03), `${day.day} ${code}: ${byNbk.toSignificantDigits(6).toString()} vs ${byBnr.toSignificantDigits(6).toString()}`);
        checked += 1;
      }
    }
    assert.ok(checked >= 60, `${checked}`);
  });

  it('rejects malformed documents with a clear error', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /the XML is empty/],
      ['<html><body>502', /got an HTML page instead of XML/],
      ['<?xml version="1.0"?><error>no data</error>', /not the bank's rates document/],
      [doc('2026-04-01', item('USD', '478.77', '1')), /date "2026-04-01" is not a date DD.MM.YYYY/],
      [doc('01.04.2026', item('usd', '478.77', '1')), /item #0: title is "usd", not a currency code/],
      [doc('01.04.2026', item('KZT', '1', '1')), /title is "KZT"/],
      [doc('01.04.2026', item('USD', '478,77', '1')), /USD on 2026-04-01: "478,77" is not a plain decimal/],
      [doc('01.04.2026', item('USD', ' 478.77', '1')), /" 478.77" is not a plain decimal/],
      [doc('01.04.2026', item('USD', '0.00', '1')), /the rate is zero/],
      [doc('01.04.2026', item('USD', '478.77', 'one')), /"one" is not a whole number of units/],
      [doc('01.04.2026', '<item><title>USD</title><quant>1</quant></item>'), /USD on 2026-04-01: the item has no description or quant/],
      [doc('01.04.2026', item('USD', '478.77', '1'), item('USD', '478.78', '1')), /USD is quoted twice on 2026-04-01/],
      [texts[0]!.slice(0, 3000), /not well-formed/],
    ];
    for (const [body, pattern] of cases) assert.throws(() => parseNbkRates(body), feedError(pattern), body.slice(0, 100));
    assert.deepEqual(parseNbkRates(doc('01.04.2026')).days, []);
  });
});

describe('NBK provider against a local stand-in', () => {
  let server: BankServer;
  before(async () => {
    server = await startBankServer((url) => {
      const exact = recordings.find((r) => r.pathAndQuery === `${url.pathname}${url.search}`);
      if (exact) return { body: exact.body, contentType: exact.contentType };
      // Another date: the document of that date without items (the stand-in holds three days).
      const fdate = url.searchParams.get('fdate') ?? '';
      if (url.pathname === '/rss/get_rates.cfm' && /^\d{2}\.\d{2}\.\d{4}$/.test(fdate)) {
        return { body: texts[0]!.slice(0, texts[0]!.indexOf('<item>')).replace('<date>01.04.2026</date>', `<date>${fdate}</date>`) + '</rates>', contentType: recordings[0]!.contentType };
      }
      return undefined;
    });
  });
  after(() => server.close());
  const provider = (clockIso: string, log?: { info(obj: object, msg?: string): void }, baseUrl = server.origin) =>
    createNbkProvider({ baseUrl, timeoutMs: 5_000, clock: clockAt(clockIso), log, paceMs: 1 });

  it('latest: today\'s document, the recorded request', async () => {
    server.requests.length = 0;
    const latest = await provider('2026-04-02T12:00:00Z').latest();
    assert.deepEqual(server.requests, [recordings[1]!.pathAndQuery]);
    assert.deepEqual(latest.days, parseNbkRates(texts[1]!).days);
  });

  it('a range: the recorded requests, a day each', async () => {
    server.requests.length = 0;
    const document = await provider('2026-04-08T13:43:25Z').series({ from: '2026-04-01', to: '2026-04-03' });
    assert.deepEqual(server.requests, recordings.map((r) => r.pathAndQuery));
    assert.deepEqual(document.days, texts.flatMap((text) => parseNbkRates(text).days));
  });

  it('the first 5-year load: a request per day up to today, in turn, with progress lines', async () => {
    server.requests.length = 0;
    const clock = clockAt('2026-04-03T12:00:00Z');
    const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
    const range = { from: retentionStart(clock, 5), to: '2026-04-10' };
    const document = await provider('2026-04-03T12:00:00Z', { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) }).series(range);
    assert.equal(server.requests[0], `/rss/get_rates.cfm?fdate=${range.from.slice(8, 10)}.${range.from.slice(5, 7)}.${range.from.slice(0, 4)}`);
    assert.equal(server.requests.at(-1), '/rss/get_rates.cfm?fdate=03.04.2026');
    assert.equal(server.requests.length, (Date.parse('2026-04-03') - Date.parse(range.from)) / 86_400_000 + 1);
    assert.deepEqual(document.days.map((d) => d.day), ['2026-04-01', '2026-04-02', '2026-04-03']);
    assert.deepEqual([lines[0]!.msg, lines[0]!.obj['provider'], lines[0]!.obj['requests']], ['loading history in paced requests', 'nbk', server.requests.length]);
    assert.equal(lines.at(-1)!.msg, 'history loaded');
  });

  it('latest goes a day back at a time past days without rates; fails on an error answer and on a week without rates', async () => {
    await assert.rejects(provider('2026-04-02T12:00:00Z', undefined, `${server.origin}/elsewhere`).latest(), feedError(/HTTP 404/));
    // Days without rates in the stand-in: a day back at a time, the last with rates found.
    server.requests.length = 0;
    assert.deepEqual((await provider('2026-04-05T12:00:00Z').latest()).days.map((d) => d.day), ['2026-04-03']);
    assert.deepEqual(server.requests, ['05.04.2026', '04.04.2026', '03.04.2026'].map((d) => `/rss/get_rates.cfm?fdate=${d}`));
    await assert.rejects(provider('2026-05-20T12:00:00Z').latest(), feedError(/nothing published in the 8 days to 2026-05-20/));
  });

  it('describes itself', () => {
    assert.deepEqual([NBK_METADATA.base, NBK_METADATA.kind, NBK_METADATA.label], ['KZT', 'central bank', 'NBK']);
  });
});
