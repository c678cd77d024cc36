/** The API key bar: the visitor's key (or the demo key) and what is left of its quota today. */
import { $ } from './dom.js';
import { formatDecimal } from './format.js';
import { config, state, storeKey } from './state.js';

const keyInput = $<HTMLInputElement>('api-key');
const keyStatus = $('key-status');
const keyForget = $('key-forget');
const keyForm = $<HTMLFormElement>('key-form');
let lastQuota: { limit: string; remaining: string } | null = null;

export function renderKeyStatus(): void {
  keyStatus.replaceChildren();
  const add = (text: string, strong = false) => {
    if (!strong) return keyStatus.append(document.createTextNode(text));
    const node = document.createElement('strong');
    node.textContent = text;
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

/** The quota an answer's headers report, said in the bar. */
export function showQuota(headers: Headers): void {
  const limit = headers.get('X-RateLimit-Limit');
  const remaining = headers.get('X-RateLimit-Remaining');
  if (limit !== null && remaining !== null) {
    lastQuota = { limit, remaining };
    renderKeyStatus();
  }
}

/** `onKeyChange`: a key was given or forgotten, and everything shown is asked for again with it. */
export function initKeyBar(onKeyChange: () => void): void {
  keyInput.value = state.key;
  keyForget.hidden = !state.key;
  keyForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = keyInput.value.trim();
    state.key = key;
    storeKey(key);
    keyForget.hidden = !key;
    lastQuota = null;
    renderKeyStatus();
    onKeyChange();
  });
  keyForget.addEventListener('click', () => {
    keyInput.value = '';
    keyForm.requestSubmit();
    keyInput.focus();
  });
}
