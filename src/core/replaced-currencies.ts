/**
 * Currencies replaced by another at a ratio fixed by law: the euro changeovers' irrevocable
 * conversion rates and the redenominations. From its day on, a replaced currency is answered
 * through its successor at that ratio, exactly (a live rate, a rate on a date, the points of a
 * history); before it, with the market numbers its providers published. The last market number
 * is never presented as today's: a provider's stale series of the old code is not used after the
 * day (and not stored: src/core/refresh.ts drops it from the code's ISO withdrawal on).
 */
import { divide, ONE, parseDecimal, type Rational } from './decimal.js';
import type { Day } from './time.js';
import { addDays } from './time.js';

export interface Replacement {
  /** The replaced currency. */
  readonly code: string;
  readonly successor: string;
  /** Units of the replaced currency per one unit of its successor, exactly as the law states it. */
  readonly ratio: string;
  /** The first day on which the successor is the currency. */
  readonly from: Day;
  /** The legal act (or the central bank's notice) that fixes the ratio. */
  readonly reference: string;
}

/**
 * Sources: the Council Regulations that fixed each euro conversion rate (Regulation (EC) No
 * 2866/98 as amended for each entrant), and each central bank's redenomination notice.
 */
export const REPLACED_CURRENCIES: readonly Replacement[] = [
  { code: 'BGN', successor: 'EUR', ratio: '1.95583', from: '2026-01-01', reference: 'Council Regulation (EU) 2025/1408: irrevocable conversion rate, 1 EUR = 1.95583 BGN' },
  { code: 'HRK', successor: 'EUR', ratio: '7.53450', from: '2023-01-01', reference: 'Council Regulation (EU) 2022/1208: irrevocable conversion rate, 1 EUR = 7.53450 HRK' },
  { code: 'LTL', successor: 'EUR', ratio: '3.45280', from: '2015-01-01', reference: 'Council Regulation (EU) No 851/2014: irrevocable conversion rate, 1 EUR = 3.45280 LTL' },
  { code: 'LVL', successor: 'EUR', ratio: '0.702804', from: '2014-01-01', reference: 'Council Regulation (EU) No 870/2013: irrevocable conversion rate, 1 EUR = 0.702804 LVL' },
  { code: 'EEK', successor: 'EUR', ratio: '15.6466', from: '2011-01-01', reference: 'Council Regulation (EU) No 671/2010: irrevocable conversion rate, 1 EUR = 15.6466 EEK' },
  { code: 'SKK', successor: 'EUR', ratio: '30.1260', from: '2009-01-01', reference: 'Council Regulation (EC) No 694/2008: irrevocable conversion rate, 1 EUR = 30.1260 SKK' },
  { code: 'CYP', successor: 'EUR', ratio: '0.585274', from: '2008-01-01', reference: 'Council Regulation (EC) No 1135/2007: irrevocable conversion rate, 1 EUR = 0.585274 CYP' },
  { code: 'MTL', successor: 'EUR', ratio: '0.429300', from: '2008-01-01', reference: 'Council Regulation (EC) No 1134/2007: irrevocable conversion rate, 1 EUR = 0.429300 MTL' },
  { code: 'SIT', successor: 'EUR', ratio: '239.640', from: '2007-01-01', reference: 'Council Regulation (EC) No 1086/2006: irrevocable conversion rate, 1 EUR = 239.640 SIT' },
  { code: 'ROL', successor: 'RON', ratio: '10000', from: '2005-07-01', reference: 'Banca Naţională a României, Law 348/2004: 1 RON = 10,000 ROL' },
  { code: 'TRL', successor: 'TRY', ratio: '1000000', from: '2005-01-01', reference: 'Law No. 5083 (Türkiye): 1 new lira = 1,000,000 lira' },
  { code: 'SLL', successor: 'SLE', ratio: '1000', from: '2022-07-01', reference: 'Bank of Sierra Leone, public notice of 2022-06 under the Redenomination of the Leone (Characteristics) Regulations 2021: the redenominated leone legal tender from 2022-07-01, 1 SLE = 1,000 SLL' },
  { code: 'MRO', successor: 'MRU', ratio: '10', from: '2018-01-01', reference: 'Banque Centrale de Mauritanie: redenomination, 1 MRU = 10 MRO' },
  { code: 'STD', successor: 'STN', ratio: '1000', from: '2018-01-01', reference: 'Banco Central de São Tomé e Príncipe: redenomination, 1 STN = 1,000 STD' },
  { code: 'VEF', successor: 'VES', ratio: '100000', from: '2018-08-20', reference: 'Banco Central de Venezuela: redenomination, 1 VES = 100,000 VEF' },
  { code: 'ANG', successor: 'XCG', ratio: '1', from: '2025-03-31', reference: 'Centrale Bank van Curaçao en Sint Maarten, announcement of 2024-03: the Caribbean guilder replaces the Netherlands Antillean guilder at par from 2025-03-31 (ANG legal tender until 2025-06-30)' },
  { code: 'ZWL', successor: 'ZWG', ratio: '2498.7242', from: '2024-04-05', reference: 'Reserve Bank of Zimbabwe, Monetary Policy Statement of 2024-04-05 (ZiG introduced) and press statement of 2024-04-06: ZiG:ZW$ conversion factor 2,498.7242 (Statutory Instrument 60 of 2024)' },
];

const BY_CODE: ReadonlyMap<string, Replacement> = new Map(REPLACED_CURRENCIES.map((r) => [r.code, r]));

/** The replacement of a currency in force on `day`, if any. */
export function replacementOn(code: string, day: Day): Replacement | undefined {
  const replacement = BY_CODE.get(code);
  return replacement !== undefined && day >= replacement.from ? replacement : undefined;
}

/**
 * A pair as served on `day`: each replaced currency by its successor, and the exact factor by
 * which the successors' rate is multiplied (to's ratio over from's), with the replacements used.
 * Undefined when neither currency is replaced on that day.
 */
export interface ThroughSuccessors {
  from: string;
  to: string;
  factor: Rational;
  replaced: Replacement[];
}

export function throughSuccessors(from: string, to: string, day: Day): ThroughSuccessors | undefined {
  const a = replacementOn(from, day);
  const b = replacementOn(to, day);
  if (a === undefined && b === undefined) return undefined;
  const ratioOf = (r: Replacement | undefined) => (r === undefined ? ONE : parseDecimal(r.ratio)!);
  return {
    from: a?.successor ?? from,
    to: b?.successor ?? to,
    // One `from` is 1/ratio_from of its successor; one successor of `to` is ratio_to of `to`.
    factor: divide(ratioOf(b), ratioOf(a)),
    replaced: [a, b].filter((r): r is Replacement => r !== undefined),
  };
}

/** A stretch of days over which a pair is served the same way (as itself, or through successors). */
export interface PairSpan {
  start: Day;
  end: Day;
  through: ThroughSuccessors | undefined;
}

/** The days from start to end split where a replacement of either currency takes effect, ascending. */
export function pairSpans(from: string, to: string, start: Day, end: Day): PairSpan[] {
  const cuts = [BY_CODE.get(from)?.from, BY_CODE.get(to)?.from].filter((d): d is Day => d !== undefined && d > start && d <= end);
  const starts = [start, ...new Set(cuts)].sort();
  return starts.map((s, i) => ({ start: s, end: i + 1 < starts.length ? addDays(starts[i + 1]!, -1) : end, through: throughSuccessors(from, to, s) }));
}
