/** Searchable currency pickers (ARIA 1.2 combobox with a listbox popup), and the pair they choose. */
import { api } from './api.js';
import { $ } from './dom.js';
import { renderSources, setQuoted, showReferenceData } from './sources.js';
import { activeKey, catalogue, names, setCatalogue, state } from './state.js';
import type { Currency, CurrencyName } from './types.js';

type Side = 'from' | 'to';

interface Picker {
  show(code: string): void;
  refresh(): void;
}

function createPicker(side: Side, onPick: (code: string) => void): Picker {
  const input = $<HTMLInputElement>(`${side}-input`);
  const list = $(`${side}-list`);
  let options: HTMLLIElement[] = [];
  let active = -1;

  const label = (code: string) => `${code} · ${names.get(code) ?? code}`;
  const show = (code: string) => {
    input.value = label(code);
  };

  function matches(query: string): { served: CurrencyName[]; onRequest: CurrencyName[] } {
    const q = query.trim().toLowerCase();
    const score = (c: CurrencyName) => {
      const code = c.code.toLowerCase();
      const name = c.name.toLowerCase();
      if (!q) return 1;
      if (code === q) return 4;
      if (code.startsWith(q)) return 3;
      if (name.split(/[\s()-]+/).some((w) => w.startsWith(q))) return 2;
      return name.includes(q) || `${code} · ${name}`.includes(q) ? 1 : 0;
    };
    const replaced = (c: CurrencyName) => (c.replacedBy === undefined ? 0 : 1);
    const rank = (group: CurrencyName[]) =>
      group
        .map((c) => ({ c, s: score(c) }))
        .filter((x) => x.s > 0)
        // Equally good matches of a query: currencies in use before those replaced (GBP before CYP for "pound").
        .sort((a, b) => b.s - a.s || (q ? replaced(a.c) - replaced(b.c) : 0) || a.c.code.localeCompare(b.c.code))
        .map((x) => x.c);
    return { served: rank(catalogue.served), onRequest: q ? rank(catalogue.onRequest) : catalogue.onRequest };
  }

  function render(query: string): void {
    const { served, onRequest } = matches(query);
    list.replaceChildren();
    options = [];
    const addGroup = (title: string, items: CurrencyName[], note?: string) => {
      if (items.length === 0) return;
      if (title) {
        const header = document.createElement('li');
        header.className = 'group';
        header.setAttribute('role', 'presentation');
        header.textContent = title;
        list.append(header);
      }
      for (const c of items) {
        const li = document.createElement('li');
        li.id = `${side}-option-${c.code}`;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', 'false');
        li.dataset.code = c.code;
        const code = document.createElement('b');
        code.textContent = c.code;
        const name = document.createElement('span');
        name.textContent = c.name;
        li.append(code, name);
        if (note) {
          const hint = document.createElement('span');
          hint.className = 'visually-hidden';
          hint.textContent = note;
          li.append(hint);
        }
        li.addEventListener('mousedown', (event) => event.preventDefault());
        li.addEventListener('click', () => choose(c.code));
        list.append(li);
        options.push(li);
      }
    };
    addGroup(onRequest.length > 0 ? 'Available now' : '', served);
    addGroup('More, loaded on first use', onRequest, ' (loaded on first use)');
    if (options.length === 0) {
      const empty = document.createElement('li');
      empty.className = 'empty';
      empty.setAttribute('role', 'presentation');
      empty.textContent = 'No currency matches.';
      list.append(empty);
    }
    setActive(options.length > 0 && query.trim() ? 0 : -1);
  }

  function setActive(index: number): void {
    options[active]?.setAttribute('aria-selected', 'false');
    active = index;
    const option = options[active];
    if (active >= 0 && option) {
      option.setAttribute('aria-selected', 'true');
      input.setAttribute('aria-activedescendant', option.id);
      option.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  }

  function open(): void {
    if (!list.hidden) return;
    render(input.value.includes(' · ') ? '' : input.value);
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  }

  function close(): void {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function choose(code: string): void {
    close();
    show(code);
    onPick(code);
  }

  /** Leaving the field: a typed code or an exact name is taken, anything else goes back. */
  function settle(): void {
    const typed = input.value.trim();
    if (typed.includes(' · ')) return;
    const code = typed.toUpperCase();
    if (/^[A-Z]{3}$/.test(code)) return choose(code);
    const byName = [...names].find(([, name]) => name.toLowerCase() === typed.toLowerCase());
    if (byName) return choose(byName[0]);
    show(state[side]);
  }

  input.addEventListener('focus', () => {
    input.select();
    loadCurrencies();
  });
  input.addEventListener('click', open);
  input.addEventListener('input', () => {
    if (list.hidden) {
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
    }
    render(input.value);
  });
  input.addEventListener('blur', () => {
    close();
    settle();
  });
  input.addEventListener('keydown', (event) => {
    switch (event.key) {
      case 'ArrowDown':
        event.preventDefault();
        if (list.hidden) open();
        else setActive(Math.min(options.length - 1, active + 1));
        break;
      case 'ArrowUp':
        event.preventDefault();
        if (!list.hidden) setActive(Math.max(0, active - 1));
        break;
      case 'Enter': {
        event.preventDefault();
        const code = list.hidden ? undefined : options[active]?.dataset.code;
        if (code !== undefined) choose(code);
        else settle();
        break;
      }
      case 'Escape':
        if (!list.hidden) {
          event.preventDefault();
          close();
          show(state[side]);
        }
        break;
      default:
        break;
    }
  });
  /** The list changed (the API's arrived): the label and an open list follow it. */
  function refresh(): void {
    if (document.activeElement !== input) show(state[side]);
    if (!list.hidden) render(input.value.includes(' · ') ? '' : input.value);
  }

  show(state[side]);
  return { show, refresh };
}

let pickers: Record<Side, Picker> | undefined;
let currenciesLoad: Promise<void> | null = null;

/** Once per page: GET /api/v1/currencies replaces the embedded list (names, and what loads on first use). */
function loadCurrencies(): void {
  if (currenciesLoad || !activeKey()) return;
  currenciesLoad = api('/api/v1/currencies', {})
    .then((response) => response.json() as Promise<{ currencies: Currency[] }>)
    .then((body) => {
      setCatalogue(
        body.currencies.filter((c) => !c.onRequest),
        body.currencies.filter((c) => c.onRequest),
      );
      showReferenceData(body.currencies);
      setQuoted(body.currencies);
      renderSources();
      pickers?.from.refresh();
      pickers?.to.refresh();
    })
    .catch(() => {
      // The embedded list stays, and the next visit to a picker asks again; a refused key is
      // already said where the conversion is shown.
      currenciesLoad = null;
    });
}

/** `onPairChange`: another pair was picked (or swapped), already in `state`. */
export function initPickers(onPairChange: () => void): void {
  function setPair(from: string, to: string): void {
    if (from === state.from && to === state.to) return;
    state.from = from;
    state.to = to;
    pickers?.from.show(from);
    pickers?.to.show(to);
    onPairChange();
  }
  pickers = {
    from: createPicker('from', (code) => setPair(code, state.to)),
    to: createPicker('to', (code) => setPair(state.from, code)),
  };
  $('swap').addEventListener('click', () => setPair(state.to, state.from));
}
