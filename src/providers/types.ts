/**
 * What the registry and the adapters share: a provider's description, its context and its entry.
 * The adapters import these from here, never from the registry, so that the registry can import
 * the adapters without a circle.
 */
import type { Clock, Provider } from '../core/ports.js';

export const PROVIDER_KINDS = ['central bank', 'peg', 'aggregator', 'commercial', 'file'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** What a person should know about a provider; for the docs and for listing providers over HTTP. */
export interface ProviderMetadata {
  /** The publisher's own name. */
  readonly name: string;
  /** A short name for log lines ("ECB", "NBU"). */
  readonly label: string;
  readonly kind: ProviderKind;
  /** The currency its rates are quoted against; null when it depends on the configured document. */
  readonly base: string | null;
  /** What it quotes, in words. */
  readonly quotes: string;
  /** The publisher's terms of use; null when it publishes none (or the operator supplies the data). */
  readonly termsUrl: string | null;
  /** When it publishes, in words. */
  readonly schedule: string;
}

/** Progress lines of long loads (a first history load paced over many requests). */
export interface ProviderLog {
  info(obj: object, msg?: string): void;
}

/** What a central bank's adapter is made with: the context's fields it reads, and its pace. */
export interface BankProviderOptions {
  /** The bank's origin (scheme, host and port); its documented paths and queries are appended. */
  baseUrl: string;
  timeoutMs: number;
  clock: Clock;
  log?: ProviderLog | undefined;
  /** Pause between the requests of a long history load (paced.ts). */
  paceMs?: number;
}

export interface ProviderContext {
  /**
   * Where the provider is reached: the origin (scheme, host and port) to which its documented
   * path and query are appended, from EXRATES_<ID>_URL or the entry's default. Empty for a
   * provider without an origin (the file provider).
   */
  baseUrl: string;
  timeoutMs: number;
  clock: Clock;
  log?: ProviderLog;
  /** Settings only some providers have. */
  oxrAppId?: string;
  fileUrl?: string;
}

export interface ProviderEntry {
  readonly id: string;
  readonly metadata: ProviderMetadata;
  /** The origin used when its URL setting is not set; undefined for a provider without one. */
  readonly defaultUrl: string | undefined;
  /** The setting naming its origin: EXRATES_<ID>_URL unless it predates that rule. */
  readonly urlVariable: string | undefined;
  /** Whether it is in the default EXRATES_PROVIDERS (in the list's order). */
  readonly byDefault: boolean;
  /** True for a wide-coverage provider: it loads a currency on its first request, nothing at start. */
  readonly loadsOnRequest: boolean;
  /**
   * A name several providers answer to together (`peg`: the legal parities, one provider per
   * anchor): EXRATES_PROVIDERS takes it for all of them, and `source` for whichever quotes the pair.
   */
  readonly family?: string;
  create(context: ProviderContext): Provider;
}
