import { FeedError } from '../core/errors.js';
import type { Provider, RateDocument } from '../core/ports.js';
import { ECB_HISTORY_MAX_BYTES, parseEcbDocument, withinRange } from './ecb-format.js';
import { readSource } from './fetch-bytes.js';
import { parseOffThread } from './off-thread.js';

export interface FileProviderOptions {
  /** A file path, a `file://` URL or an `http(s)://` URL of a document in one of ECB's layouts. */
  location: string;
  timeoutMs: number;
}

/**
 * Rates from a local or self-hosted copy of an ECB file, for offline installs and tests. The source
 * is read again on every call so that replacing the file takes effect without a restart.
 */
export function createFileProvider(options: FileProviderOptions): Provider {
  const load = async (signal: AbortSignal | undefined): Promise<RateDocument> => {
    const bytes = await readSource(options.location, { timeoutMs: options.timeoutMs, maxBytes: ECB_HISTORY_MAX_BYTES, signal });
    return { ...(await parseOffThread('ecb', parseEcbDocument, [bytes, ECB_HISTORY_MAX_BYTES], signal)), provider: 'file' };
  };

  return {
    id: 'file',
    base: 'EUR',
    operatorSupplied: true,
    seriesInOneDocument: true,

    async latest(fetchOptions) {
      const document = await load(fetchOptions?.signal);
      const newest = document.days.at(-1);
      // parseEcbDocument never yields an empty document; this guards the type, not the data.
      if (newest === undefined) throw new FeedError(`${options.location}: no days`);
      return { ...document, days: [newest] };
    },

    async series(range, fetchOptions) {
      return withinRange(await load(fetchOptions?.signal), range);
    },
  };
}
