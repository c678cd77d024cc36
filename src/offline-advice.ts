import type { Config } from './config.js';
import { providerEntry } from './providers/registry.js';

/**
 * The offline way to run, with the exact variables: for when no provider can be reached. The hosts
 * are named when there are one or two; more would be a line of host names (/readyz has each error).
 */
export function noRatesAdvice(config: Config): string {
  const urls = config.providers
    .filter((id) => providerEntry(id)?.metadata.kind !== 'peg')
    .map((id) => config.providerUrls[id])
    .filter((url): url is string => url !== undefined)
    .map((url) => new URL(url).host);
  const hosts = [...new Set(urls)];
  const reach = hosts.length === 0 ? undefined : hosts.length <= 2 ? hosts.join(' and ') : "the providers' sites";
  const network = reach !== undefined ? `check that this machine can reach ${reach} (HTTPS, or a proxy), ` : 'check EXRATES_FILE_URL, ';
  return `${network}or run offline from an ECB file: EXRATES_PROVIDERS=file EXRATES_FILE_URL=/path/to/eurofxref-hist.csv`;
}
