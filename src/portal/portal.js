// exrates developer portal. Plain modern JavaScript, no build step; Chart.js is loaded before this
// module (both deferred) and served by this server. Every number shown comes from the API as a
// decimal string and is shown as that string (grouped for reading); floats are used only to
// position points on the chart.

const config = JSON.parse(document.getElementById('portal-config').textContent);
const KEY_STORAGE = 'exrates.apiKey';
const RANGES = ['1m', '3m', '6m', '1y', '5y'];
/** How many calendar months each range counts back from today, as the API counts them. */
const RANGE_MONTHS = { '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60 };
/** The history's points: '' one a day, else the API's `group` (a mean per ISO week or per month). */
const GROUPS = ['', 'week', 'month'];
const AMOUNT = /^[0-9]{1,18}(\.[0-9]{1,12})?$/;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const PROVIDER_ID = /^[A-Za-z0-9_-]{1,40}$/;
const $ = (id) => document.getElementById(id);

/** How the footer names the providers whose own names would say too little there; others by their names. */
const FOOTER_NAMES = {
  frankfurter: 'Frankfurter (central banks’ reference rates)',
  file: 'an ECB file this installation supplies',
};
/**
 * How old a provider's newest rate may be and still be called live: a daily fixing, plus a
 * weekend and a holiday before the next one (ECB, and Frankfurter's central banks); Open Exchange
 * Rates publishes hourly. A provider not known here counts as daily.
 */
const LIVE_FOR_HOURS = { ecb: 96, file: 96, frankfurter: 96, openexchangerates: 2 };

// The pickers start from the list embedded in the page, so they work at once, and take the API's
// /currencies list the first time a visitor reaches for one (loadCurrencies): that request counts
// against the quota, which the demo key shares per visitor, so it is made only when it is of use.
const catalogue = { served: [], onRequest: [] };
const names = new Map();

function setCatalogue(served, onRequest) {
  catalogue.served = served;
  catalogue.onRequest = onRequest;
  names.clear();
  for (const c of [...served, ...onRequest]) names.set(c.code, c.name);
}

setCatalogue(config.currencies, config.onRequest);

// ---------------------------------------------------------------------------------------------
// State: the pair, amount and range live in the address (shareable); the key in local storage.

const params = new URLSearchParams(location.search);
const pick = (value, fallback) => (value && /^[A-Za-z]{3}$/.test(value) ? value.toUpperCase() : fallback);
const firstServed = (preferred) => (names.has(preferred) || catalogue.served.length === 0 ? preferred : catalogue.served[0].code);
const givenStart = DAY.test(params.get('start') ?? '') ? params.get('start') : '';
const state = {
  from: pick(params.get('from'), firstServed('EUR')),
  to: pick(params.get('to'), firstServed('USD')),
  amount: AMOUNT.test(params.get('amount') ?? '') ? params.get('amount') : '100',
  /** One of RANGES, or 'custom': the days from `start` to `end`. */
  range: givenStart ? 'custom' : RANGES.includes(params.get('range')) ? params.get('range') : '1y',
  start: givenStart,
  /** '' for today, as the API takes a start without an end. */
  end: givenStart && DAY.test(params.get('end') ?? '') ? params.get('end') : '',
  group: GROUPS.includes(params.get('group')) ? params.get('group') : '',
  /** '' for any source (each currency from the first provider quoting it), else a provider's id. */
  source: PROVIDER_ID.test(params.get('source') ?? '') ? params.get('source').toLowerCase() : '',
  /** '' for the latest rate, else the day to convert on (YYYY-MM-DD). */
  date: DAY.test(params.get('date') ?? '') ? params.get('date') : '',
  /** Whether the table of the amount in every currency is open. */
  table: params.get('table') === '1',
  key: readStoredKey(),
};

function readStoredKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

function activeKey() {
  return state.key || config.demo?.key || '';
}

function rememberInAddress() {
  const search = new URLSearchParams({ from: state.from, to: state.to, amount: state.amount, range: state.range });
  if (state.range === 'custom') {
    search.set('start', state.start);
    if (state.end) search.set('end', state.end);
  }
  if (state.group) search.set('group', state.group);
  if (state.date) search.set('date', state.date);
  if (state.table) search.set('table', '1');
  if (state.source) search.set('source', state.source);
  history.replaceState(null, '', `${location.pathname}?${search}`);
}

// ---------------------------------------------------------------------------------------------
// Formatting: decimal strings stay strings.

const numberParts = new Intl.NumberFormat().formatToParts(12345.6);
const GROUP = numberParts.find((p) => p.type === 'group')?.value ?? ',';
const DECIMAL = numberParts.find((p) => p.type === 'decimal')?.value ?? '.';

function formatDecimal(text) {
  const [whole, fraction] = text.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, GROUP);
  return fraction === undefined ? grouped : `${grouped}${DECIMAL}${fraction}`;
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const shortDayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
const weekdayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const formatDay = (day) => dayFormat.format(new Date(`${day}T00:00:00Z`));
const formatWeekday = (day) => weekdayFormat.format(new Date(`${day}T00:00:00Z`));
const formatAsOf = (asOf) => `${dateTimeFormat.format(new Date(asOf))} UTC`;
/** A history point's date as its period: the day, the week (dated its Monday) or the month. */
function formatPeriod(day, group) {
  if (group === 'month') return monthFormat.format(new Date(`${day}T00:00:00Z`));
  if (group === 'week') return `week of ${formatDay(day)}`;
  return formatDay(day);
}
/**
 * How far the service's clock is ahead of this browser's, as the Date of its latest answer says:
 * a rate's age and today's date are the service's, as its `stale` and its days are (a visitor's
 * clock may be wrong, and a service replaying another time runs on EXRATES_NOW).
 */
let serviceClockOffset = 0;
const serviceNow = () => Date.now() + serviceClockOffset;
/** Today's date in UTC on the service's clock, the calendar the API's days follow. */
const todayUtc = () => new Date(serviceNow()).toISOString().slice(0, 10);
/** The day a rate belongs to: its fixing time's UTC date (ECB's 16:00 Frankfurt is 15:00 or 14:00 UTC the same day). */
const dayOf = (asOf) => asOf.slice(0, 10);

function formatPct(value) {
  const sign = value > 0 ? '+' : value < 0 ? '−' : '';
  return `${sign}${formatDecimal(Math.abs(value).toFixed(2))} %`;
}

// ---------------------------------------------------------------------------------------------
// The API

class ApiError extends Error {
  constructor(problem, status) {
    super(problem?.detail ?? `The server answered ${status}.`);
    this.problem = problem;
    this.status = status;
  }
}

function apiUrl(path, query) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

async function api(path, query, signal) {
  // Revalidated every time (a 304 when nothing changed): the browser's cache is keyed by URL, not
  // by key, so a cached answer must not stand in for what the server says to the key in use now.
  const response = await fetch(apiUrl(path, query), { headers: { 'X-Api-Key': activeKey() }, cache: 'no-cache', signal });
  const served = Date.parse(response.headers.get('date') ?? '');
  if (!Number.isNaN(served)) serviceClockOffset = served - Date.now();
  showQuota(response.headers);
  if (!response.ok) {
    let problem = null;
    try {
      problem = await response.json();
    } catch {
      // not a problem document
    }
    throw new ApiError(problem, response.status);
  }
  return response;
}

function describeError(error) {
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

function showError(element, error) {
  if (error) {
    element.textContent = describeError(error);
    element.hidden = false;
  } else {
    element.hidden = true;
    element.textContent = '';
  }
}

// ---------------------------------------------------------------------------------------------
// API key bar

const keyInput = $('api-key');
const keyStatus = $('key-status');
const keyForget = $('key-forget');
let lastQuota = null;

function renderKeyStatus() {
  keyStatus.replaceChildren();
  const add = (text, strong) => {
    const node = strong ? document.createElement('strong') : document.createTextNode(text);
    if (strong) node.textContent = text;
    keyStatus.append(node);
  };
  if (state.key) add(`Using your key ${state.key.slice(0, 12)}…`);
  else if (config.demo) add(`Using the demo key: ${formatDecimal(String(config.demo.perAddress))} requests a day per visitor. Paste your own key for more.`);
  else {
    add('Paste an API key to see live rates.');
    return;
  }
  if (lastQuota) {
    add(' ');
    add(`${formatDecimal(lastQuota.remaining)} of ${formatDecimal(lastQuota.limit)}`, true);
    add(' requests left today.');
  }
}

function showQuota(headers) {
  const limit = headers.get('X-RateLimit-Limit');
  const remaining = headers.get('X-RateLimit-Remaining');
  if (limit !== null && remaining !== null) {
    lastQuota = { limit, remaining };
    renderKeyStatus();
  }
}

keyInput.value = state.key;
keyForget.hidden = !state.key;
$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  state.key = key;
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    // storage disabled: the key lasts for this page only
  }
  keyForget.hidden = !key;
  lastQuota = null;
  renderKeyStatus();
  refreshAll();
});
keyForget.addEventListener('click', () => {
  keyInput.value = '';
  $('key-form').requestSubmit();
  keyInput.focus();
});

// ---------------------------------------------------------------------------------------------
// Searchable currency pickers (ARIA 1.2 combobox with a listbox popup)

function createPicker(side, onPick) {
  const input = $(`${side}-input`);
  const list = $(`${side}-list`);
  let options = [];
  let active = -1;

  const label = (code) => `${code} · ${names.get(code) ?? code}`;
  const show = (code) => {
    input.value = label(code);
  };

  function matches(query) {
    const q = query.trim().toLowerCase();
    const score = (c) => {
      const code = c.code.toLowerCase();
      const name = c.name.toLowerCase();
      if (!q) return 1;
      if (code === q) return 4;
      if (code.startsWith(q)) return 3;
      if (name.split(/[\s()-]+/).some((w) => w.startsWith(q))) return 2;
      return name.includes(q) || `${code} · ${name}`.includes(q) ? 1 : 0;
    };
    const rank = (group) =>
      group
        .map((c) => ({ c, s: score(c) }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s || a.c.code.localeCompare(b.c.code))
        .map((x) => x.c);
    return { served: rank(catalogue.served), onRequest: q ? rank(catalogue.onRequest) : catalogue.onRequest };
  }

  function render(query) {
    const { served, onRequest } = matches(query);
    list.replaceChildren();
    options = [];
    const addGroup = (title, items, note) => {
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

  function setActive(index) {
    if (active >= 0 && options[active]) options[active].setAttribute('aria-selected', 'false');
    active = index;
    if (active >= 0 && options[active]) {
      options[active].setAttribute('aria-selected', 'true');
      input.setAttribute('aria-activedescendant', options[active].id);
      options[active].scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  }

  function open() {
    if (!list.hidden) return;
    render(input.value.includes(' · ') ? '' : input.value);
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  }

  function close() {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function choose(code) {
    close();
    show(code);
    onPick(code);
  }

  /** Leaving the field: a typed code or an exact name is taken, anything else goes back. */
  function settle() {
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
      case 'Enter':
        event.preventDefault();
        if (!list.hidden && active >= 0) choose(options[active].dataset.code);
        else settle();
        break;
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
  function refresh() {
    if (document.activeElement !== input) show(state[side]);
    if (!list.hidden) render(input.value.includes(' · ') ? '' : input.value);
  }

  show(state[side]);
  return { show, refresh };
}

const pickers = {
  from: createPicker('from', (code) => setPair(code, state.to)),
  to: createPicker('to', (code) => setPair(state.from, code)),
};

function setPair(from, to) {
  if (from === state.from && to === state.to) return;
  state.from = from;
  state.to = to;
  pickers.from.show(from);
  pickers.to.show(to);
  rememberInAddress();
  refreshAll();
}

$('swap').addEventListener('click', () => setPair(state.to, state.from));

let currenciesLoad = null;

/** Once per page: GET /api/v1/currencies replaces the embedded list (names, and what loads on first use). */
function loadCurrencies() {
  if (currenciesLoad || !activeKey()) return;
  currenciesLoad = api('/api/v1/currencies', {})
    .then((response) => response.json())
    .then((body) => {
      setCatalogue(
        body.currencies.filter((c) => !c.onRequest),
        body.currencies.filter((c) => c.onRequest),
      );
      showReferenceData(body.currencies);
      setQuoted(body.currencies);
      renderSources();
      pickers.from.refresh();
      pickers.to.refresh();
    })
    .catch(() => {
      // The embedded list stays, and the next visit to a picker asks again; a refused key is
      // already said where the conversion is shown.
      currenciesLoad = null;
    });
}

// ---------------------------------------------------------------------------------------------
// Sources: the configured providers name where a shown rate comes from and fill the source picker

/**
 * The configured providers in order of preference, each with the currencies it quotes now, as
 * /api/v1/providers lists them: embedded in the page, so that no request is spent on them.
 */
const providers = config.providers;

/** The currencies each provider quotes now, from the API's /currencies list (currencies on request left out). */
function setQuoted(currencies) {
  for (const p of providers) p.currencies = currencies.filter((c) => !c.onRequest && c.providers.includes(p.id)).map((c) => c.code);
}

const providerName = (id) => providers.find((p) => p.id === id)?.name ?? id;

const sourceField = $('source-field');
const sourceSelect = $('source');
const sourceHelp = $('source-help');

/** An option of the source picker. */
function sourceOption(value, text) {
  const option = document.createElement('option');
  option.value = value;
  option.textContent = text;
  return option;
}

/**
 * The picker offers the providers that quote both currencies now, and only where there is a
 * choice to make: with one provider configured it stays hidden (unless the address names one).
 */
function renderSources() {
  const chosen = providers.find((p) => p.id === state.source);
  const missing = chosen ? [state.from, state.to].filter((code) => !chosen.currencies.includes(code)) : [];
  const quoting = providers.filter((p) => p.currencies.includes(state.from) && p.currencies.includes(state.to));
  const options = [sourceOption('', 'Any source (preferred)'), ...quoting.map((p) => sourceOption(p.id, p.name))];
  if (state.source && !quoting.includes(chosen)) {
    const why = chosen ? ` (does not quote ${missing.join(' or ')})` : ' (not configured here)';
    options.push(sourceOption(state.source, `${providerName(state.source)}${why}`));
  }
  sourceSelect.replaceChildren(...options);
  sourceSelect.value = state.source;
  sourceField.hidden = !state.source && providers.length < 2;
  const refused = Boolean(state.source && (!chosen || missing.length > 0));
  sourceSelect.setAttribute('aria-invalid', String(refused));
  if (!state.source) sourceHelp.textContent = 'Any source: each currency from the first provider that quotes it.';
  else if (!chosen) sourceHelp.textContent = `${state.source} is not a provider of this service: choose another source, or “Any source (preferred)”.`;
  else if (missing.length > 0) sourceHelp.textContent = `${chosen.name} does not quote ${missing.join(' or ')} now: choose another source, or “Any source (preferred)”.`;
  else sourceHelp.textContent = `Only the numbers ${chosen.name} publishes, on its days.`;
}

sourceSelect.addEventListener('change', () => {
  state.source = sourceSelect.value;
  renderSources();
  rememberInAddress();
  refreshAll();
});

/** A query with the chosen source, when there is one. */
function withSource(query) {
  return state.source ? { ...query, source: state.source } : query;
}

// ---------------------------------------------------------------------------------------------
// Conversion

const amountInput = $('amount');
const amountError = $('amount-error');
const convertError = $('convert-error');
const result = $('result');
let convertRequest = null;
let amountTimer = 0;

amountInput.value = state.amount;
/** What is wrong with a typed amount, in a sentence; null when it can be asked for. */
function amountProblem(text) {
  if (AMOUNT.test(text)) return null;
  if (text === '') return 'Enter an amount.';
  if (/^[-−]/.test(text)) return 'The amount cannot be negative.';
  if (AMOUNT.test(text.replace(',', '.'))) return `Use “.” as the decimal point: ${text.replace(',', '.')}.`;
  const [whole, fraction] = text.split('.');
  if (/^[0-9]+$/.test(whole) && (fraction === undefined || /^[0-9]+$/.test(fraction))) {
    return whole.length > 18 ? 'At most 18 digits before the decimal point.' : 'At most 12 decimals.';
  }
  return 'Digits only, with one “.” as the decimal point (such as 1234.5).';
}

/** A bad amount is said next to the field, and what was shown for the last good one is cleared. */
function showAmountProblem(problem) {
  amountInput.setAttribute('aria-invalid', String(problem !== null));
  amountError.textContent = problem ?? '';
  amountError.hidden = problem === null;
  if (problem === null) return;
  clearTimeout(amountTimer);
  convert();
  loadMany();
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
    rememberInAddress();
    renderCode();
    convert();
    loadMany();
  }, 250);
});
$('convert-form').addEventListener('submit', (event) => event.preventDefault());

// A past day: empty means the latest rate. The browser's calendar stops at today (UTC); the server
// has the last word on which days it answers for, and says so in the problem it returns.
const dateInput = $('date');
const dateLatest = $('date-latest');
let dateTimer = 0;

dateInput.max = new Date().toISOString().slice(0, 10);
dateInput.value = state.date;
dateLatest.hidden = !state.date;

function setDate(day) {
  if (day === state.date) return;
  state.date = day;
  dateInput.value = day;
  dateLatest.hidden = !day;
  rememberInAddress();
  renderCode();
  convert();
  loadMany();
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

/** The query of a conversion or a table: the date only when one is asked for. */
function onDate(query) {
  return state.date ? { ...query, date: state.date } : query;
}

async function convert() {
  convertRequest?.abort();
  // A bad amount is said next to its field (showAmountProblem); the last good one is not shown in its place.
  if (amountProblem(amountInput.value.trim()) !== null) {
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
    const body = await response.json();
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

function clearResult() {
  result.dataset.empty = 'true';
  $('provenance').hidden = true;
  $('date-note').hidden = true;
  $('result-from').textContent = '';
  $('result-value').textContent = '';
  $('result-value').dataset.value = '';
  $('result-hint').hidden = Boolean(activeKey());
}

/** The footer names the providers the currencies come from, once the API has listed them. */
function showReferenceData(currencies) {
  const ids = [...new Set(currencies.flatMap((c) => c.providers))];
  const element = $('reference-data');
  element.textContent = ids.length > 0 ? ` Reference data: ${ids.map((id) => FOOTER_NAMES[id] ?? providerName(id)).join(', ')}.` : '';
  element.hidden = ids.length === 0;
}

/** Hours a rate may be old and still be live: the slowest cadence of the providers it comes from. */
function liveForHours(provenance) {
  const serving = provenance?.providers ?? [];
  return Math.max(...(serving.length > 0 ? serving : ['ecb']).map((id) => LIVE_FOR_HOURS[id] ?? LIVE_FOR_HOURS.ecb));
}

/** "3 hours", "5 days", "8 months": how old a rate is, roughly. */
function roughAge(ms) {
  const hours = Math.floor(ms / 3_600_000);
  const days = Math.floor(hours / 24);
  const months = Math.floor(days / 30.44);
  const unit = (n, word) => `${formatDecimal(String(n))} ${word}${n === 1 ? '' : 's'}`;
  if (months >= 2) return unit(months, 'month');
  if (days >= 2) return unit(days, 'day');
  return unit(hours, 'hour');
}

/** A sentence for a rate asked on one day and published on an earlier one; '' when they are the same day. */
function earlierDayNote(requested, asOf) {
  const day = dayOf(asOf);
  if (!requested || day === requested) return '';
  return `No rate was published on ${formatWeekday(requested)} (a weekend or holiday): this is the rate of ${formatWeekday(day)}, the latest day before it.`;
}

function showConversion(body, requested) {
  result.dataset.empty = 'false';
  $('result-from').textContent = `${formatDecimal(body.amount)} ${body.from} =`;
  const value = $('result-value');
  value.textContent = `${formatDecimal(body.result)} ${body.to}`;
  value.dataset.value = body.result;
  const rate = $('rate-text');
  rate.textContent = `1 ${body.from} = ${formatDecimal(body.rate)} ${body.to}`;
  rate.dataset.value = body.rate;
  const asOf = $('as-of');
  asOf.dateTime = body.asOf;
  asOf.textContent = formatAsOf(body.asOf);
  $('result-hint').hidden = true;
  $('stale-marker').hidden = !body.stale;
  // Not live when older than its providers publish (an old file, a feed that stopped): its age instead.
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

/** One published number as the provider wrote it: a reciprocal (stored as `1/<x>`) is shown the way round it was published. */
function publishedNumber(n) {
  const reciprocalOf = n.reciprocalOf ?? (n.rate.startsWith('1/') ? n.rate.slice(2) : undefined);
  return reciprocalOf !== undefined ? `1 ${n.currency} = ${formatDecimal(reciprocalOf)} ${n.base}` : `1 ${n.base} = ${formatDecimal(n.rate)} ${n.currency}`;
}

/**
 * The numbers of preferred providers that the cross-check set aside (provenance.setAside), and the
 * numbers used that it flagged all the same (provenance.flagged): said beside the source, and,
 * opened, each with the API's reason.
 */
function showSetAside(setAside, flagged) {
  const flag = $('provenance-flag');
  const list = $('provenance-set-aside');
  const count = (n, what) => (n === 0 ? [] : [`${n === 1 ? 'a number' : `${n} numbers`} ${what}`]);
  const said = [...count(setAside.length, 'set aside'), ...count(flagged.length, 'flagged')];
  flag.textContent = said.length === 0 ? '' : ` · ${said.join(', ')}`;
  flag.hidden = said.length === 0;
  const itemOf = (lead) => (n) => {
    const item = document.createElement('li');
    const day = document.createElement('time');
    day.dateTime = n.day;
    day.textContent = formatDay(n.day);
    item.append(`${lead}: ${providerName(n.provider)}’s ${publishedNumber(n)} on `, day, ` — ${n.reason}`);
    return item;
  };
  list.replaceChildren(...setAside.map(itemOf('Not used')), ...flagged.map(itemOf('Used, though flagged')));
  list.hidden = said.length === 0;
}

/**
 * Where the shown rate comes from, in one line ("European Central Bank, Mar 5, 2026, through
 * EUR"), and, opened, the published numbers it was computed from. "Through" names the currency a
 * cross is taken through: the bridge between two providers, or one provider's base when neither
 * currency of the pair is that base.
 */
function showProvenance(body) {
  const box = $('provenance');
  const p = body.provenance;
  if (!p || p.providers.length === 0) {
    box.hidden = true;
    return;
  }
  const base = p.numbers[0]?.base;
  const through = p.bridge ?? (base && body.from !== base && body.to !== base ? base : null);
  const day = document.createElement('time');
  day.dateTime = p.day;
  day.textContent = formatDay(p.day);
  const line = $('provenance-line');
  line.replaceChildren(`${p.providers.map(providerName).join(' and ')}, `, day, through ? `, through ${through}` : '');
  const several = p.providers.length > 1;
  $('provenance-numbers').replaceChildren(
    ...p.numbers.map((n) => {
      const item = document.createElement('li');
      item.textContent = several ? `${publishedNumber(n)} (${providerName(n.provider)})` : publishedNumber(n);
      return item;
    }),
    // A currency replaced at a legal fixed ratio: the numbers are its successor's, at that ratio.
    ...(p.replaced ?? []).map((r) => {
      const item = document.createElement('li');
      const since = document.createElement('time');
      since.dateTime = r.from;
      since.textContent = formatDay(r.from);
      item.append(`1 ${r.successor} = ${formatDecimal(r.ratio)} ${r.currency}, fixed by law since `, since, ` (${r.reference})`);
      return item;
    }),
  );
  showSetAside(p.setAside ?? [], p.flagged ?? []);
  box.hidden = false;
}

// ---------------------------------------------------------------------------------------------
// The amount in every currency (GET /api/v1/rates), while the visitor keeps the table open

const manyToggle = $('many-toggle');
const manyBody = $('many-body');
const manyTable = $('many-table');
const manyRows = $('many-rows');
const manyError = $('many-error');
let manyRequest = null;
/** The key and query the table shows or is asking for, so that a change of `to` alone asks nothing. */
let manyWanted = '';

function markTableOpen() {
  manyToggle.setAttribute('aria-expanded', String(state.table));
  manyToggle.textContent = state.table ? 'Hide table' : 'Show table';
  manyBody.hidden = !state.table;
}

manyToggle.addEventListener('click', () => {
  state.table = !state.table;
  markTableOpen();
  rememberInAddress();
  loadMany();
});

async function loadMany() {
  $('many-pair').textContent = `${formatDecimal(state.amount)} ${state.from}`;
  markPicked();
  if (!state.table) return;
  if (amountProblem(amountInput.value.trim()) !== null) {
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
    const body = await response.json();
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

function clearMany() {
  manyRows.replaceChildren();
  $('many-caption').textContent = activeKey() ? '' : 'Paste an API key above to see the table.';
}

function cell(tag, text, value) {
  const element = document.createElement(tag);
  element.textContent = text;
  if (value !== undefined) {
    element.className = 'number';
    element.dataset.value = value;
  }
  return element;
}

function showMany(body, requested) {
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
function markPicked() {
  for (const row of manyRows.rows) row.classList.toggle('picked', row.dataset.code === state.to);
}

// ---------------------------------------------------------------------------------------------
// History chart and statistics

const historyError = $('history-error');
const canvas = $('chart');
let chart = null;
let historyRequest = null;
let shownHistory = null;

const customRange = $('custom-range');
const rangeStartInput = $('range-start');
const rangeEndInput = $('range-end');
const rangeError = $('range-error');

/** The history's query: the pair, its range or dates, its grouping and source, then `extra`. */
function historyQuery(extra = {}) {
  const window = state.range !== 'custom' ? { range: state.range } : state.end ? { start: state.start, end: state.end } : { start: state.start };
  return { from: state.from, to: state.to, ...window, ...(state.group ? { group: state.group } : {}), ...withSource({}), ...extra };
}

/** A day some calendar months before another, clamped to the end of a shorter month, as the API counts a range back. */
function monthsBefore(day, months) {
  const [y, m, d] = day.split('-').map(Number);
  const month = new Date(Date.UTC(y, m - 1 - months, 1));
  const lastDay = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 0)).getUTCDate();
  month.setUTCDate(Math.min(d, lastDay));
  return month.toISOString().slice(0, 10);
}

for (const button of document.querySelectorAll('.range')) {
  button.addEventListener('click', () => {
    const custom = button.dataset.range === 'custom';
    if (custom && state.range === 'custom') return rangeStartInput.focus();
    if (custom) {
      // The dates start as the range shown, so the chart stays as it is until they are changed.
      const today = todayUtc();
      state.start = monthsBefore(today, RANGE_MONTHS[state.range]);
      state.end = today;
      showRangeInputs();
      showRangeError(null);
    }
    state.range = button.dataset.range;
    rememberInAddress();
    renderCode();
    loadHistory();
    if (custom) rangeStartInput.focus();
  });
}

for (const button of document.querySelectorAll('.grouping')) {
  button.addEventListener('click', () => {
    state.group = button.dataset.group;
    rememberInAddress();
    renderCode();
    loadHistory();
  });
}

function showRangeInputs() {
  rangeStartInput.value = state.start;
  rangeEndInput.value = state.end || todayUtc();
}

/** What is wrong with the typed dates, and in which field; null when they can be asked for. */
function checkRange(start, end) {
  const today = todayUtc();
  if (!DAY.test(start)) return { input: rangeStartInput, message: 'Enter the first day of the range.' };
  if (!DAY.test(end)) return { input: rangeEndInput, message: 'Enter the last day of the range.' };
  if (start > today) return { input: rangeStartInput, message: `The start cannot be after today (${formatDay(today)}, UTC).` };
  if (end > today) return { input: rangeEndInput, message: `The end cannot be after today (${formatDay(today)}, UTC).` };
  if (start > end) return { input: rangeStartInput, message: 'The start must be on or before the end.' };
  return null;
}

/** A problem with the dates, said under them and marked on the field it concerns; null clears it. */
function showRangeError(message, input) {
  for (const field of [rangeStartInput, rangeEndInput]) field.setAttribute('aria-invalid', String(field === input));
  rangeError.textContent = message ?? '';
  rangeError.hidden = !message;
}

customRange.addEventListener('submit', (event) => {
  event.preventDefault();
  const [start, end] = [rangeStartInput.value, rangeEndInput.value];
  const problem = checkRange(start, end);
  if (problem) {
    showRangeError(problem.message, problem.input);
    problem.input.focus();
    return;
  }
  showRangeError(null);
  state.start = start;
  state.end = end;
  rememberInAddress();
  renderCode();
  loadHistory();
});

function markRange() {
  for (const button of document.querySelectorAll('.range')) button.setAttribute('aria-pressed', String(button.dataset.range === state.range));
  for (const button of document.querySelectorAll('.grouping')) button.setAttribute('aria-pressed', String(button.dataset.group === state.group));
  customRange.hidden = state.range !== 'custom';
}

async function loadHistory() {
  markRange();
  historyRequest?.abort();
  $('history-pair').textContent = `${state.from} → ${state.to}`;
  updateCsvLink();
  if (!activeKey()) return;
  // Dates from the address are checked as typed ones are: what is plainly wrong is not asked for.
  const problem = state.range === 'custom' ? checkRange(state.start, state.end || todayUtc()) : null;
  if (problem) {
    shownHistory = null;
    clearHistory();
    showError(historyError, null);
    return showRangeError(problem.message, problem.input);
  }
  const controller = new AbortController();
  historyRequest = controller;
  try {
    const response = await api('/api/v1/history', historyQuery(), controller.signal);
    const body = await response.json();
    if (controller.signal.aborted) return;
    showError(historyError, null);
    if (state.range === 'custom') showRangeError(null);
    shownHistory = body;
    showHistory(body);
  } catch (error) {
    if (controller.signal.aborted) return;
    shownHistory = null;
    clearHistory();
    // The API's word on the dates (after today on its clock, beyond the retained years) goes under them.
    const param = error instanceof ApiError ? error.problem?.param : undefined;
    if (state.range === 'custom' && (param === 'start' || param === 'end')) {
      showError(historyError, null);
      showRangeError(describeError(error), param === 'start' ? rangeStartInput : rangeEndInput);
    } else showError(historyError, error);
  }
}

function setStat(id, text, value, className) {
  const element = $(id);
  element.textContent = text;
  element.dataset.value = value;
  element.className = className ?? '';
}

function trendClass(value) {
  return value > 0 ? 'up' : value < 0 ? 'down' : '';
}

function showHistory(body) {
  const s = body.stats;
  const [from, to] = [body.pair.slice(0, 3), body.pair.slice(3)];
  const group = body.group ?? '';
  setStat('stat-best', formatDecimal(s.best), s.best);
  $('stat-best-date').textContent = formatPeriod(s.bestDate, group);
  setStat('stat-worst', formatDecimal(s.worst), s.worst);
  $('stat-worst-date').textContent = formatPeriod(s.worstDate, group);
  setStat('stat-average', formatDecimal(s.average), s.average);
  $('stat-count').textContent = countText(body);
  setStat('stat-change', formatPct(s.changePct), String(s.changePct), trendClass(s.changePct));
  setStat('stat-vs-average', formatPct(s.currentVsAveragePct), String(s.currentVsAveragePct), trendClass(s.currentVsAveragePct));
  const first = body.points[0];
  const last = body.points[body.points.length - 1];
  const kind = { '': 'Daily', week: 'Weekly average', month: 'Monthly average' }[group];
  const when = (day) => `${{ '': 'on', week: 'in the', month: 'in' }[group]} ${formatPeriod(day, group)}`;
  const summary = `${kind} ${from} to ${to} rates, ${formatPeriod(first.date, group)} to ${formatPeriod(last.date, group)}: best ${s.best} ${when(s.bestDate)}, worst ${s.worst} ${when(s.worstDate)}, average ${s.average}.`;
  canvas.setAttribute('aria-label', summary);
  $('chart-caption').textContent = summary;
  drawChart(body);
}

/** "250 days"; grouped, the periods and the days they average: "6 months (116 days)". */
function countText(body) {
  const unit = (n, word) => `${formatDecimal(String(n))} ${word}${n === 1 ? '' : 's'}`;
  if (!body.group) return unit(body.count, 'day');
  const days = body.points.reduce((sum, p) => sum + p.days, 0);
  return `${unit(body.count, body.group)} (${unit(days, 'day')})`;
}

function clearHistory() {
  for (const id of ['stat-best', 'stat-worst', 'stat-average', 'stat-change', 'stat-vs-average']) setStat(id, '–', '');
  for (const id of ['stat-best-date', 'stat-worst-date', 'stat-count']) $(id).textContent = '';
  canvas.setAttribute('aria-label', 'No history to show.');
  chart?.destroy();
  chart = null;
}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

function drawChart(body) {
  const labels = body.points.map((p) => p.date);
  const values = body.points.map((p) => Number(p.rate));
  const only = (date, rate) => labels.map((d) => (d === date ? Number(rate) : null));
  const average = Number(body.stats.average);
  const group = body.group ?? '';
  // Months are told by their names; so are days (or weeks) once they span more than a few months.
  const long = group === 'month' || labels.length > 120 || (group === 'week' && labels.length > 26);
  const colors = {
    line: css('--chart-line'),
    fill: css('--chart-fill'),
    average: css('--chart-average'),
    grid: css('--chart-grid'),
    text: css('--chart-text'),
    best: css('--chart-best'),
    worst: css('--chart-worst'),
  };
  const marker = (label, date, rate, color) => ({
    label: `${label} ${formatDecimal(rate)}`,
    data: only(date, rate),
    showLine: false,
    pointRadius: 6,
    pointHoverRadius: 7,
    pointBackgroundColor: color,
    pointBorderColor: css('--surface'),
    pointBorderWidth: 2,
    borderColor: color,
    backgroundColor: color,
    order: 0,
  });
  const data = {
    labels,
    datasets: [
      {
        label: body.pair.slice(0, 3) + ' → ' + body.pair.slice(3),
        data: values,
        borderColor: colors.line,
        backgroundColor: colors.fill,
        fill: 'origin',
        borderWidth: 2,
        // Few points (months, weeks of a short range) are drawn as points as well as a line.
        pointRadius: labels.length <= 60 && group ? 2.5 : 0,
        pointHoverRadius: 4,
        tension: 0,
        order: 2,
      },
      {
        label: `Average ${formatDecimal(body.stats.average)}`,
        data: labels.map(() => average),
        borderColor: colors.average,
        backgroundColor: colors.average,
        borderDash: [6, 5],
        borderWidth: 1.5,
        pointRadius: 0,
        pointHoverRadius: 0,
        fill: false,
        order: 1,
      },
      marker('Best', body.stats.bestDate, body.stats.best, colors.best),
      marker('Worst', body.stats.worstDate, body.stats.worst, colors.worst),
    ],
  };
  const tick = (value, index) => {
    const day = labels[index];
    if (!day) return '';
    return (long ? monthFormat : shortDayFormat).format(new Date(`${day}T00:00:00Z`));
  };
  const options = {
    responsive: true,
    maintainAspectRatio: false,
    animation: reducedMotion.matches ? false : { duration: 250 },
    interaction: { mode: 'index', intersect: false },
    layout: { padding: { top: 4, right: 6 } },
    scales: {
      x: {
        ticks: { color: colors.text, maxRotation: 0, autoSkip: true, maxTicksLimit: canvas.clientWidth < 520 ? 4 : 7, callback: tick },
        grid: { display: false },
        border: { color: colors.grid },
      },
      y: {
        beginAtZero: false,
        grace: '4%',
        ticks: { color: colors.text, maxTicksLimit: 6 },
        grid: { color: colors.grid },
        border: { display: false },
      },
    },
    plugins: {
      legend: {
        position: 'bottom',
        labels: {
          color: colors.text,
          usePointStyle: true,
          pointStyle: 'circle',
          boxWidth: 8,
          boxHeight: 8,
          padding: 14,
          sort: (a, b) => a.datasetIndex - b.datasetIndex,
        },
      },
      tooltip: {
        filter: (item) => item.datasetIndex === 0,
        callbacks: {
          title: (items) => formatPeriod(labels[items[0].dataIndex], group),
          label: (item) => {
            const point = body.points[item.dataIndex];
            const rate = ` ${formatDecimal(point.rate)} ${body.pair.slice(3)}`;
            return group ? `${rate}, the average of ${point.days} day${point.days === 1 ? '' : 's'}` : rate;
          },
        },
      },
    },
  };
  chart?.destroy();
  chart = new window.Chart(canvas, { type: 'line', data, options });
}

matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  if (shownHistory) drawChart(shownHistory);
});

// The CSV is fetched with the key in a header (never in a URL), then saved under the server's file name.
const csvLink = $('csv-link');

function updateCsvLink() {
  const url = apiUrl('/api/v1/history', historyQuery({ format: 'csv' }));
  csvLink.href = url.pathname + url.search;
  // The server names the file (Content-Disposition); this is the name it gives, for a browser that saves the link itself.
  const window = state.range === 'custom' ? `${state.start}_${state.end || todayUtc()}` : state.range;
  csvLink.download = `${state.from}${state.to}_${window}${state.group ? `_${state.group}` : ''}.csv`;
}

csvLink.addEventListener('click', async (event) => {
  event.preventDefault();
  try {
    const response = await api('/api/v1/history', historyQuery({ format: 'csv' }));
    const disposition = response.headers.get('Content-Disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? csvLink.download;
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const save = document.createElement('a');
    save.href = url;
    save.download = name;
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    showError(historyError, null);
  } catch (error) {
    showError(historyError, error);
  }
});

// ---------------------------------------------------------------------------------------------
// Code examples for the current request

const tabs = [...document.querySelectorAll('[role="tab"]')];
const copyButton = $('copy-code');

function renderCode() {
  const origin = location.origin;
  // Every value is a code, an amount, a day or a provider id, as checked above: none needs quoting.
  const query = Object.entries(withSource(onDate({ from: state.from, to: state.to, amount: state.amount })));
  const q = query.map(([name, value]) => `${name}=${value}`).join('&');
  const history = Object.entries(historyQuery({ format: 'csv' }))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  $('code-curl').textContent = [
    `curl -s -H "X-Api-Key: $EXRATES_KEY" \\`,
    `  '${origin}/api/v1/convert?${q}'`,
    '',
    `# History as CSV`,
    `curl -s --compressed -H "X-Api-Key: $EXRATES_KEY" \\`,
    `  '${origin}/api/v1/history?${history}'`,
  ].join('\n');
  $('code-ts').textContent = [
    `// npx openapi-typescript ${origin}/api/v1/openapi.json -o exrates.d.ts`,
    `import createClient from 'openapi-fetch';`,
    `import type { paths } from './exrates.d.ts';`,
    '',
    `const exrates = createClient<paths>({`,
    `  baseUrl: '${origin}',`,
    `  headers: { 'X-Api-Key': process.env.EXRATES_KEY },`,
    `});`,
    '',
    `const { data, error } = await exrates.GET('/api/v1/convert', {`,
    `  params: { query: { ${query.map(([name, value]) => `${name}: '${value}'`).join(', ')} } },`,
    `});`,
    `if (error) throw new Error(\`\${error.code}: \${error.detail}\`);`,
    `console.log(data.result, data.to, data.stale ? '(stale)' : '');`,
  ].join('\n');
  $('code-python').textContent = [
    `import os`,
    `import requests`,
    '',
    `response = requests.get(`,
    `    "${origin}/api/v1/convert",`,
    `    params={${query.map(([name, value]) => `"${name}": "${value}"`).join(', ')}},`,
    `    headers={"X-Api-Key": os.environ["EXRATES_KEY"]},`,
    `    timeout=10,`,
    `)`,
    `response.raise_for_status()`,
    `conversion = response.json()`,
    `print(conversion["result"], conversion["to"])  # decimal strings: use decimal.Decimal`,
  ].join('\n');
}

function selectTab(tab, focus) {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    $(t.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
}

tabs.forEach((tab, index) => {
  tab.addEventListener('click', () => selectTab(tab, false));
  tab.addEventListener('keydown', (event) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step !== 0) selectTab(tabs[(index + step + tabs.length) % tabs.length], true);
    else if (event.key === 'Home') selectTab(tabs[0], true);
    else if (event.key === 'End') selectTab(tabs[tabs.length - 1], true);
  });
});

if (navigator.clipboard) {
  copyButton.hidden = false;
  copyButton.addEventListener('click', async () => {
    const panel = tabs.find((t) => t.getAttribute('aria-selected') === 'true').getAttribute('aria-controls');
    try {
      await navigator.clipboard.writeText($(panel).textContent);
      copyButton.textContent = 'Copied';
    } catch {
      copyButton.textContent = 'Copy failed';
    }
    setTimeout(() => (copyButton.textContent = 'Copy'), 1500);
  });
}

// ---------------------------------------------------------------------------------------------

function refreshAll() {
  renderSources();
  renderCode();
  convert();
  loadHistory();
  loadMany();
}

renderKeyStatus();
clearResult();
markTableOpen();
// The calendars stop at today (UTC); the server has the last word, and says so in its problem.
rangeStartInput.max = rangeEndInput.max = todayUtc();
if (state.range === 'custom') showRangeInputs();
refreshAll();
