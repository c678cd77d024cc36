/**
 * The API, called from the browser with the key in use; errors said in words; the service's
 * clock, as the Date of its answers tells it.
 */
import { showQuota } from './key-bar.js';
import { providerName } from './sources.js';
import { activeKey, state } from './state.js';
import type { Problem } from './types.js';

export class ApiError extends Error {
  constructor(
    readonly problem: Problem | null,
    readonly status: number,
  ) {
    super(problem?.detail ?? `The server answered ${status}.`);
  }
}

/**
 * How far the service's clock is ahead of this browser's, as the Date of its latest answer says:
 * a rate's age and today's date are the service's, as its `stale` and its days are (a visitor's
 * clock may be wrong, and a service replaying another time runs on EXRATES_NOW).
 */
let serviceClockOffset = 0;
export const serviceNow = (): number => Date.now() + serviceClockOffset;
/** Today's date in UTC on the service's clock, the calendar the API's days follow. */
export const todayUtc = (): string => new Date(serviceNow()).toISOString().slice(0, 10);

export function apiUrl(path: string, query: Record<string, string>): URL {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

export async function api(path: string, query: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  // Revalidated every time (a 304 when nothing changed): the browser's cache is keyed by URL, not
  // by key, so a cached answer must not stand in for what the server says to the key in use now.
  const response = await fetch(apiUrl(path, query), { headers: { 'X-Api-Key': activeKey() }, cache: 'no-cache', signal: signal ?? null });
  const served = Date.parse(response.headers.get('date') ?? '');
  if (!Number.isNaN(served)) serviceClockOffset = served - Date.now();
  showQuota(response.headers);
  if (!response.ok) {
    let problem: Problem | null = null;
    try {
      problem = (await response.json()) as Problem;
    } catch {
      // not a problem document
    }
    throw new ApiError(problem, response.status);
  }
  return response;
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const p = error.problem;
    if (p?.code === 'unauthorized') return state.key ? 'This API key was not accepted. Check it, or ask for a new one.' : 'An API key is needed: paste yours above.';
    if (p?.code === 'unsupported_currency' && state.source && (p.param === 'from' || p.param === 'to')) {
      return `${providerName(state.source)} does not quote ${state[p.param]}: choose another source, or “Any source (preferred)”.`;
    }
    return p ? `${p.title}: ${p.detail}` : error.message;
  }
  return 'The server could not be reached. Check your connection and try again.';
}

/** Says an error in its element; null hides it. */
export function showError(element: HTMLElement, error: unknown): void {
  if (error) {
    element.textContent = describeError(error);
    element.hidden = false;
  } else {
    element.hidden = true;
    element.textContent = '';
  }
}
