/** Code examples for the current request: curl, TypeScript and Python, in tabs, with a copy button. */
import { $ } from './dom.js';
import { historyQuery } from './history.js';
import { onDate, state, withSource } from './state.js';

const tabs = [...document.querySelectorAll<HTMLElement>('[role="tab"]')];
const copyButton = $('copy-code');

export function renderCode(): void {
  const origin = location.origin;
  // Every value is a code, an amount, a day or a provider id, as checked where it is taken: none needs quoting.
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

/** The panel a tab shows. */
const panelOf = (tab: HTMLElement): HTMLElement => $(tab.getAttribute('aria-controls') ?? '');

function selectTab(tab: HTMLElement, focus: boolean): void {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    panelOf(t).hidden = !selected;
  }
  if (focus) tab.focus();
}

export function initCode(): void {
  tabs.forEach((tab, index) => {
    tab.addEventListener('click', () => selectTab(tab, false));
    tab.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      const next = step !== 0 ? tabs[(index + step + tabs.length) % tabs.length] : event.key === 'Home' ? tabs[0] : event.key === 'End' ? tabs[tabs.length - 1] : undefined;
      if (next) selectTab(next, true);
    });
  });

  // A page not served securely (plain HTTP to another host than localhost) has no clipboard.
  if (!(navigator.clipboard as Clipboard | undefined)) return;
  copyButton.hidden = false;
  copyButton.addEventListener('click', async () => {
    const tab = tabs.find((t) => t.getAttribute('aria-selected') === 'true');
    try {
      await navigator.clipboard.writeText(tab ? (panelOf(tab).textContent ?? '') : '');
      copyButton.textContent = 'Copied';
    } catch {
      copyButton.textContent = 'Copy failed';
    }
    setTimeout(() => (copyButton.textContent = 'Copy'), 1500);
  });
}
