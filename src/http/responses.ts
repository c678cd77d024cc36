import { publishedChanges } from '../core/corrections.js';
import { parseCurrency } from '../core/currencies.js';
import { providerCrossCheck } from '../core/cross-check.js';
import { manyRates, type ManyRates } from '../core/many-rates.js';
import type { Provider, RateStore, Tier } from '../core/ports.js';
import { utcDay, utcDayNumber, type Day } from '../core/time.js';
import type { QuotaUsage } from '../core/quota.js';
import { listCurrencies, quotedBy } from '../core/served-currencies.js';
import { ALL_RANGES, GROUPS, historyCsv, historyJson, historyNdjson, pairHistory, type History, type HistoryGroup, type HistoryRange, type HistoryWindow } from '../core/history.js';
import { retentionStart } from '../core/refresh.js';
import { oldestAskable } from '../core/retention.js';
import { convertAt, pairKey, parseAmount, type Conversion, type RateBook, type RateQuote } from '../core/rates.js';
import { providerEntry } from '../providers/registry.js';
import { createByteLru } from './byte-lru.js';
import { compressBody, encodedEtag, httpDate, ownBytes, strongEtag, type Encoding } from './caching.js';

/**
 * The bodies of the keyed API's answers, rendered once and kept while the rates they come from
 * are current.
 */

export const HISTORY_MAX_AGE = 3600;
const LIVE_MAX_AGE_CAP = 600;
export const JSON_TYPE = 'application/json; charset=utf-8';
export const CSV_TYPE = 'text/csv; charset=utf-8';
export const NDJSON_TYPE = 'application/x-ndjson';

export interface RenderedBody {
  body: string;
  etag: string;
  /** The body's length in bytes. */
  length: number;
  /** HTTP date of the asOf it answers for (for a list, the newest), when it has one. */
  lastModified?: string;
}

/** A body with its strong ETag and length, and the Last-Modified of the asOf it answers for, when it has one. */
function renderedBody(body: string, asOf?: string): RenderedBody {
  const rendered = { body, etag: strongEtag(body), length: Buffer.byteLength(body) };
  return asOf === undefined ? rendered : { ...rendered, lastModified: httpDate(asOf) };
}

export interface RenderedHistory {
  /** The body, encoded once (history bodies are large, and a string would be encoded again on every send). */
  body: Buffer;
  /** The representation's strong ETag: a compressed body has its own. */
  etag: string;
  /** The plain body's ETag, from which a compressed body's own is made. */
  plainEtag: string;
  /** The file name offered for CSV downloads. */
  name: string;
  /** Where the answer is kept (its pair, range, format, group and encoding; -1 for dates asked for, never kept), and for which UTC day (days since 1970) and generation of the rates. */
  key: number;
  day: number;
  generation: number;
  /** HTTP date of the last point's asOf. */
  lastModified: string;
}

/**
 * Quote bodies rendered once per quote: the book hands out the same quote object until the rates
 * change. Held by the quote (a WeakMap), so bounded by the quotes the book holds, and gone with them.
 */
export function createQuoteBodies(): (quote: RateQuote, provenance?: boolean) => RenderedBody {
  const rendered = new WeakMap<RateQuote, RenderedBody>();
  const expanded = new WeakMap<RateQuote, RenderedBody>();
  return (quote, provenance = false) => {
    const held = provenance ? expanded : rendered;
    let body = held.get(quote);
    if (!body) {
      const fields = { pair: quote.pair, from: quote.from, to: quote.to, rate: quote.rate, asOf: quote.asOf, stale: quote.stale };
      const text = JSON.stringify(provenance ? { ...fields, provenance: quote.provenance } : fields);
      body = renderedBody(text, quote.asOf);
      held.set(quote, body);
    }
    return body;
  };
}

/** A conversion's body, with the quote's provenance when asked for (`expand=provenance`). */
function conversionText(conversion: Conversion, provenance?: RateQuote['provenance']): string {
  const { from, to, amount, rate, result, asOf, stale } = conversion;
  return JSON.stringify(provenance === undefined ? { from, to, amount, rate, result, asOf, stale } : { from, to, amount, rate, result, asOf, stale, provenance });
}

/**
 * Conversions rendered per quote and amount (as sent): prices are converted again and again, and
 * a quote object lives until the rates change, so its conversions go with it. Bounded by entries
 * over all quotes; past the bound everything is dropped and rendered anew.
 */
export function createConversionBodies(maxEntries = 20_000): (quote: RateQuote, amountText: string, provenance?: boolean) => RenderedBody {
  // Per quote, by the amount's text.
  let byQuote = new WeakMap<RateQuote, Map<string, RenderedBody>>();
  let entries = 0;
  return (quote, amountText, provenance = false) => {
    if (provenance) {
      // Asked for now and then, by people checking a number: rendered each time, not kept.
      const body = conversionText(convertAt(quote, parseAmount(amountText)), quote.provenance);
      return renderedBody(body, quote.asOf);
    }
    let bodies = byQuote.get(quote);
    let rendered = bodies?.get(amountText);
    if (rendered) return rendered;
    // parseAmount throws on an amount the routes would refuse; nothing is kept then.
    const body = conversionText(convertAt(quote, parseAmount(amountText)));
    rendered = renderedBody(body, quote.asOf);
    if (entries >= maxEntries) {
      byQuote = new WeakMap();
      entries = 0;
      bodies = undefined;
    }
    if (!bodies) byQuote.set(quote, (bodies = new Map()));
    bodies.set(amountText, rendered);
    entries += 1;
    return rendered;
  };
}

/**
 * Cache-Control of live answers: cacheable until the next scheduled refresh (refreshes run on
 * wall-clock multiples of the interval), at most 10 minutes. The header changes once a second at
 * most, so it is built once per second.
 */
export function createLiveCacheControl(book: RateBook, refreshSeconds: number): () => string {
  let second = -1;
  let value = '';
  return () => {
    const nowSeconds = Math.floor(book.clock.now().getTime() / 1000);
    if (nowSeconds !== second) {
      const untilRefresh = refreshSeconds - (nowSeconds % refreshSeconds);
      second = nowSeconds;
      value = `private, max-age=${Math.min(untilRefresh, LIVE_MAX_AGE_CAP)}`;
    }
    return value;
  };
}

export const HISTORY_FORMATS = ['json', 'csv', 'ndjson'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

export interface HistoryBodies {
  /**
   * What is held in exactly that form (codes in either case), for inspection: never computes nor
   * compresses, and does not count the body out, so it is never to be sent (`render` is).
   */
  peek(from: string, to: string, range: HistoryRange, format: HistoryFormat, encoding: Encoding, group?: HistoryGroup): RenderedHistory | undefined;
  /**
   * The answer in an encoding, computed when it is not held yet. Only the form asked for is kept:
   * a computed plain body that was needed only to be compressed is not. Answers for dates asked
   * for (any of some 1,800 starts times as many ends) are computed for each request and never
   * kept: they would crowd the fixed ranges out. With a source (one provider's numbers only), the
   * answer is likewise computed for the request and not kept.
   */
  render(from: string, to: string, window: HistoryWindow, format: HistoryFormat, encoding?: Encoding, group?: HistoryGroup, source?: string): Promise<RenderedHistory>;
}

/** A history's body in a format. */
function historyBody(history: History, format: HistoryFormat): string {
  if (format === 'csv') return historyCsv(history.points);
  return format === 'ndjson' ? historyNdjson(history) : historyJson(history);
}

/** The file name offered for a CSV download: `<PAIR>_<range>[_<group>].csv`, dates joined by `_`. */
function fileName(history: History): string {
  return `${history.pair}_${history.range.replace('/', '_')}${history.group === undefined ? '' : `_${history.group}`}.csv`;
}

/** The forms an answer is kept in, each under a key of its own. */
const ENCODINGS: readonly Encoding[] = ['identity', 'gzip', 'br'];
/** Ungrouped, then each group. */
const GROUPINGS = [undefined, ...GROUPS] as const;
const FORMS = ALL_RANGES.length * HISTORY_FORMATS.length * GROUPINGS.length * ENCODINGS.length;

/**
 * Rendered history answers per pair, range, format, day and generation of the rates, and their
 * compressed forms: the same history is asked for again and again between refreshes. One
 * byte-bounded LRU holds both, each form an entry of its own, and the plain form is kept only
 * when it is asked for: clients who all ask for gzip keep only the compressed bodies (a fifth of
 * the size), and the budget is spent on what is asked for. 48 MB hold every pair of the bulk
 * provider's currencies over five years in one form.
 */
export function createHistoryBodies(book: RateBook, maxBytes = 48 * 1024 * 1024): HistoryBodies {
  const cache = createByteLru<RenderedHistory, number>(maxBytes);
  /**
   * A number per pair and form (no key string is built per request). The day and generation an
   * answer was made for are checked on the entry. The key of the plain form, for codes in either case; none for a
   * pair no answer is kept for (only valid codes are ever kept, so a hit needs no check).
   */
  const keyOf = (from: string, to: string, range: HistoryRange, format: HistoryFormat, group: HistoryGroup | undefined) => {
    const pair = pairKey(from, to);
    if (pair === undefined) return undefined;
    const form = (ALL_RANGES.indexOf(range) * HISTORY_FORMATS.length + HISTORY_FORMATS.indexOf(format)) * GROUPINGS.length + GROUPINGS.indexOf(group);
    return pair * FORMS + form * ENCODINGS.length;
  };
  /** The key of an answer's form in an encoding, from its plain form's. */
  const encodedKey = (key: number, encoding: Encoding) => key + ENCODINGS.indexOf(encoding);
  const today = () => utcDayNumber(book.clock.now());
  const current = (held: RenderedHistory | undefined, day: number, generation: number) =>
    held !== undefined && held.day === day && held.generation === generation ? held : undefined;

  /** A plain answer compressed, kept under its own key: compressed once for every request for it. */
  function encode(rendered: RenderedHistory, encoding: 'br' | 'gzip'): RenderedHistory {
    const key = encodedKey(rendered.key, encoding);
    let found = current(cache.get(key), rendered.day, rendered.generation);
    if (!found) {
      const body = compressBody(rendered.body, encoding);
      found = { ...rendered, body, etag: encodedEtag(rendered.plainEtag, encoding), key };
      cache.set(key, found, body.length);
    }
    return found;
  }

  /** What is held for a pair, compressing a held plain answer when a compressed one is asked for. */
  function held(from: string, to: string, range: HistoryRange, format: HistoryFormat, encoding: Encoding, group: HistoryGroup | undefined): RenderedHistory | undefined {
    const key = keyOf(from, to, range, format, group);
    if (key === undefined) return undefined;
    const day = today();
    const generation = book.generation();
    if (encoding === 'identity') return current(cache.get(key), day, generation);
    const compressed = current(cache.get(encodedKey(key, encoding)), day, generation);
    if (compressed) return compressed;
    const plain = current(cache.get(key), day, generation);
    return plain && encode(plain, encoding);
  }

  return {
    peek(from, to, range, format, encoding, group) {
      const key = keyOf(from, to, range, format, group);
      return key === undefined ? undefined : current(cache.peek(encodedKey(key, encoding)), today(), book.generation());
    },
    async render(from, to, window, format, encoding = 'identity', group, source) {
      const fixed = typeof window === 'string' && source === undefined;
      const found = fixed ? held(from, to, window, format, encoding, group) : undefined;
      if (found) return found;
      const fromCode = parseCurrency(from, 'from');
      const toCode = parseCurrency(to, 'to');
      const day = today();
      const generation = book.generation();
      const history = await pairHistory(book, fromCode, toCode, window, group, source);
      const bytes = ownBytes(historyBody(history, format));
      const etag = strongEtag(bytes);
      const rendered = { body: bytes, etag, plainEtag: etag, name: fileName(history), key: -1, day, generation, lastModified: httpDate(history.asOf) };
      if (!fixed) {
        // Dates asked for, or one source's numbers: computed for this request only.
        if (encoding === 'identity') return rendered;
        return { ...rendered, body: compressBody(bytes, encoding), etag: encodedEtag(etag, encoding) };
      }
      // Kept under the day and generation the answer was computed for: if the rates moved
      // meanwhile, a newer request computes again.
      rendered.key = keyOf(fromCode, toCode, window as HistoryRange, format, group)!;
      if (encoding !== 'identity') return encode(rendered, encoding);
      cache.set(rendered.key, rendered, bytes.length);
      return rendered;
    },
  };
}

/** The currencies list, rendered once per generation of the rates (it changes only when they do). */
export function createCurrencyListBodies(book: RateBook, wideProviders: readonly string[]): () => Promise<RenderedBody> {
  // firstDate is no older than a history may start, which moves with the day.
  let held: { generation: number; day: Day; rendered: RenderedBody } | undefined;
  return async () => {
    const day = utcDay(book.clock.now());
    if (held && held.generation === book.generation() && held.day === day && book.current()) return held.rendered;
    const snapshot = await book.snapshot();
    const generation = book.generation();
    if (held?.generation === generation && held.day === day) return held.rendered;
    const body = JSON.stringify({ currencies: listCurrencies(snapshot, { order: book.servingOrder, servable: book.servable(undefined, undefined), wideProviders, historyFrom: oldestAskable(day, book.historyYears), today: day }) });
    held = { generation, day, rendered: renderedBody(body) };
    return held.rendered;
  };
}

export function renderManyRates(answer: ManyRates): RenderedBody {
  const { settled: _settled, ...fields } = answer;
  const body = JSON.stringify(fields);
  return renderedBody(body);
}

export interface ManyRatesQuery {
  from: string;
  to?: string;
  date?: Day;
  amount?: string;
  /** One provider's numbers only. */
  source?: string;
  /** Each entry with its provenance. */
  provenance?: boolean;
}

/** A /rates answer rendered, with what its headers need. */
export interface RenderedManyRates {
  rendered: RenderedBody;
  /** Every entry is a settled past day's: the answer can never change. */
  settled: boolean;
}

/**
 * /rates answers per query and generation of the rates: the same question (one currency in every
 * other, say) is asked again and again between refreshes, and each answer costs a quote and a
 * line of JSON per target. Byte-bounded like the history answers; an answer computed from a
 * generation that moved meanwhile is computed again by the next request.
 */
export function createManyRatesBodies(book: RateBook, maxBytes = 8 * 1024 * 1024): (query: ManyRatesQuery) => Promise<RenderedManyRates> {
  const cache = createByteLru<{ generation: number; answer: RenderedManyRates }>(maxBytes);
  return async (query) => {
    const key = `${query.from}|${query.to ?? ''}|${query.date ?? ''}|${query.amount ?? ''}|${query.source ?? ''}|${query.provenance ? 'p' : ''}`;
    const held = cache.get(key);
    if (held && held.generation === book.generation() && book.current()) return held.answer;
    const generation = book.generation();
    const many = await manyRates(book, query);
    let newestAsOf: string | undefined;
    for (const entry of many.rates) if (newestAsOf === undefined || entry.asOf > newestAsOf) newestAsOf = entry.asOf;
    const rendered = renderManyRates(many);
    if (newestAsOf !== undefined) rendered.lastModified = httpDate(newestAsOf);
    const answer = { rendered, settled: many.settled };
    cache.set(key, { generation, answer }, answer.rendered.length + key.length);
    return answer;
  };
}

/** A key's usage as GET /api/v1/usage answers it; resetsAt is the instant X-RateLimit-Reset gives in Unix seconds. */
export function renderUsage(tier: Tier, usage: QuotaUsage): string {
  const resetsAt = new Date(usage.resetAt * 1000).toISOString().replace('.000Z', 'Z');
  return JSON.stringify({ tier, limit: usage.limit, used: usage.used, remaining: usage.remaining, resetsAt });
}

/** The configured providers and their state, as GET /api/v1/providers answers them. */
export async function renderProviderList(book: RateBook, rates: RateStore, configured: readonly Provider[]): Promise<RenderedBody> {
  const snapshot = await book.snapshot();
  const checked = await book.crossCheck();
  const providers = await Promise.all(
    configured.map(async (provider) => {
      const state = await rates.providerState(provider.id);
      // Every configured provider is made from its registry entry (src/deps.ts).
      const { metadata } = providerEntry(provider.id)!;
      return {
        id: provider.id,
        name: metadata.name,
        kind: metadata.kind,
        base: provider.base,
        currencies: quotedBy(snapshot, provider.id),
        latestDay: snapshot.data.get(provider.id)?.days.at(-1) ?? null,
        refresh: { lastSuccessAt: state?.lastSuccessAt ?? null, lastFailureAt: state?.lastFailureAt ?? null, failing: state?.failing ?? false },
        termsUrl: metadata.termsUrl,
        schedule: metadata.schedule,
        crossCheck: providerCrossCheck(checked, provider.id),
        ...(await publishedChanges(rates, provider.id, retentionStart(book.clock, book.historyYears))),
      };
    }),
  );
  const body = JSON.stringify({ providers });
  return renderedBody(body);
}

/** Cache-Control of an answer that can never change: a rate on a settled past date. */
export const SETTLED_CACHE_CONTROL = 'private, max-age=31536000, immutable';
