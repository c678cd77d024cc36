/** The conversion: the amount and the day asked for, and the rate, its age and its source as the API answers. */
import { api, serviceNow, showError } from './api.js';
import { $ } from './dom.js';
import { earlierDayNote, formatAsOf, formatDecimal, unit } from './format.js';
import { showProvenance } from './provenance.js';
import { activeKey, AMOUNT, DAY, onDate, state, withSource } from './state.js';
import type { Conversion, Provenance } from './types.js';

/**
 * How old a provider's newest rate may be and still be called live: a daily fixing, plus a
 * weekend and a holiday before the next one (ECB, and Frankfurter's central banks); Open Exchange
 * Rates publishes hourly. A provider not known here counts as daily.
 */
const LIVE_FOR_HOURS: Record<string, number> = { ecb: 96, file: 96, frankfurter: 96, openexchangerates: 2 };
const DAILY_HOURS = 96;

const amountInput = $<HTMLInputElement>('amount');
const amountError = $('amount-error');
const convertError = $('convert-error');
const result = $('result');
let convertRequest: AbortController | null = null;
let amountTimer: ReturnType<typeof setTimeout> | undefined;

/** What is wrong with a typed amount, in a sentence; null when it can be asked for. */
function amountProblem(text: string): string | null {
  if (AMOUNT.test(text)) return null;
  if (text === '') return 'Enter an amount.';
  if (/^[-−]/.test(text)) return 'The amount cannot be negative.';
  if (AMOUNT.test(text.replace(',', '.'))) return `Use “.” as the decimal point: ${text.replace(',', '.')}.`;
  const [whole = '', fraction] = text.split('.');
  if (/^[0-9]+$/.test(whole) && (fraction === undefined || /^[0-9]+$/.test(fraction))) {
    return whole.length > 18 ? 'At most 18 digits before the decimal point.' : 'At most 12 decimals.';
  }
  return 'Digits only, with one “.” as the decimal point (such as 1234.5).';
}

/** Whether the amount field holds one that cannot be asked for (said beside it): nothing is shown for it. */
export function amountIsBad(): boolean {
  return amountProblem(amountInput.value.trim()) !== null;
}

// A past day: empty means the latest rate. The browser's calendar stops at today (UTC); the server
// has the last word on which days it answers for, and says so in the problem it returns.
const dateInput = $<HTMLInputElement>('date');
const dateLatest = $('date-latest');
let dateTimer: ReturnType<typeof setTimeout> | undefined;

/** `onChange`: the amount or the day changed (already in `state`), or the amount turned bad. */
export function initConverter(onChange: () => void): void {
  amountInput.value = state.amount;

  /** A bad amount is said next to the field, and what was shown for the last good one is cleared. */
  function showAmountProblem(problem: string | null): void {
    amountInput.setAttribute('aria-invalid', String(problem !== null));
    amountError.textContent = problem ?? '';
    amountError.hidden = problem === null;
    if (problem === null) return;
    clearTimeout(amountTimer);
    onChange();
  }

  amountInput.addEventListener('input', () => {
    clearTimeout(amountTimer);
    const text = amountInput.value.trim();
    const problem = amountProblem(text);
    showAmountProblem(problem);
    if (problem) return;
    // Typing is quick: ask once the figure settles.
    amountTimer = setTimeout(() => {
      state.amount = text;
      onChange();
    }, 250);
  });
  $('convert-form').addEventListener('submit', (event) => event.preventDefault());

  dateInput.max = new Date().toISOString().slice(0, 10);
  dateInput.value = state.date;
  dateLatest.hidden = !state.date;

  function setDate(day: string): void {
    if (day === state.date) return;
    state.date = day;
    dateInput.value = day;
    dateLatest.hidden = !day;
    onChange();
  }

  dateInput.addEventListener('change', () => {
    clearTimeout(dateTimer);
    const day = dateInput.value;
    if (day !== '' && !DAY.test(day)) return;
    // Typing a year digit by digit makes a valid date at each digit: ask once it settles.
    dateTimer = setTimeout(() => setDate(day), 300);
  });
  dateLatest.addEventListener('click', () => {
    clearTimeout(dateTimer);
    setDate('');
    dateInput.focus();
  });
}

export async function convert(): Promise<void> {
  convertRequest?.abort();
  // A bad amount is said next to its field; the last good one is not shown in its place.
  if (amountIsBad()) {
    showError(convertError, null);
    return clearResult();
  }
  if (!activeKey()) return clearResult();
  const controller = new AbortController();
  convertRequest = controller;
  result.setAttribute('aria-busy', 'true');
  try {
    const requested = state.date;
    const query = withSource(onDate({ from: state.from, to: state.to, amount: state.amount }));
    const response = await api('/api/v1/convert', { ...query, expand: 'provenance' }, controller.signal);
    const body = (await response.json()) as Conversion;
    if (controller.signal.aborted) return;
    showError(convertError, null);
    showConversion(body, requested);
  } catch (error) {
    if (controller.signal.aborted) return;
    clearResult();
    showError(convertError, error);
  } finally {
    if (convertRequest === controller) result.setAttribute('aria-busy', 'false');
  }
}

export function clearResult(): void {
  result.dataset.empty = 'true';
  $('provenance').hidden = true;
  $('date-note').hidden = true;
  $('result-from').textContent = '';
  $('result-value').textContent = '';
  $('result-value').dataset.value = '';
  $('result-hint').hidden = Boolean(activeKey());
}

/** Hours a rate may be old and still be live: the slowest cadence of the providers it comes from. */
function liveForHours(provenance: Provenance | undefined): number {
  const serving = provenance?.providers ?? [];
  return Math.max(...(serving.length > 0 ? serving : ['ecb']).map((id) => LIVE_FOR_HOURS[id] ?? DAILY_HOURS));
}

/** "3 hours", "5 days", "8 months": how old a rate is, roughly. */
function roughAge(ms: number): string {
  const hours = Math.floor(ms / 3_600_000);
  const days = Math.floor(hours / 24);
  const months = Math.floor(days / 30.44);
  if (months >= 2) return unit(months, 'month');
  if (days >= 2) return unit(days, 'day');
  return unit(hours, 'hour');
}

function showConversion(body: Conversion, requested: string): void {
  result.dataset.empty = 'false';
  $('result-from').textContent = `${formatDecimal(body.amount)} ${body.from} =`;
  const value = $('result-value');
  value.textContent = `${formatDecimal(body.result)} ${body.to}`;
  value.dataset.value = body.result;
  const rate = $('rate-text');
  rate.textContent = `1 ${body.from} = ${formatDecimal(body.rate)} ${body.to}`;
  rate.dataset.value = body.rate;
  const asOf = $<HTMLTimeElement>('as-of');
  asOf.dateTime = body.asOf;
  asOf.textContent = formatAsOf(body.asOf);
  $('result-hint').hidden = true;
  $('stale-marker').hidden = !body.stale;
  // Not live when older than its providers publish (an old file, a feed that stopped), on the
  // service's clock: its age instead.
  const age = serviceNow() - Date.parse(body.asOf);
  const aged = !body.stale && !requested && age > liveForHours(body.provenance) * 3_600_000;
  $('fresh-marker').hidden = body.stale || Boolean(requested) || aged;
  const ageMarker = $('age-marker');
  ageMarker.textContent = aged ? `Not live: ${roughAge(age)} old` : '';
  ageMarker.hidden = !aged;
  $('past-marker').hidden = !requested;
  const note = $('date-note');
  note.textContent = earlierDayNote(requested, body.asOf);
  note.hidden = note.textContent === '';
  showProvenance(body);
}
