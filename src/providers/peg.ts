/**
 * Legal parities: currencies whose value a law, a treaty or a currency board fixes against another
 * (the CFA francs against the euro, the Gulf currencies against the dollar, the Common Monetary
 * Area against the rand). Each parity is exact as the issuer states it, with its reference and the
 * day it has held since; nothing is fetched.
 *
 * Parities against different anchors have no fixed rate between them (the euro floats against the
 * dollar), so the parities are served as one provider per anchor (`peg-eur`, `peg-usd`, …), each
 * an ordinary provider with that anchor as its base: a cross between two anchors is taken through
 * another provider's market numbers, as for any two providers, and the cross-check compares a
 * parity with the banks' numbers like any other provider's. `peg` names them all together, in
 * EXRATES_PROVIDERS and as a `source`.
 *
 * A parity is a number on every calendar day (it holds on weekends too), dated at the start of the
 * day in UTC. The Eritrean nakfa is not here: it is said to be pegged at 15 per dollar, but no
 * statement of the Bank of Eritrea was found, and the banks that quote it do not agree with that
 * or with each other (Banca d'Italia's documents of 2026-02 put it at 15.38 per dollar, the NBP's
 * of 2026-03 near 15.06): a parity stated here would be flagged against them. Bands and managed rates (DKK in ERM II, HKD, MOP, CNY, "official rates" moved by
 * decision) are not parities and are not here.
 */
import type { Clock, DailyQuotes, DayRange, Provider, RateDocument } from '../core/ports.js';
import { addDays, utcDay, type Day } from '../core/time.js';

/** The family name: EXRATES_PROVIDERS and `source` take it for every anchor's provider. */
export const PEG_FAMILY = 'peg';

export interface Parity {
  /** The pegged currency. */
  readonly currency: string;
  /** The currency it is fixed against. */
  readonly anchor: string;
  /**
   * Units of `currency` per one `anchor`, exact: a decimal as the issuer states it, or `1/x` where
   * the issuer states x units of the anchor per one unit of the currency (1 KYD = 1.2 USD,
   * 1,000 XPF = 8.38 EUR).
   */
  readonly rate: string;
  /**
   * The first day it is served for: the day it took effect where that lies within the years a
   * service keeps (XCG, STN), the euro's first day for the euro parities, otherwise a day by which
   * it had long held (2002-01-01).
   */
  readonly since: Day;
  /** The last day on which it holds, for a currency replaced since (ANG by XCG). */
  readonly until?: Day;
  readonly reference: string;
}

/**
 * Sources: the issuing central banks' statements of their exchange rate regimes, the euro area
 * agreements that fixed the franc zone parities at the euro's introduction (Council Decision
 * 98/683/EC for the CFA and Comorian francs, 98/744/EC for Cape Verde; the French statement of
 * 1998 for the CFP franc), and the IMF's Annual Report on Exchange Arrangements.
 */
export const PARITIES: readonly Parity[] = [
  { currency: 'XOF', anchor: 'EUR', rate: '655.957', since: '1999-01-01', reference: 'BCEAO; Council Decision 98/683/EC: 1 EUR = 655.957 XOF' },
  { currency: 'XAF', anchor: 'EUR', rate: '655.957', since: '1999-01-01', reference: 'BEAC; Council Decision 98/683/EC: 1 EUR = 655.957 XAF' },
  { currency: 'KMF', anchor: 'EUR', rate: '491.96775', since: '1999-01-01', reference: 'Banque Centrale des Comores; Council Decision 98/683/EC: 1 EUR = 491.96775 KMF' },
  { currency: 'XPF', anchor: 'EUR', rate: '1/0.00838', since: '1999-01-01', reference: 'IEOM; Protocol on France annexed to the EU Treaties: 1,000 XPF = 8.38 EUR' },
  { currency: 'CVE', anchor: 'EUR', rate: '110.265', since: '1999-01-01', reference: 'Banco de Cabo Verde; Council Decision 98/744/EC: 1 EUR = 110.265 CVE' },
  { currency: 'BAM', anchor: 'EUR', rate: '1.95583', since: '1999-01-01', reference: 'Law on the Central Bank of Bosnia and Herzegovina, currency board: 1 EUR = 1.95583 BAM' },
  { currency: 'STN', anchor: 'EUR', rate: '24.5', since: '2018-01-01', reference: 'Banco Central de São Tomé e Príncipe, exchange rate cooperation agreement with Portugal: 1 EUR = 24.5 STN (Banca d\'Italia publishes 24.5000 on every recorded day of 2026-02)' },
  { currency: 'AED', anchor: 'USD', rate: '3.6725', since: '2002-01-01', reference: 'Central Bank of the UAE: 1 USD = 3.6725 AED' },
  { currency: 'SAR', anchor: 'USD', rate: '3.75', since: '2002-01-01', reference: 'Saudi Central Bank (SAMA): 1 USD = 3.75 SAR' },
  { currency: 'QAR', anchor: 'USD', rate: '3.64', since: '2002-01-01', reference: 'Qatar Central Bank: 1 USD = 3.64 QAR' },
  { currency: 'BHD', anchor: 'USD', rate: '0.376', since: '2002-01-01', reference: 'Central Bank of Bahrain: 1 USD = 0.376 BHD' },
  { currency: 'OMR', anchor: 'USD', rate: '1/2.6008', since: '2002-01-01', reference: 'Central Bank of Oman: 1 OMR = 2.6008 USD' },
  { currency: 'JOD', anchor: 'USD', rate: '0.709', since: '2002-01-01', reference: 'Central Bank of Jordan, peg since 1995-10: 1 USD = 0.709 JOD (official mid; Banca d\'Italia\'s recorded JOD and USD per euro of 2026-02 give 0.70899 to 0.70901)' },
  { currency: 'XCD', anchor: 'USD', rate: '2.7', since: '2002-01-01', reference: 'Eastern Caribbean Central Bank: 1 USD = 2.70 XCD' },
  { currency: 'BSD', anchor: 'USD', rate: '1', since: '2002-01-01', reference: 'Central Bank of The Bahamas: 1 BSD = 1 USD' },
  { currency: 'BMD', anchor: 'USD', rate: '1', since: '2002-01-01', reference: 'Bermuda Monetary Authority: 1 BMD = 1 USD' },
  { currency: 'PAB', anchor: 'USD', rate: '1', since: '2002-01-01', reference: 'Panama, Monetary Agreement of 1904: 1 PAB = 1 USD' },
  { currency: 'BBD', anchor: 'USD', rate: '2', since: '2002-01-01', reference: 'Central Bank of Barbados: 1 USD = 2 BBD' },
  { currency: 'BZD', anchor: 'USD', rate: '2', since: '2002-01-01', reference: 'Central Bank of Belize: 1 USD = 2 BZD' },
  { currency: 'AWG', anchor: 'USD', rate: '1.79', since: '2002-01-01', reference: 'Centrale Bank van Aruba: 1 USD = 1.79 AWG' },
  { currency: 'ANG', anchor: 'USD', rate: '1.79', since: '2002-01-01', until: '2025-03-30', reference: 'Centrale Bank van Curaçao en Sint Maarten: 1 USD = 1.79 ANG' },
  { currency: 'XCG', anchor: 'USD', rate: '1.79', since: '2025-03-31', reference: 'Centrale Bank van Curaçao en Sint Maarten: 1 USD = 1.79 XCG' },
  { currency: 'DJF', anchor: 'USD', rate: '177.721', since: '2002-01-01', reference: 'Banque Centrale de Djibouti, currency board: 1 USD = 177.721 DJF' },
  { currency: 'KYD', anchor: 'USD', rate: '1/1.2', since: '2002-01-01', reference: 'Cayman Islands Monetary Authority: 1 KYD = 1.20 USD' },
  { currency: 'LSL', anchor: 'ZAR', rate: '1', since: '2002-01-01', reference: 'Common Monetary Area agreement; Central Bank of Lesotho: 1 LSL = 1 ZAR' },
  { currency: 'NAD', anchor: 'ZAR', rate: '1', since: '2002-01-01', reference: 'Common Monetary Area agreement; Bank of Namibia: 1 NAD = 1 ZAR' },
  { currency: 'SZL', anchor: 'ZAR', rate: '1', since: '2002-01-01', reference: 'Common Monetary Area agreement; Central Bank of Eswatini: 1 SZL = 1 ZAR' },
  { currency: 'BTN', anchor: 'INR', rate: '1', since: '2002-01-01', reference: 'Royal Monetary Authority of Bhutan: 1 BTN = 1 INR' },
  { currency: 'FKP', anchor: 'GBP', rate: '1', since: '2002-01-01', reference: 'Falkland Islands Government currency: 1 FKP = 1 GBP' },
  { currency: 'GIP', anchor: 'GBP', rate: '1', since: '2002-01-01', reference: 'Government of Gibraltar currency: 1 GIP = 1 GBP' },
  { currency: 'SHP', anchor: 'GBP', rate: '1', since: '2002-01-01', reference: 'St Helena Government currency: 1 SHP = 1 GBP' },
  { currency: 'BND', anchor: 'SGD', rate: '1', since: '2002-01-01', reference: 'Currency Interchangeability Agreement, Brunei and Singapore: 1 BND = 1 SGD' },
];

/** The anchors, in the order their providers are listed: the euro, the dollar, then the others. */
export const PEG_ANCHORS: readonly string[] = [...new Set(PARITIES.map((p) => p.anchor))];

/** The id of the provider of one anchor's parities. */
export function pegProviderId(anchor: string): string {
  return `${PEG_FAMILY}-${anchor.toLowerCase()}`;
}

/** The parities of one anchor that hold on a day. */
function paritiesOn(anchor: string, day: Day): Record<string, string> {
  const rates: Record<string, string> = {};
  for (const p of PARITIES) if (p.anchor === anchor && p.since <= day && (p.until === undefined || day <= p.until)) rates[p.currency] = p.rate;
  return rates;
}

/** A week of days on each refresh: a refresh reads only the latest document while its newest day is a few days old. */
const LATEST_DAYS = 7;

export interface PegProviderOptions {
  anchor: string;
  clock: Clock;
}

/** The parities against one anchor, as an ordinary provider whose base is that anchor. */
export function createPegProvider(options: PegProviderOptions): Provider {
  const { anchor, clock } = options;
  const id = pegProviderId(anchor);
  const document = (from: Day, to: Day): RateDocument => {
    const days: DailyQuotes[] = [];
    for (let day = from; day <= to; day = addDays(day, 1)) {
      const rates = paritiesOn(anchor, day);
      if (Object.keys(rates).length > 0) days.push({ day, asOf: `${day}T00:00:00Z`, rates });
    }
    return { provider: id, base: anchor, days };
  };
  return {
    id,
    base: anchor,
    async latest() {
      const today = utcDay(clock.now());
      return document(addDays(today, -(LATEST_DAYS - 1)), today);
    },
    async series(range: DayRange) {
      const today = utcDay(clock.now());
      return document(range.from, range.to < today ? range.to : today);
    },
  };
}
