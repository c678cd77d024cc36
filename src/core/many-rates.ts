import { parseCurrency } from './currencies.js';
import { DomainError } from './errors.js';
import { convertAt, parseAmount, type Provenance, type RateBook, type RateQuote } from './rates.js';
import { listCurrencies } from './served-currencies.js';
import type { Day } from './time.js';

/** At most this many targets in one call: the answer stays one that a client reads at once. */
export const MAX_TARGETS = 200;

export interface ManyRatesEntry {
  to: string;
  rate: string;
  asOf: string;
  stale: boolean;
  /** With an amount: amount × rate, as /convert answers it. */
  result?: string;
  /** When asked for: what the rate was computed from. */
  provenance?: Provenance;
}

export interface ManyRates {
  from: string;
  /** The amount as /convert normalises it, when one was given. */
  amount?: string;
  rates: ManyRatesEntry[];
  /** For dated answers: true when every entry is settled (DatedQuote.settled). */
  settled: boolean;
}

/** The `to` list of GET /api/v1/rates: comma-separated ISO codes, at most MAX_TARGETS, none twice. Names the offending code. */
export function parseTargets(input: string): string[] {
  const parts = input.split(',');
  if (parts.length > MAX_TARGETS) {
    throw new DomainError('invalid_currency', `to lists ${parts.length} codes; at most ${MAX_TARGETS} are accepted in one call.`, { param: 'to' });
  }
  const codes = new Set<string>();
  for (const part of parts) {
    const code = parseCurrency(part, 'to');
    if (codes.has(code)) throw new DomainError('invalid_currency', `${code} is listed twice in to; list each currency once.`, { param: 'to' });
    codes.add(code);
  }
  return [...codes];
}

const byTo = (a: ManyRatesEntry, b: ManyRatesEntry) => (a.to < b.to ? -1 : a.to > b.to ? 1 : 0);

/**
 * One amount or rate in many currencies: each entry is exactly what /rate (or, with an amount,
 * /convert) answers for its pair, from the same book, so the two never disagree. Without
 * targets, every currency quoted now but `from`; on a date, those without a rate on or before it
 * are left out then (they are named only when asked for, as no_history). With a source, every
 * entry is that provider's alone, and without targets, the currencies it quotes now.
 */
export async function manyRates(
  book: RateBook,
  request: { from: string; to?: string; date?: Day; amount?: string; source?: string; provenance?: boolean },
): Promise<ManyRates> {
  const { source } = request;
  if (source !== undefined) book.parseSource(source);
  const from = parseCurrency(request.from, 'from');
  const amount = request.amount === undefined ? undefined : parseAmount(request.amount);
  const named = request.to !== undefined;
  let targets: string[];
  if (request.to !== undefined) targets = parseTargets(request.to);
  else {
    const snapshot = await book.snapshot();
    // With a source, the currencies of the provider that serves `from` (of a family, the one that fixes it).
    const served = source === undefined ? undefined : [(await book.sourceFor(from, 'from', request.date === undefined ? 'live' : 'history', source)).data.provider];
    const listed = listCurrencies(snapshot, { order: served === undefined ? book.servingOrder : () => served });
    targets = listed.filter((c) => c.providers.length > 0 && c.code !== from).map((c) => c.code);
  }
  // An unknown or unsupported `from` is refused even when there is nothing to answer it for.
  if (targets.length === 0) await book.sourceFor(from, 'from', request.date === undefined ? 'live' : 'history', source);
  const rates: ManyRatesEntry[] = [];
  let settled = true;
  for (const to of targets) {
    let quote: RateQuote;
    if (request.date === undefined) quote = await book.liveRate(from, to, source);
    else {
      try {
        // A currency nobody named is not worth loading a history for: without one, it is left out.
        const dated = await book.rateOnDate(from, to, request.date, source, named);
        quote = dated.quote;
        settled &&= dated.settled;
      } catch (error) {
        if (!named && error instanceof DomainError && error.code === 'no_history') continue;
        throw error;
      }
    }
    const entry: ManyRatesEntry = amount
      ? (({ rate, result, asOf, stale }) => ({ to, rate, asOf, stale, result }))(convertAt(quote, amount))
      : { to, rate: quote.rate, asOf: quote.asOf, stale: quote.stale };
    if (request.provenance && quote.provenance) entry.provenance = quote.provenance;
    rates.push(entry);
  }
  rates.sort(byTo);
  return { from, ...(amount ? { amount: amount.text } : {}), rates, settled: request.date !== undefined && settled };
}
