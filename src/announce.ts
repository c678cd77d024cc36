import type { AddressInfo } from 'node:net';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config, ProviderId } from './config.js';
import type { RateSnapshot } from './core/rates.js';
import type { ProviderState } from './core/ports.js';
import { failureCause, shortError } from './core/refresh.js';
import { grouped } from './core/text.js';
import { providerEntry } from './providers/registry.js';
import type { Deps } from './deps.js';
import { redactedUrl } from './log.js';
import { noRatesAdvice } from './offline-advice.js';
import { sqliteFile } from './storage/database.js';

/**
 * The lines a person reads in the terminal when the service starts: where it listens and what
 * it serves, then whether rates loaded, and what to do when none could be.
 */

function labelOf(id: ProviderId): string {
  return providerEntry(id)?.metadata.label ?? id;
}
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** The URL a person can open: localhost for a wildcard bind, the address itself otherwise. */
export function publicBase(host: string, port: number): string {
  if (WILDCARDS.has(host)) return `http://localhost:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The store as it may be shown: a SQLite file's absolute path, or the database URL without its password. */
export function describeStore(databaseUrl: string): string {
  if (databaseUrl === 'sqlite::memory:') return 'SQLite in memory (nothing is kept)';
  const file = sqliteFile(databaseUrl);
  if (file !== undefined) return `SQLite ${file}`;
  return `PostgreSQL ${redactedUrl(databaseUrl)}`;
}

/** Logs the start line once the server listens (on the port it got, when PORT is 0). */
export function announceListening(deps: Deps, address: AddressInfo | string | null): void {
  const port = typeof address === 'object' && address !== null ? address.port : deps.config.port;
  deps.log.info({ url: `${publicBase(deps.config.host, port)}/`, host: deps.config.host, port }, listeningLine(deps.config, port));
}

export function listeningLine(config: Config, port: number): string {
  const base = publicBase(config.host, port);
  const bind = WILDCARDS.has(config.host) ? ` (bound to ${config.host}: every network interface)` : '';
  const metrics = config.metrics.port === undefined ? '' : `, metrics ${publicBase(config.metrics.host, config.metrics.port)}/metrics`;
  return `exrates listening on ${base}/${bind}; portal ${base}/, API docs ${base}/docs${metrics}; store: ${describeStore(config.databaseUrl)}; providers: ${config.providers.join(', ')}; loading rates…`;
}

function span(first: string, last: string): string {
  const days = (Date.parse(last) - Date.parse(first)) / 86_400_000;
  if (days >= 365) return `${Math.round(days / 365.25)} years`;
  if (days >= 60) return `${Math.round(days / 30.44)} months`;
  return `${Math.round(days) + 1} days`;
}

/**
 * "39,356 ECB rates, 5 years, newest 2026-03-05" for each provider holding rates, or why one holds
 * none. The legal parities are computed here, not fetched: they alone do not make the service ready.
 * With nothing loaded, one short line: which failed, why in a word, and, last, what to do.
 */
export function loadedLine(config: Config, snapshot: RateSnapshot, states: ReadonlyMap<string, ProviderState | null>): { ready: boolean; line: string } {
  const parts: string[] = [];
  const failed: string[] = [];
  const causes = new Set<string>();
  let ready = false;
  for (const id of config.providers) {
    const data = snapshot.data.get(id);
    const quotes = data ? [...data.series.values()].reduce((sum, series) => sum + series.rates.length, 0) : 0;
    const state = states.get(id);
    const peg = providerEntry(id)?.metadata.kind === 'peg';
    if (data && quotes > 0) {
      if (!peg) ready = true;
      const stale = state?.failing ? ` (stale: ${shortError(state.lastError ?? 'failed')})` : '';
      parts.push(`${grouped(quotes)} ${labelOf(id)} rates, ${span(data.days[0]!, data.days.at(-1)!)}, newest ${data.days.at(-1)}${stale}`);
    } else if (state?.failing) {
      parts.push(`${labelOf(id)} failed: ${shortError(state.lastError ?? 'failed')}`);
      failed.push(labelOf(id));
      causes.add(failureCause(state.lastError ?? 'failed'));
    } else if (providerEntry(id)?.loadsOnRequest) {
      parts.push(`${labelOf(id)} currencies load on first request`);
    } else {
      parts.push(`no ${labelOf(id)} rates`);
    }
  }
  if (ready) return { ready, line: `ready: ${parts.join('; ')}` };
  const what = failed.length > 0 ? `${failed.join(', ')} failed (${[...causes].join(', ')}; /readyz has each error)` : 'nothing stored yet';
  return { ready, line: `no rates loaded: ${what}. To fix: ${noRatesAdvice(config)}` };
}

/** Logs the outcome of the first load: the ready line, or the advice when nothing could be loaded. */
export async function announceLoaded(deps: Deps): Promise<void> {
  try {
    const states = new Map(await Promise.all(deps.config.providers.map(async (id) => [id, await deps.rates.providerState(id)] as const)));
    const { ready, line } = loadedLine(deps.config, await deps.book.snapshot(), states);
    if (ready) deps.log.info({}, line);
    // Nothing failed and nothing is stored: another instance holds the first load (its lock).
    else if (![...states.values()].some((state) => state?.failing)) deps.log.info({}, 'no rates stored yet: another instance is loading them; they are served as soon as they are stored');
    else deps.log.error({}, line);
  } catch (error) {
    deps.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not summarise the loaded rates');
  }
}

/**
 * A `file` provider whose local file does not exist can never load anything: refuse the start
 * instead of serving an empty store as stale. URLs are left to the refresh (a server may be down
 * for a while).
 */
export async function checkFileSource(config: Config): Promise<void> {
  const location = config.providers.includes('file') ? config.fileUrl : undefined;
  if (location === undefined || /^https?:\/\//i.test(location)) return;
  const path = /^file:/i.test(location) ? fileURLToPath(location) : location;
  try {
    if (!(await stat(path)).isFile()) throw new Error(`EXRATES_FILE_URL=${location}: ${resolve(path)} is not a file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`EXRATES_FILE_URL=${location}: no such file (${resolve(path)})`);
    throw error;
  }
}
