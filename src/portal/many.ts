/** The amount in every currency (GET /api/v1/rates), while the visitor keeps the table open. */
import { api, showError } from './api.js';
import { amountIsBad } from './converter.js';
import { $ } from './dom.js';
import { dayOf, earlierDayNote, formatAsOf, formatDay, formatDecimal } from './format.js';
import { activeKey, names, onDate, rememberInAddress, state, withSource } from './state.js';
import type { RatesTable } from './types.js';

const manyToggle = $('many-toggle');
const manyBody = $('many-body');
const manyTable = $('many-table');
const manyRows = $<HTMLTableSectionElement>('many-rows');
const manyError = $('many-error');
let manyRequest: AbortController | null = null;
/** The key and query the table shows or is asking for, so that a change of `to` alone asks nothing. */
let manyWanted = '';

export function markTableOpen(): void {
  manyToggle.setAttribute('aria-expanded', String(state.table));
  manyToggle.textContent = state.table ? 'Hide table' : 'Show table';
  manyBody.hidden = !state.table;
}

export function initMany(): void {
  manyToggle.addEventListener('click', () => {
    state.table = !state.table;
    markTableOpen();
    rememberInAddress();
    void loadMany();
  });
}

export async function loadMany(): Promise<void> {
  $('many-pair').textContent = `${formatDecimal(state.amount)} ${state.from}`;
  markPicked();
  if (!state.table) return;
  if (amountIsBad()) {
    manyRequest?.abort();
    manyWanted = '';
    return clearMany();
  }
  const query = withSource(onDate({ from: state.from, amount: state.amount }));
  const wanted = JSON.stringify([activeKey(), query]);
  if (wanted === manyWanted) return;
  manyRequest?.abort();
  manyWanted = wanted;
  if (!activeKey()) return clearMany();
  const controller = new AbortController();
  manyRequest = controller;
  manyTable.setAttribute('aria-busy', 'true');
  try {
    const response = await api('/api/v1/rates', query, controller.signal);
    const body = (await response.json()) as RatesTable;
    if (controller.signal.aborted) return;
    showError(manyError, null);
    showMany(body, query.date ?? '');
  } catch (error) {
    if (controller.signal.aborted) return;
    manyWanted = '';
    clearMany();
    showError(manyError, error);
  } finally {
    if (manyRequest === controller) {
      manyRequest = null;
      manyTable.setAttribute('aria-busy', 'false');
    }
  }
}

function clearMany(): void {
  manyRows.replaceChildren();
  $('many-caption').textContent = activeKey() ? '' : 'Paste an API key above to see the table.';
}

function cell<K extends 'th' | 'td'>(tag: K, text: string, value?: string): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  element.textContent = text;
  if (value !== undefined) {
    element.className = 'number';
    element.dataset.value = value;
  }
  return element;
}

function showMany(body: RatesTable, requested: string): void {
  // The day most rates belong to leads the caption; a row of another day (a currency another
  // provider quotes, on its own calendar) says its own.
  const latest = body.rates.reduce((newest, entry) => (entry.asOf > newest ? entry.asOf : newest), '');
  const rows = body.rates.map((entry) => {
    const row = document.createElement('tr');
    row.dataset.code = entry.to;
    const currency = cell('th', '');
    currency.scope = 'row';
    const code = document.createElement('b');
    code.textContent = entry.to;
    const name = document.createElement('span');
    name.textContent = names.get(entry.to) ?? entry.to;
    currency.append(code, ' ', name);
    const rate = cell('td', formatDecimal(entry.rate), entry.rate);
    if (dayOf(entry.asOf) !== dayOf(latest)) {
      const day = document.createElement('small');
      day.textContent = `of ${formatDay(dayOf(entry.asOf))}`;
      rate.append(' ', day);
    }
    if (entry.stale) {
      const stale = document.createElement('small');
      stale.className = 'stale-note';
      stale.textContent = 'stale';
      stale.title = 'The latest refresh of this rate’s feed failed: this is the last stored rate.';
      rate.append(' ', stale);
    }
    row.append(currency, cell('td', formatDecimal(entry.result), entry.result), rate);
    return row;
  });
  manyRows.replaceChildren(...rows);
  const when = latest ? `, at the rates of ${formatAsOf(latest)}` : '';
  const note = latest ? earlierDayNote(requested, latest) : '';
  $('many-caption').textContent = `${formatDecimal(body.amount)} ${body.from} in ${formatDecimal(String(body.rates.length))} currencies${when}. ${note}`.trim();
  markPicked();
}

/** The row of the converter's target currency stands out. */
function markPicked(): void {
  for (const row of manyRows.rows) row.classList.toggle('picked', row.dataset.code === state.to);
}
