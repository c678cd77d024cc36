/**
 * The European Central Bank's euro foreign exchange reference rates, published once per TARGET
 * business day around 16:00 Frankfurt time.
 * Files and format: https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html
 */
import type { Clock, FetchOptions, Provider, RateDocument } from '../core/ports.js';
import { addDays, utcDay } from '../core/time.js';
import { ECB_HISTORY_MAX_BYTES, parseEcbDocument, withinRange } from './ecb-format.js';
import { FeedHttpError, fetchBytes } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';

export interface EcbProviderOptions {
  /** Where the eurofxref files live, e.g. `https://www.ecb.europa.eu/stats/eurofxref`. */
  baseUrl: string;
  timeoutMs: number;
  clock: Clock;
}

/**
 * The 90-day file reaches about 90 calendar days back from its newest day, and that day may be a
 * few days old (weekends, TARGET holidays, before the 16:00 publication); 85 keeps a margin so a
 * range starting near the edge is not silently cut short.
 */
const RECENT_WINDOW_DAYS = 85;

/**
 * The most bytes each file may hold, sent and inflated (fetchBytes; the ZIP's entry too): its
 * files differ a thousandfold in size, so each has its own limit, with a wide margin over the real
 * file (docs/operations.md). The daily file's is small enough that a hostile one is refused long
 * before it costs the event loop anything to parse.
 */
const ECB_MAX_BYTES = {
  'eurofxref-daily.xml': 1024 * 1024,
  'eurofxref-hist-90d.xml': 4 * 1024 * 1024,
  'eurofxref-hist.zip': ECB_HISTORY_MAX_BYTES,
  'eurofxref-hist.xml': ECB_HISTORY_MAX_BYTES,
} as const;

export function createEcbProvider(options: EcbProviderOptions): Provider {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  const get = async (file: keyof typeof ECB_MAX_BYTES, fetchOptions?: FetchOptions): Promise<RateDocument> => {
    const maxBytes = ECB_MAX_BYTES[file];
    const bytes = await fetchBytes(`${baseUrl}/${file}`, { timeoutMs: options.timeoutMs, maxBytes, signal: fetchOptions?.signal });
    return parseOffThread('ecb', parseEcbDocument, [bytes, maxBytes], fetchOptions?.signal);
  };

  // ECB publishes one fixed set of currencies, so `currencies` is not applied: there is nothing to save.
  return {
    id: 'ecb',
    base: 'EUR',
    // The euro's first day: the history file starts there.
    firstDay: '1999-01-04',
    seriesInOneDocument: true,

    latest(fetchOptions) {
      return get('eurofxref-daily.xml', fetchOptions);
    },

    async series(range, fetchOptions) {
      const today = utcDay(options.clock.now());
      if (range.from >= addDays(today, -RECENT_WINDOW_DAYS)) {
        return withinRange(await get('eurofxref-hist-90d.xml', fetchOptions), range);
      }
      let document: RateDocument;
      try {
        document = await get('eurofxref-hist.zip', fetchOptions);
      } catch (error) {
        // Mirrors and self-hosted copies sometimes carry only the uncompressed XML.
        if (!(error instanceof FeedHttpError && error.status === 404)) throw error;
        document = await get('eurofxref-hist.xml', fetchOptions);
      }
      return withinRange(document, range);
    },
  };
}
