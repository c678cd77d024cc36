/**
 * The fast path's own cost per request, without the network: src/http/fast-path.ts called in a
 * loop with plain request objects and a response whose writeHead/end only count, on the full ECB
 * history (SQLite in a temporary folder, file provider, fixed clock), over the 870 ordered pairs
 * of the currencies ECB publishes. Unlike `npm run bench`, the figures do not move with the load
 * generator, the kernel or the host, so they compare changes to the hot path.
 *
 *   npm run bench:fast-path                 # rate, convert (5 amounts), convert (new amounts)
 *   npm run bench:fast-path -- --rounds 8   # more rounds of 300,000 calls each
 *
 * Prints microseconds per call for each round; the median is the figure to compare.
 */
import { parseArgs } from 'node:util';
import { CORS_EXPOSED_HEADERS } from '../src/app.js';
import { hashApiKey, issueApiKey } from '../src/core/api-keys.js';
import { createFastPath } from '../src/http/fast-path.js';
import { createHistoryBodies } from '../src/http/responses.js';
import { openEcbStore } from './ecb-store.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string' }, calls: { type: 'string' } } });
const ROUNDS = Number(flags.rounds ?? 5);
const CALLS = Number(flags.calls ?? 300_000);
const AMOUNTS = ['100', '99.95', '1250000', '0.5', '7340.12'];

const { config, deps, pairs, close } = await openEcbStore('fast-path', { EXRATES_QUOTA_FREE: '1000000000' });
try {
  const { key } = await issueApiKey(deps.keys, { tier: 'free', owner: 'bench@example.org' }, deps.clock);
  // Into the key cache, as the first request of a key does.
  const record = await deps.keys.findByHash(hashApiKey(key));
  if (!record) throw new Error('the issued key was not found');
  for (const [from, to] of pairs) await deps.book.liveRate(from, to);

  const fastPath = createFastPath({
    book: deps.book,
    histories: createHistoryBodies(deps.book),
    keys: deps.keys,
    quotas: deps.quotas,
    limits: config.quota,
    clock: deps.clock,
    metrics: deps.metrics,
    refreshSeconds: config.refreshSeconds,
    exposedHeaders: CORS_EXPOSED_HEADERS.join(', '),
    closing: () => false,
    onError: (error) => {
      throw error;
    },
  });

  let answered = 0;
  let declined = 0;
  const response = {
    writeHead() {
      return this;
    },
    end() {
      answered += 1;
    },
    destroy() {},
  } as never;
  const fallback = () => {
    declined += 1;
  };
  const rawHeaders = ['Host', '127.0.0.1', 'X-Api-Key', key];
  const request = (url: string) => ({ method: 'GET', url, rawHeaders, headers: { host: '127.0.0.1', 'x-api-key': key } }) as never;

  // Pairs spread over the rotation as in bench/run.ts: neighbours differ in both currencies.
  const pairQuery = (n: number) => {
    const [from, to] = pairs[(n * 37) % pairs.length]!;
    return `from=${from}&to=${to}`;
  };
  const scenarios: Array<{ name: string; url: (n: number) => string }> = [
    { name: 'rate', url: (n) => `/api/v1/rate?${pairQuery(n)}` },
    { name: 'convert, 5 amounts', url: (n) => `/api/v1/convert?${pairQuery(n)}&amount=${AMOUNTS[n % AMOUNTS.length]}` },
    { name: 'convert, new amounts', url: (n) => `/api/v1/convert?${pairQuery(n)}&amount=${n}.${n % 97}` },
  ];
  console.log(`fast path: ${pairs.length} pairs, ${ROUNDS} rounds of ${CALLS.toLocaleString('en-US')} calls, µs per call`);
  for (const scenario of scenarios) {
    // One warm-up pass: every quota counter and kept body the scenario needs.
    const urls = Array.from({ length: 4_000 }, (_, n) => scenario.url(n));
    for (const url of urls) fastPath(request(url), response, fallback);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const perCall: number[] = [];
    const unique = scenario.name.endsWith('new amounts');
    for (let round = 0; round < ROUNDS; round++) {
      // New amounts never repeat: every call of every round has a URL of its own, built beforehand.
      const roundUrls = unique ? Array.from({ length: CALLS }, (_, n) => scenario.url(4_000 + round * CALLS + n)) : urls;
      const before = answered;
      const started = performance.now();
      for (let i = 0; i < CALLS; i++) fastPath(request(roundUrls[i % roundUrls.length]!), response, fallback);
      perCall.push(((performance.now() - started) * 1000) / CALLS);
      if (answered - before !== CALLS) throw new Error(`${scenario.name}: ${CALLS - (answered - before)} calls were declined`);
    }
    const sorted = [...perCall].sort((a, b) => a - b);
    console.log(`${scenario.name.padEnd(22)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}  (${perCall.map((v) => v.toFixed(2)).join(', ')})`);
  }
  if (declined > 0) console.log(`(${declined} calls of the warm-up went the full way)`);
} finally {
  await close();
}
