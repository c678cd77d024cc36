/**
 * Sources: the configured providers name where a shown rate comes from, fill the source picker
 * and the footer's reference data.
 */
import { $ } from './dom.js';
import { config, state } from './state.js';
import type { Currency } from './types.js';

/**
 * The configured providers in order of preference, each with the currencies it quotes now, as
 * /api/v1/providers lists them: embedded in the page, so that no request is spent on them.
 */
const providers = config.providers;

/** How the footer names the providers whose own names would say too little there; others by their names. */
const FOOTER_NAMES: Record<string, string> = {
  frankfurter: 'Frankfurter (central banks’ reference rates)',
  file: 'an ECB file this installation supplies',
};

/** The currencies each provider quotes now, from the API's /currencies list (currencies on request left out). */
export function setQuoted(currencies: Currency[]): void {
  for (const p of providers) p.currencies = currencies.filter((c) => !c.onRequest && c.providers.includes(p.id)).map((c) => c.code);
}

export const providerName = (id: string): string => providers.find((p) => p.id === id)?.name ?? id;

/** The footer names the providers the currencies come from, once the API has listed them. */
export function showReferenceData(currencies: Currency[]): void {
  const ids = [...new Set(currencies.flatMap((c) => c.providers))];
  const element = $('reference-data');
  element.textContent = ids.length > 0 ? ` Reference data: ${ids.map((id) => FOOTER_NAMES[id] ?? providerName(id)).join(', ')}.` : '';
  element.hidden = ids.length === 0;
}

const sourceField = $('source-field');
const sourceSelect = $<HTMLSelectElement>('source');
const sourceHelp = $('source-help');

/** An option of the source picker. */
function sourceOption(value: string, text: string): HTMLOptionElement {
  const option = document.createElement('option');
  option.value = value;
  option.textContent = text;
  return option;
}

/**
 * The picker offers the providers that quote both currencies now, and only where there is a
 * choice to make: with one provider configured it stays hidden (unless the address names one).
 */
export function renderSources(): void {
  const chosen = providers.find((p) => p.id === state.source);
  const missing = chosen ? [state.from, state.to].filter((code) => !chosen.currencies.includes(code)) : [];
  const quoting = providers.filter((p) => p.currencies.includes(state.from) && p.currencies.includes(state.to));
  const options = [sourceOption('', 'Any source (preferred)'), ...quoting.map((p) => sourceOption(p.id, p.name))];
  if (state.source && !(chosen && quoting.includes(chosen))) {
    const why = chosen ? ` (does not quote ${missing.join(' or ')})` : ' (not configured here)';
    options.push(sourceOption(state.source, `${providerName(state.source)}${why}`));
  }
  sourceSelect.replaceChildren(...options);
  sourceSelect.value = state.source;
  sourceField.hidden = !state.source && providers.length < 2;
  const refused = Boolean(state.source && (!chosen || missing.length > 0));
  sourceSelect.setAttribute('aria-invalid', String(refused));
  if (!state.source) sourceHelp.textContent = 'Any source: each currency from its own central bank where one is configured, else from the first provider that quotes it.';
  else if (!chosen) sourceHelp.textContent = `${state.source} is not a provider of this service: choose another source, or “Any source (preferred)”.`;
  else if (missing.length > 0) sourceHelp.textContent = `${chosen.name} does not quote ${missing.join(' or ')} now: choose another source, or “Any source (preferred)”.`;
  else sourceHelp.textContent = `Only the numbers ${chosen.name} publishes, on its days.`;
}

/** `onChange`: another source was chosen. */
export function initSources(onChange: () => void): void {
  sourceSelect.addEventListener('change', () => {
    state.source = sourceSelect.value;
    renderSources();
    onChange();
  });
}
