/**
 * Writes src/core/iso-4217.ts, the ISO 4217 table the service answers from, from the copy of ISO
 * 4217 list one that the `currency-codes` package ships; with --check fails when the committed
 * file differs (test/core/currencies.test.ts runs the check). Its own JSON turns "N.A." minor
 * units into 0, which would make XAU round like JPY, so the package's copy of the ISO XML is read.
 * Run it after upgrading `currency-codes`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from './generated-file.js';
import { XMLParser } from 'fast-xml-parser';

const target = fileURLToPath(new URL('../src/core/iso-4217.ts', import.meta.url));

export function renderIsoTable(): string {
  const require = createRequire(import.meta.url);
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  const parsed = new XMLParser({ parseTagValue: false, ignoreAttributes: true }).parse(xml) as {
    ISO_4217: { CcyTbl: { CcyNtry: Array<{ Ccy?: string; CcyNm?: string | { '#text': string }; CcyMnrUnts?: string }> } };
  };
  const rows = new Map<string, string>();
  for (const entry of parsed.ISO_4217.CcyTbl.CcyNtry) {
    if (!entry.Ccy || rows.has(entry.Ccy)) continue;
    const name = typeof entry.CcyNm === 'object' ? entry.CcyNm['#text'] : (entry.CcyNm ?? entry.Ccy);
    const units = entry.CcyMnrUnts !== undefined && /^\d+$/.test(entry.CcyMnrUnts) ? Number(entry.CcyMnrUnts) : null;
    // Names are plain text; one with a quote or backslash would need escaping this does not do.
    if (!/^[A-Z]{3}$/.test(entry.Ccy) || /['\\\n]/.test(name)) throw new Error(`unexpected ISO 4217 entry: ${entry.Ccy} ${name}`);
    rows.set(entry.Ccy, `  ${entry.Ccy}: { code: '${entry.Ccy}', name: '${name}', minorUnits: ${units} },`);
  }
  return [
    '/**',
    ' * ISO 4217 list one: every currency code, its name and minor units (null where ISO says "N.A.":',
    ' * gold, SDR, testing codes…). Generated from the `currency-codes` package by',
    ' * `node --import tsx scripts/iso-4217.ts`; a test fails when it differs from the package.',
    ' */',
    "import type { Currency } from './currencies.js';",
    '',
    'export const ISO_4217: Readonly<Record<string, Currency>> = {',
    ...[...rows.keys()].sort().map((code) => rows.get(code)!),
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrCheck(target, renderIsoTable(), '`node --import tsx scripts/iso-4217.ts`');
}
