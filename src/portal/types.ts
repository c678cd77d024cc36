/**
 * The fields of the API's answers that the page reads (src/http/schemas.ts describes them all),
 * and the configuration the server embeds in the page (src/http/routes/portal.ts).
 */

export interface Problem {
  code?: string;
  title: string;
  detail: string;
  param?: string;
}

export interface CurrencyName {
  code: string;
  name: string;
  /** Replaced by another currency at a fixed legal ratio (its successor): offered after the currencies in use. */
  replacedBy?: { code: string };
}

/** One entry of GET /api/v1/currencies. */
export interface Currency extends CurrencyName {
  onRequest: boolean;
  providers: string[];
}

/** A configured provider, as the page carries it: its currencies are replaced by the API's /currencies list once asked. */
export interface ProviderSummary {
  id: string;
  name: string;
  kind: string;
  currencies: string[];
}

export interface PortalConfig {
  currencies: CurrencyName[];
  onRequest: CurrencyName[];
  providers: ProviderSummary[];
  contact: string;
  quota: { free: number; pro: number };
  demo: { key: string; perAddress: number } | null;
  /** The ranges /history takes (EXRATES_HISTORY_YEARS), and the oldest day stored, where `max` starts; null when nothing is. */
  history: { ranges: string[]; oldest: string | null };
}

export interface PublishedNumber {
  provider: string;
  day: string;
  base: string;
  currency: string;
  rate: string;
  reciprocalOf?: string;
}

export interface SetAsideNumber extends PublishedNumber {
  reason: string;
}

export interface ReplacedCurrency {
  currency: string;
  successor: string;
  ratio: string;
  from: string;
  reference: string;
}

export interface Provenance {
  providers: string[];
  day: string;
  bridge: string | null;
  numbers: PublishedNumber[];
  setAside?: SetAsideNumber[];
  flagged?: SetAsideNumber[];
  replaced?: ReplacedCurrency[];
}

/** GET /api/v1/convert?expand=provenance */
export interface Conversion {
  from: string;
  to: string;
  amount: string;
  result: string;
  rate: string;
  asOf: string;
  stale: boolean;
  provenance?: Provenance;
}

/** GET /api/v1/rates */
export interface RatesTable {
  from: string;
  amount: string;
  rates: Array<{ to: string; rate: string; result: string; asOf: string; stale: boolean }>;
}

/** '' one point a day, else the API's `group`: a mean per ISO week or per month. */
export type Group = '' | 'week' | 'month';

export interface HistoryPoint {
  date: string;
  rate: string;
  /** Grouped: how many days the mean is of. */
  days: number;
}

/** GET /api/v1/history */
export interface History {
  pair: string;
  group?: 'week' | 'month';
  count: number;
  points: HistoryPoint[];
  stats: {
    best: string;
    bestDate: string;
    worst: string;
    worstDate: string;
    average: string;
    changePct: number;
    currentVsAveragePct: number;
  };
}
