import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { FeedError } from '../../src/core/errors.js';
import type { RateDocument } from '../../src/core/ports.js';
import { ecbReferenceTime } from '../../src/core/time.js';
import { parseEcbCsv, parseEcbDocument, parseEcbXml, withinRange } from '../../src/providers/ecb-format.js';

const ECB_DIR = new URL('../../../shared/data/ecb/', import.meta.url);
const XML_DIR = new URL('xml/', ECB_DIR);
const FIXTURES = new URL('../fixtures/ecb/', import.meta.url);

/** Trailing zeros are formatting only: `1.1900` and `1.19` are the same published value. */
function normalise(decimal: string): string {
  const [int = '', frac = ''] = decimal.split('.');
  const i = int.replace(/^0+(?=\d)/, '');
  const f = frac.replace(/0+$/, '');
  return f === '' ? i : `${i}.${f}`;
}

function dayOf(document: RateDocument, day: string) {
  const found = document.days.find((d) => d.day === day);
  assert.ok(found, `day ${day} present`);
  return found;
}

function assertAscendingUnique(document: RateDocument): void {
  for (let i = 1; i < document.days.length; i++) {
    assert.ok(document.days[i - 1]!.day < document.days[i]!.day, `days ascending at ${document.days[i]!.day}`);
  }
}

const feedError = (pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof FeedError, `expected FeedError, got ${String(error)}`);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

let csvText: string;
let csvLines: string[];
let csvDoc: RateDocument;
let xmlNames: string[];

before(async () => {
  csvText = await readFile(new URL('eurofxref-hist.csv', ECB_DIR), 'utf8');
  csvLines = csvText.split('\n').filter((l) => l !== '');
  csvDoc = parseEcbCsv(csvText);
  xmlNames = (await readdir(XML_DIR)).filter((n) => n.endsWith('.xml')).sort();
});

describe('parseEcbCsv on the real eurofxref-hist.csv', () => {
  it('reads every row, oldest first, as EUR-based ECB quotes', () => {
    assert.equal(csvDoc.provider, 'ecb');
    assert.equal(csvDoc.base, 'EUR');
    assert.equal(csvDoc.days.length, 6958);
    assert.equal(csvDoc.days[0]!.day, '1999-01-04');
    assert.equal(csvDoc.days.at(-1)!.day, '2026-03-05');
    assertAscendingUnique(csvDoc);
  });

  it('stamps each day with the 16:00 Frankfurt reference time', () => {
    assert.equal(dayOf(csvDoc, '2026-03-05').asOf, '2026-03-05T15:00:00Z');
    assert.equal(dayOf(csvDoc, '2025-07-01').asOf, '2025-07-01T14:00:00Z');
    for (const d of csvDoc.days) assert.equal(d.asOf, ecbReferenceTime(d.day));
  });

  it('keeps the rate text exactly as written on spot-checked rows', () => {
    const header = csvLines[0]!.split(',');
    for (const day of ['2026-03-05', '2025-12-31', '2018-02-01', '2010-01-04', '2005-07-01', '1999-01-04']) {
      const line = csvLines.find((l) => l.startsWith(`${day},`));
      assert.ok(line, `raw line for ${day}`);
      const expected: Record<string, string> = {};
      line.split(',').forEach((value, i) => {
        if (i > 0 && header[i] !== '' && value !== 'N/A' && value !== '') expected[header[i]!] = value;
      });
      assert.deepEqual(dayOf(csvDoc, day).rates, expected, day);
    }
    assert.equal(dayOf(csvDoc, '2026-03-05').rates['USD'], '1.1618');
    assert.equal(dayOf(csvDoc, '2026-03-05').rates['IDR'], '19644.7');
    assert.equal(dayOf(csvDoc, '1999-01-04').rates['CYP'], '0.58231');
    assert.equal(dayOf(csvDoc, '1999-01-04').rates['TRL'], '372274');
  });

  it('skips N/A values', () => {
    assert.equal('BGN' in dayOf(csvDoc, '2026-03-05').rates, false);
    assert.equal(dayOf(csvDoc, '2025-12-31').rates['BGN'], '1.9558');
    assert.equal('ISK' in dayOf(csvDoc, '2010-01-04').rates, false);
    assert.equal(dayOf(csvDoc, '2018-02-01').rates['ISK'] !== undefined, true);
    assert.equal(Object.keys(dayOf(csvDoc, '2026-03-05').rates).length, 29);
    assert.equal(Object.keys(dayOf(csvDoc, '1999-01-04').rates).length, 27);
  });

  it('treats the trailing comma as an unnamed empty column, not a currency', () => {
    for (const d of csvDoc.days) {
      for (const code of Object.keys(d.rates)) assert.match(code, /^[A-Z]{3}$/);
      for (const rate of Object.values(d.rates)) assert.match(rate, /^\d+(\.\d+)?$/);
    }
  });

  it('reads CRLF line endings and a byte-order mark the same way', () => {
    const crlf = '\ufeff' + csvText.replaceAll('\n', '\r\n');
    assert.deepEqual(parseEcbCsv(crlf), csvDoc);
  });
});

describe('parseEcbCsv on small edge cases', () => {
  it('reads a small CRLF file with N/A and empty values', async () => {
    const doc = parseEcbCsv(await readFile(new URL('small-hist-crlf.csv', FIXTURES), 'utf8'));
    assert.deepEqual(
      doc.days.map((d) => [d.day, d.rates]),
      [
        ['2024-12-31', { USD: '1.0389', JPY: '163.06' }],
        ['2025-01-02', { USD: '1.0321', JPY: '163.23' }],
        ['2025-01-03', { USD: '1.0299', JPY: '162.93', BGN: '1.9558' }],
      ],
    );
  });

  it('reads a file without the trailing comma and without a final newline', () => {
    const doc = parseEcbCsv('Date,USD,JPY\n2025-01-03,1.0299,N/A');
    assert.deepEqual(doc.days, [{ day: '2025-01-03', asOf: ecbReferenceTime('2025-01-03'), rates: { USD: '1.0299' } }]);
  });

  const header = 'Date,USD,JPY,';
  const cases: Array<[string, string, RegExp]> = [
    ['empty input', '', /empty/],
    ['only whitespace', ' \n\r\n', /empty/],
    ['a header not starting with Date', 'Datum,USD,JPY,\n2025-01-03,1.0299,162.93,\n', /Date/],
    ['garbage', 'this is not a feed at all', /Date/],
    ['a header without rows', `${header}\n`, /no days/],
    ['a truncated row', `${header}\n2025-01-03,1.0299,162.93,\n2025-01-02,1.03`, /line 3 has 2 fields, the header has 4/],
    ['a row with an extra field', `${header}\n2025-01-03,1.0299,162.93,,\n`, /fields/],
    ['a value in the unnamed last column', `${header}\n2025-01-03,1.0299,162.93,5\n`, /unnamed/],
    ['a decimal comma', `${header}\n2025-01-03,"1,2",162.93,\n`, /fields/],
    ['an impossible date', `${header}\n2025-02-30,1.0299,162.93,\n`, /2025-02-30/],
    ['a date in another layout', `${header}\n03/01/2025,1.0299,162.93,\n`, /calendar date/],
    ['a duplicate date', `${header}\n2025-01-03,1.0299,162.93,\n2025-01-03,1.03,162.9,\n`, /repeats the date 2025-01-03/],
    ['an exponent', `${header}\n2025-01-03,1e3,162.93,\n`, /"1e3"/],
    ['a negative rate', `${header}\n2025-01-03,-1.2,162.93,\n`, /"-1.2"/],
    ['a plus sign', `${header}\n2025-01-03,+1.2,162.93,\n`, /plain decimal/],
    ['a padded rate', `${header}\n2025-01-03, 1.2,162.93,\n`, /plain decimal/],
    ['a bare fraction', `${header}\n2025-01-03,.5,162.93,\n`, /plain decimal/],
    ['a trailing point', `${header}\n2025-01-03,1.,162.93,\n`, /plain decimal/],
    ['a word', `${header}\n2025-01-03,NaN,162.93,\n`, /plain decimal/],
    ['a lower-case currency', 'Date,usd,JPY,\n2025-01-03,1.0299,162.93,\n', /usd/],
    ['a four-letter currency', 'Date,USDX,JPY,\n2025-01-03,1.0299,162.93,\n', /USDX/],
    ['a duplicated currency column', 'Date,USD,USD,\n2025-01-03,1.0299,1.03,\n', /twice/],
    ['a header without currencies', 'Date,\n2025-01-03,\n', /no currencies/],
    ['a row with no rate at all', `${header}\n2025-01-03,N/A,N/A,\n`, /no rate/],
    ['a blank line between rows', `${header}\n2025-01-03,1.0299,162.93,\n\n2025-01-02,1.03,162.9,\n`, /fields/],
  ];
  for (const [name, text, pattern] of cases) {
    it(`rejects ${name}`, () => assert.throws(() => parseEcbCsv(text), feedError(pattern)));
  }
});

describe('parseEcbXml on the real ECB XML files', () => {
  it('reads each daily file as one day with the rate text as written', async () => {
    const expectedCounts: Record<string, number> = { '2018-06-29': 32, '2022-07-08': 31, '2025-05-09': 30, '2026-02-11': 29 };
    for (const [day, count] of Object.entries(expectedCounts)) {
      const doc = parseEcbXml(await readFile(new URL(`eurofxref-daily_${day}.xml`, XML_DIR), 'utf8'));
      assert.equal(doc.provider, 'ecb');
      assert.equal(doc.base, 'EUR');
      assert.equal(doc.days.length, 1);
      assert.equal(doc.days[0]!.day, day);
      assert.equal(doc.days[0]!.asOf, ecbReferenceTime(day));
      assert.equal(Object.keys(doc.days[0]!.rates).length, count, day);
    }
    const latest = parseEcbXml(await readFile(new URL('eurofxref-daily_2026-02-11.xml', XML_DIR), 'utf8'));
    const rates = latest.days[0]!.rates;
    assert.equal(rates['USD'], '1.1900');
    assert.equal(rates['GBP'], '0.86990');
    assert.equal(rates['IDR'], '19992.00');
    assert.equal(rates['ISK'], '145.20');
    assert.equal('BGN' in rates, false);
    const older = parseEcbXml(await readFile(new URL('eurofxref-daily_2018-06-29.xml', XML_DIR), 'utf8'));
    assert.ok(older.days[0]!.rates['RUB'] !== undefined && older.days[0]!.rates['HRK'] !== undefined);
  });

  it('reads each 90-day file as every day, oldest first', async () => {
    const expected: Record<string, [number, string, string]> = {
      '2025-02-25': [61, '2024-11-28', '2025-02-25'],
      '2020-12-10': [64, '2020-09-14', '2020-12-10'],
    };
    for (const [stamp, [count, first, last]] of Object.entries(expected)) {
      const doc = parseEcbXml(await readFile(new URL(`eurofxref-hist-90d_${stamp}.xml`, XML_DIR), 'utf8'));
      assert.equal(doc.days.length, count);
      assert.equal(doc.days[0]!.day, first);
      assert.equal(doc.days.at(-1)!.day, last);
      assertAscendingUnique(doc);
    }
    const doc = parseEcbXml(await readFile(new URL('eurofxref-hist-90d_2025-02-25.xml', XML_DIR), 'utf8'));
    assert.equal(dayOf(doc, '2025-02-25').rates['HUF'], '401.2');
  });

  it('agrees value for value with the CSV on every date and currency', async () => {
    assert.ok(xmlNames.length >= 6);
    for (const name of xmlNames) {
      const doc = parseEcbXml(await readFile(new URL(name, XML_DIR), 'utf8'));
      for (const d of doc.days) {
        const fromCsv = dayOf(csvDoc, d.day).rates;
        assert.deepEqual(Object.keys(d.rates).sort(), Object.keys(fromCsv).sort(), `${name} ${d.day} currencies`);
        for (const [code, rate] of Object.entries(d.rates)) {
          assert.equal(normalise(rate), normalise(fromCsv[code]!), `${name} ${d.day} ${code}`);
        }
      }
    }
  });
});

describe('parseEcbXml on malformed input', () => {
  let daily: string;
  before(async () => {
    daily = await readFile(new URL('eurofxref-daily_2026-02-11.xml', XML_DIR), 'utf8');
  });

  const wrap = (cubes: string) =>
    `<?xml version="1.0" encoding="UTF-8"?><gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><Cube>${cubes}</Cube></gesmes:Envelope>`;

  it('rejects the real daily file cut in half', () => {
    assert.throws(() => parseEcbXml(daily.slice(0, Math.floor(daily.length / 2))), feedError(/not well-formed/));
  });

  it('rejects a 90-day file cut after a complete day', async () => {
    const text = await readFile(new URL('eurofxref-hist-90d_2025-02-25.xml', XML_DIR), 'utf8');
    const cut = text.slice(0, text.indexOf('\n', text.length / 2));
    assert.ok(cut.endsWith('</Cube>'));
    assert.throws(() => parseEcbXml(cut), feedError(/not well-formed/));
  });

  it('rejects an envelope with no dated Cube', async () => {
    const text = await readFile(new URL('no-dated-cube.xml', FIXTURES), 'utf8');
    assert.throws(() => parseEcbXml(text), feedError(/no dated Cube/));
  });

  it('rejects a repeated date', async () => {
    const text = await readFile(new URL('duplicate-date.xml', FIXTURES), 'utf8');
    assert.throws(() => parseEcbXml(text), feedError(/repeats the date 2025-02-25/));
  });

  it('rejects a rate in exponent notation', async () => {
    const text = await readFile(new URL('exponent-rate.xml', FIXTURES), 'utf8');
    assert.throws(() => parseEcbXml(text), feedError(/"1.9992e4"/));
  });

  const cases: Array<[string, string, RegExp]> = [
    ['empty input', '', /empty/],
    ['garbage', 'garbage <<< not xml', /not well-formed/],
    ['an HTML error page', '<html><body><h1>Service unavailable</h1></body></html>', /gesmes:Envelope/],
    ['a decimal comma', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="1,2"/></Cube>`), /"1,2"/],
    ['a negative rate', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="-1.2"/></Cube>`), /"-1.2"/],
    ['an exponent', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="1e3"/></Cube>`), /"1e3"/],
    ['a padded rate', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate=" 1.2"/></Cube>`), /plain decimal/],
    ['an empty rate', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate=""/></Cube>`), /plain decimal/],
    ['an impossible date', wrap(`<Cube time="2025-02-29"><Cube currency="USD" rate="1.2"/></Cube>`), /2025-02-29/],
    ['a lower-case currency', wrap(`<Cube time="2025-01-03"><Cube currency="usd" rate="1.2"/></Cube>`), /usd/],
    ['a currency quoted twice', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="1.2"/><Cube currency="USD" rate="1.3"/></Cube>`), /twice/],
    ['a Cube missing its rate', wrap(`<Cube time="2025-01-03"><Cube currency="USD"/></Cube>`), /without currency and rate/],
    ['a dated Cube without rates', wrap(`<Cube time="2025-01-03"></Cube>`), /no rate/],
    ['a rate outside a dated Cube', wrap(`<Cube currency="USD" rate="1.2"/>`), /outside a dated Cube/],
    ['mismatched tags', wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="1.2"/></Cubes>`), /not well-formed/],
  ];
  for (const [name, text, pattern] of cases) {
    it(`rejects ${name}`, () => assert.throws(() => parseEcbXml(text), feedError(pattern)));
  }

  it('accepts the hand-made wrapper when it is well-formed', () => {
    const doc = parseEcbXml(wrap(`<Cube time="2025-01-03"><Cube currency="USD" rate="1.0299"/></Cube>`));
    assert.deepEqual(doc.days[0]!.rates, { USD: '1.0299' });
  });
});

describe('parseEcbDocument', () => {
  let dir: string;
  const encoder = new TextEncoder();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'exrates-ecb-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the CSV and the XML from raw bytes', async () => {
    assert.deepEqual(parseEcbDocument(await readFile(new URL('eurofxref-hist.csv', ECB_DIR))), csvDoc);
    const xmlBytes = await readFile(new URL('eurofxref-daily_2026-02-11.xml', XML_DIR));
    assert.equal(parseEcbDocument(xmlBytes).days[0]!.rates['USD'], '1.1900');
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, 0x0a, 0x20, ...xmlBytes]);
    assert.deepEqual(parseEcbDocument(withBom), parseEcbDocument(xmlBytes));
  });

  it('reads a zipped copy of the CSV the way ECB ships eurofxref-hist.zip', async () => {
    const raw = await readFile(new URL('eurofxref-hist.csv', ECB_DIR));
    const path = join(dir, 'eurofxref-hist.zip');
    await writeFile(path, zipSync({ 'eurofxref-hist.csv': raw }, { level: 6 }));
    assert.deepEqual(parseEcbDocument(await readFile(path)), csvDoc);
  });

  it('reads a zipped XML and ignores other entries', async () => {
    const xml = await readFile(new URL('eurofxref-hist-90d_2020-12-10.xml', XML_DIR));
    const zip = zipSync({ 'README.txt': encoder.encode('notes'), 'data/eurofxref-hist.xml': xml });
    assert.equal(parseEcbDocument(zip).days.length, 64);
  });

  it('rejects empty bytes, unusable archives and invalid UTF-8', () => {
    assert.throws(() => parseEcbDocument(new Uint8Array()), feedError(/empty/));
    assert.throws(() => parseEcbDocument(encoder.encode('  \n')), feedError(/empty/));
    const two = zipSync({ 'a.csv': encoder.encode('Date,USD,\n2025-01-03,1.0299,\n'), 'b.csv': encoder.encode('Date,USD,\n') });
    assert.throws(() => parseEcbDocument(two), feedError(/holds 2/));
    assert.throws(() => parseEcbDocument(zipSync({ 'notes.txt': encoder.encode('x') })), feedError(/holds 0/));
    const whole = zipSync({ 'eurofxref-hist.csv': encoder.encode('Date,USD,\n2025-01-03,1.0299,\n'.repeat(1)) });
    assert.throws(() => parseEcbDocument(whole.slice(0, 30)), feedError(/ZIP/));
    assert.throws(() => parseEcbDocument(new Uint8Array([0x44, 0x61, 0x74, 0x65, 0xff, 0xfe])), feedError(/UTF-8/));
  });

  it('sends text starting with "<" to the XML parser and the rest to the CSV parser', () => {
    assert.throws(() => parseEcbDocument(encoder.encode('\n  <Envelope>')), feedError(/not well-formed/));
    assert.throws(() => parseEcbDocument(encoder.encode('Garbage,1,2')), feedError(/Date/));
  });
});

describe('withinRange', () => {
  it('keeps the days inside both inclusive ends', () => {
    const doc = withinRange(csvDoc, { from: '2026-03-02', to: '2026-03-04' });
    assert.deepEqual(
      doc.days.map((d) => d.day),
      ['2026-03-02', '2026-03-03', '2026-03-04'],
    );
    assert.equal(withinRange(csvDoc, { from: '2026-03-07', to: '2026-03-08' }).days.length, 0);
  });
});
