/**
 * Writes src/core/iso-4217.ts, the ISO 4217 table the service answers from: list one as the
 * `currency-codes` package ships it, with the amendments ISO has made since that copy was
 * published (AMENDMENTS below) applied. With --check fails when the committed file differs
 * (test/core/currencies.test.ts runs the check), and either way fails when the package's copy
 * contradicts an amendment it should already hold. The package's own JSON turns "N.A." minor
 * units into 0, which would make XAU round like JPY, so its copy of the ISO XML is read.
 * Run it after upgrading `currency-codes`, and drop the amendments the new copy holds.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from './generated-file.js';
import { XMLParser } from 'fast-xml-parser';

const target = fileURLToPath(new URL('../src/core/iso-4217.ts', import.meta.url));

/** One currency of list one. */
export interface IsoRow {
  code: string;
  name: string;
  minorUnits: number | null;
}

/**
 * A change to ISO 4217 that the package's copy may not hold yet: a code added to list one, or
 * one withdrawn from it (moved to list three). A withdrawn code stays valid here, marked with its
 * date, so that its history (the ECB's kuna, the lev before the euro) can still be asked for.
 */
export type Amendment =
  | { change: 'added'; on: string; row: IsoRow; source: string }
  | { change: 'withdrawn'; on: string; row: IsoRow; source: string };

/**
 * Amendments since the package's copy (list one of 2024-06-25), and the withdrawn codes whose
 * history the providers still publish (the ECB's history file has columns for CYP, EEK, HRK, LTL,
 * LVL, MTL, ROL, SIT, SKK and TRL). Sources: ISO 4217 list three ("historic denominations") as
 * the maintenance agency (SIX) publishes it, and the issuing central bank's own notice.
 */
export const AMENDMENTS: readonly Amendment[] = [
  {
    change: 'added',
    on: '2025-03-31',
    row: { code: 'XCG', name: 'Caribbean Guilder', minorUnits: 2 },
    source: 'Centrale Bank van Curaçao en Sint Maarten: the Caribbean guilder replaces the Netherlands Antillean guilder from 2025-03-31; ISO 4217 list one',
  },
  {
    change: 'withdrawn',
    on: '2025-07-01',
    row: { code: 'ANG', name: 'Netherlands Antillean Guilder', minorUnits: 2 },
    source: 'Centrale Bank van Curaçao en Sint Maarten, announcement of 2024-03: XCG from 2025-03-31 at par, ANG legal tender until 2025-06-30; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2026-01-01',
    row: { code: 'BGN', name: 'Bulgarian Lev', minorUnits: 2 },
    source: 'Council Decision (EU) 2025/1407: Bulgaria adopts the euro on 2026-01-01; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    // Cuba ended the convertible peso with its monetary unification of 2021-01-01 (shops took it
    // until 2021-06-30, banks exchanged it into 2022: Decree-Law 62 of 2022-05-27). ISO's list
    // one of 2024-06-25 still holds it, and no ISO amendment withdrawing it was found: the date
    // is unconfirmed, a day after that list, so that the code stays valid for history and is
    // not loaded as a current currency, and the check below fails once a newer list still holds it.
    on: '2025-01-01',
    row: { code: 'CUC', name: 'Peso Convertible', minorUnits: 2 },
    source: 'Banco Central de Cuba: monetary unification from 2021-01-01 (withdrawal date from ISO not confirmed)',
  },
  {
    change: 'withdrawn',
    on: '2023-01-01',
    row: { code: 'HRK', name: 'Kuna', minorUnits: 2 },
    source: 'Council Regulation (EU) 2022/1208: Croatia adopts the euro on 2023-01-01; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2024-01-01',
    row: { code: 'SLL', name: 'Leone', minorUnits: 2 },
    source: 'Bank of Sierra Leone, public notice of 2023-03-10 (Redenomination of the Leone, further extension of the transition period): old leones cease to be legal tender on 2024-01-01; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2024-09-01',
    row: { code: 'ZWL', name: 'Zimbabwe Dollar', minorUnits: 2 },
    source: 'Reserve Bank of Zimbabwe, letter of 2024-06-25 to the Bankers Association: ISO code ZWG from 2024-06-25, ZWL and ZWG concurrent to 2024-08-31, ZWL no longer recognised from 2024-09-01; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2018-08-20',
    row: { code: 'VEF', name: 'Bolívar', minorUnits: 2 },
    source: 'Banco Central de Venezuela: bolívar soberano from 2018-08-20; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2018-01-01',
    row: { code: 'MRO', name: 'Ouguiya', minorUnits: 2 },
    source: 'Banque Centrale de Mauritanie: new ouguiya from 2018-01-01; ISO 4217 list three',
  },
  {
    change: 'withdrawn',
    on: '2018-01-01',
    row: { code: 'STD', name: 'Dobra', minorUnits: 2 },
    source: 'Banco Central de São Tomé e Príncipe: new dobra from 2018-01-01; ISO 4217 list three',
  },
  { change: 'withdrawn', on: '2015-01-01', row: { code: 'LTL', name: 'Lithuanian Litas', minorUnits: 2 }, source: 'Council Regulation (EU) No 851/2014; ISO 4217 list three' },
  { change: 'withdrawn', on: '2014-01-01', row: { code: 'LVL', name: 'Latvian Lats', minorUnits: 2 }, source: 'Council Regulation (EU) No 870/2013; ISO 4217 list three' },
  { change: 'withdrawn', on: '2011-01-01', row: { code: 'EEK', name: 'Kroon', minorUnits: 2 }, source: 'Council Regulation (EU) No 671/2010; ISO 4217 list three' },
  { change: 'withdrawn', on: '2009-01-01', row: { code: 'SKK', name: 'Slovak Koruna', minorUnits: 2 }, source: 'Council Regulation (EC) No 694/2008; ISO 4217 list three' },
  { change: 'withdrawn', on: '2008-01-01', row: { code: 'CYP', name: 'Cyprus Pound', minorUnits: 2 }, source: 'Council Regulation (EC) No 1135/2007; ISO 4217 list three' },
  { change: 'withdrawn', on: '2008-01-01', row: { code: 'MTL', name: 'Maltese Lira', minorUnits: 2 }, source: 'Council Regulation (EC) No 1134/2007; ISO 4217 list three' },
  { change: 'withdrawn', on: '2007-01-01', row: { code: 'SIT', name: 'Tolar', minorUnits: 2 }, source: 'Council Regulation (EC) No 1086/2006; ISO 4217 list three' },
  { change: 'withdrawn', on: '2005-07-01', row: { code: 'ROL', name: 'Leu', minorUnits: 2 }, source: 'Banca Naţională a României: new leu from 2005-07-01 (Law 348/2004); ISO 4217 list three' },
  { change: 'withdrawn', on: '2005-01-01', row: { code: 'TRL', name: 'Turkish Lira', minorUnits: 0 }, source: 'Law No. 5083: new Turkish lira from 2005-01-01; ISO 4217 list three' },
];

/** What a copy of list one published on `published` says of a code that contradicts an amendment, or undefined. */
export function contradiction(amendment: Amendment, packaged: IsoRow | undefined, published: string): string | undefined {
  const { code } = amendment.row;
  if (packaged && packaged.minorUnits !== amendment.row.minorUnits) {
    return `${code}: the package says ${packaged.minorUnits} minor units, the amendment of ${amendment.on} ${amendment.row.minorUnits}`;
  }
  if (published < amendment.on) return undefined;
  if (amendment.change === 'added' && !packaged) return `${code}: added on ${amendment.on}, but missing from the package's list of ${published}`;
  if (amendment.change === 'withdrawn' && packaged) return `${code}: withdrawn on ${amendment.on}, but still in the package's list of ${published}`;
  if (amendment.change === 'added' && packaged) return `${code}: the package's list of ${published} holds it; drop the amendment`;
  return undefined;
}

/** List one with the amendments applied: rows by code, each withdrawn one with its date. Throws on a contradiction. */
export function amendedList(packaged: ReadonlyMap<string, IsoRow>, published: string, amendments: readonly Amendment[]): Map<string, IsoRow & { withdrawn?: string }> {
  const problems = amendments.map((a) => contradiction(a, packaged.get(a.row.code), published)).filter((p): p is string => p !== undefined);
  if (problems.length > 0) throw new Error(`the currency-codes package contradicts the ISO 4217 amendments in scripts/iso-4217.ts:\n${problems.join('\n')}`);
  const rows = new Map<string, IsoRow & { withdrawn?: string }>(packaged);
  for (const a of amendments) rows.set(a.row.code, a.change === 'withdrawn' ? { ...a.row, withdrawn: a.on } : a.row);
  return rows;
}

function packagedList(): { rows: Map<string, IsoRow>; published: string } {
  const require = createRequire(import.meta.url);
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  const parsed = new XMLParser({ parseTagValue: false, ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml) as {
    ISO_4217: { Pblshd: string; CcyTbl: { CcyNtry: Array<{ Ccy?: string; CcyNm?: string | { '#text': string }; CcyMnrUnts?: string }> } };
  };
  const rows = new Map<string, IsoRow>();
  for (const entry of parsed.ISO_4217.CcyTbl.CcyNtry) {
    if (!entry.Ccy || rows.has(entry.Ccy)) continue;
    const name = typeof entry.CcyNm === 'object' ? entry.CcyNm['#text'] : (entry.CcyNm ?? entry.Ccy);
    const units = entry.CcyMnrUnts !== undefined && /^\d+$/.test(entry.CcyMnrUnts) ? Number(entry.CcyMnrUnts) : null;
    rows.set(entry.Ccy, { code: entry.Ccy, name, minorUnits: units });
  }
  return { rows, published: parsed.ISO_4217.Pblshd };
}

export function renderIsoTable(): string {
  const { rows: packaged, published } = packagedList();
  const rows = amendedList(packaged, published, AMENDMENTS);
  const lines = [...rows.keys()].sort().map((code) => {
    const { name, minorUnits, withdrawn } = rows.get(code)!;
    // Names are plain text; one with a quote or backslash would need escaping this does not do.
    if (!/^[A-Z]{3}$/.test(code) || /['\\\n]/.test(name)) throw new Error(`unexpected ISO 4217 entry: ${code} ${name}`);
    return `  ${code}: { code: '${code}', name: '${name}', minorUnits: ${minorUnits}${withdrawn === undefined ? '' : `, withdrawn: '${withdrawn}'`} },`;
  });
  return [
    '/**',
    ' * ISO 4217: every currency code of list one, its name and minor units (null where ISO says "N.A.":',
    ' * gold, SDR, testing codes…), and the withdrawn codes whose history is still served, each with',
    ` * the day it was withdrawn. Generated by \`node --import tsx scripts/iso-4217.ts\` from the`,
    ` * \`currency-codes\` package (list one of ${published}) and the amendments since, listed with their`,
    ' * sources in that script; a test fails when it differs from them.',
    ' */',
    'export interface Currency {',
    '  code: string;',
    '  name: string;',
    '  /** ISO 4217 minor units, or null where ISO 4217 says "N.A." (gold, SDR, testing codes…). */',
    '  minorUnits: number | null;',
    '  /**',
    '   * The day ISO 4217 withdrew it (moved it from list one to list three). The code stays valid:',
    '   * its history is served as published, and a replaced currency\'s later days through its',
    '   * successor (src/core/replaced-currencies.ts).',
    '   */',
    '  withdrawn?: string;',
    '}',
    '',
    'export const ISO_4217: Readonly<Record<string, Currency>> = {',
    ...lines,
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeOrCheck(target, renderIsoTable(), '`node --import tsx scripts/iso-4217.ts`');
}
