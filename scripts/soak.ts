/**
 * Soak: `npm run soak` runs a real `exrates serve` process (dist/, SQLite, the shared ECB history)
 * under a steady request rate from many keys for 10 minutes (`--duration 90s`, `--duration 2m`
 * for shorter runs; `--rate 200`, `--keys 500`), then checks:
 *  - memory stays flat: resident set size after warm-up against the end (at most +25 % and +32 MB);
 *  - no latency drift: the median and p99 of the last period against the first (at most 2x + 5 ms);
 *  - every quota exact: each key's count, as the service reports it and as the store holds it
 *    after a graceful stop, equals the answers it was given; free keys stop at their limit.
 * Prints a table per period (a minute, or a tenth of a short run) and writes the figures to
 * test-artifacts/reliability/results/soak.json; `--save` also to test/reliability/results/soak/,
 * which docs/reliability.md's soak figures are generated from. Exits non-zero when a check fails.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { issueApiKey } from '../src/core/api-keys.js';
import { createClock } from '../src/deps.js';
import { migrateToLatest, openDatabase } from '../src/storage/database.js';
import { createKeyStore } from '../src/storage/key-store.js';
import { ECB_CSV, FIXED_NOW, tempDir } from '../test/helper.js';
import { get } from '../test/support/http.js';
import { ensureBuilt, isRunning, startInstance, stopInstance } from '../test/support/processes.js';
import { sleep } from '../test/support/wait.js';
import { percentile, runIdentity, SAVED_SOAKS_DIR, type SavedSoak } from '../test/reliability/harness.js';

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : (process.argv[index + 1] ?? fallback);
}

function seconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(text);
  if (!match) throw new Error(`--duration ${text}: use e.g. 600, 90s, 10m`);
  return Number(match[1]) * ({ s: 1, m: 60, h: 3600 }[match[2] ?? 's'] ?? 1);
}

const DURATION_S = seconds(option('duration', '10m'));
const RATE = Number(option('rate', '200'));
const PRO_KEYS = Number(option('keys', '500'));
const FREE_KEYS = 5;
const FREE_LIMIT = 100;
const TODAY = FIXED_NOW.slice(0, 10);
/** /metrics on the service's own port, to a bearer of this token. */
const METRICS_TOKEN = 'soak-metrics-scrape-token';
const PERIOD_S = DURATION_S >= 120 ? 60 : Math.max(1, Math.round(DURATION_S / 10));

/** Resident set size of a process, in MiB, from /proc (Linux), else from the service's own metric. */
async function rssMiB(pid: number, base: string): Promise<number> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    if (kb > 0) return kb / 1024;
  } catch {
    // not Linux
  }
  const metrics = await get(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return Number(/exrates_process_resident_memory_bytes (\d+)/.exec(metrics.body)?.[1] ?? NaN) / 1024 / 1024;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  await ensureBuilt();
  const dir = tempDir('exrates-soak-');
  const file = join(dir.path, 'soak.db');
  const database = await openDatabase(`sqlite:${file}`);
  const keys: Array<{ key: string; id: string; limit: number }> = [];
  try {
    await migrateToLatest(database.db);
    const store = createKeyStore(database.db);
    const clock = createClock(new Date(FIXED_NOW));
    for (let i = 0; i < PRO_KEYS + FREE_KEYS; i += 1) {
      const tier = i < PRO_KEYS ? 'pro' : 'free';
      const issued = await issueApiKey(store, { tier, owner: `soak${i}@example.org` }, clock);
      keys.push({ key: issued.key, id: issued.record.id, limit: tier === 'pro' ? 100_000 : FREE_LIMIT });
    }
  } finally {
    await database.close();
  }
  const server = await startInstance('soak', {
    cwd: dir.path,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      EXRATES_DATABASE_URL: `sqlite:${file}`,
      EXRATES_PROVIDERS: 'file',
      EXRATES_FILE_URL: ECB_CSV,
      EXRATES_NOW: FIXED_NOW,
      EXRATES_QUOTA_FREE: String(FREE_LIMIT),
      EXRATES_LOG_LEVEL: 'warn',
      EXRATES_METRICS_TOKEN: METRICS_TOKEN,
    },
  });
  const pid = server.child.pid!;
  console.log(`soak: ${DURATION_S} s at ${RATE} requests/s, ${PRO_KEYS} pro keys and ${FREE_KEYS} free keys (limit ${FREE_LIMIT}), server pid ${pid}`);

  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const answered = new Map<number, number>();
  const periods: Array<{ latencies: number[]; statuses: Map<string, number>; rss: number }> = [];
  const codes = ['USD', 'JPY', 'GBP', 'CHF', 'PLN', 'CZK', 'SEK', 'NOK', 'AUD', 'CAD'];
  const ranges = ['1m', '3m', '6m', '1y', '5y'];
  let unanswered = 0;
  const t0 = performance.now();
  const total = Math.round(DURATION_S * RATE);
  const pending = new Set<Promise<void>>();
  let startRss = NaN;
  for (let i = 0; i < total; i += 1) {
    const due = (i * 1000) / RATE;
    const now = performance.now() - t0;
    if (due > now) await sleep(due - now);
    const period = Math.floor((performance.now() - t0) / 1000 / PERIOD_S);
    while (periods.length <= period) {
      periods.push({ latencies: [], statuses: new Map(), rss: await rssMiB(pid, server.base) });
      if (periods.length === 2) startRss = periods[1]!.rss;
    }
    // Mostly pro keys round-robin; one request in twenty from a free key, which runs out; one in
    // fifty from a key never issued.
    const keyIndex = i % 20 === 7 ? PRO_KEYS + (Math.floor(i / 20) % FREE_KEYS) : i % PRO_KEYS;
    const unknown = i % 50 === 11;
    const a = codes[i % codes.length]!;
    const b = codes[(i * 7 + 3) % codes.length]!;
    const path = [
      `/api/v1/rate?from=EUR&to=${a}`,
      `/api/v1/convert?from=${a}&to=${b}&amount=${(i % 100_000) / 100}`,
      `/api/v1/history?from=${a}&to=${b}&range=${ranges[i % ranges.length]}${i % 4 === 0 ? '&format=csv' : ''}`,
    ][i % 3]!;
    const presented = unknown ? `exr_${String(i).padStart(32, '0')}` : keys[keyIndex]!.key;
    const bucket = periods[period]!;
    const request = get(`${server.base}${path}`, { headers: { 'X-Api-Key': presented, 'Accept-Encoding': 'gzip' }, agent, timeoutMs: 10_000 }).then(
      (reply) => {
        bucket.latencies.push(reply.ms);
        bucket.statuses.set(String(reply.status), (bucket.statuses.get(String(reply.status)) ?? 0) + 1);
        if (!unknown && reply.status !== 429 && reply.headers['x-ratelimit-remaining'] !== undefined) answered.set(keyIndex, (answered.get(keyIndex) ?? 0) + 1);
      },
      () => {
        unanswered += 1;
      },
    );
    pending.add(request);
    void request.finally(() => pending.delete(request));
  }
  await Promise.all(pending);
  const endRss = await rssMiB(pid, server.base);

  // Quotas: what the service reports (one probe per key, counted too), then what the store holds after a graceful stop.
  const quotaErrors: string[] = [];
  const probed = new Map<number, number>();
  for (const [index, { key, limit }] of keys.entries()) {
    const probe = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key }, agent });
    const used = answered.get(index) ?? 0;
    const expectedRemaining = Math.max(0, limit - used - 1);
    if (Number(probe.headers['x-ratelimit-remaining']) !== expectedRemaining) quotaErrors.push(`key ${index}: answered ${used}, remaining ${probe.headers['x-ratelimit-remaining']}, expected ${expectedRemaining}`);
    probed.set(index, used + (probe.status === 200 ? 1 : 0));
  }
  agent.destroy();
  const alive = isRunning(server);
  const stop = await stopInstance(server);
  const db = new Database(file, { readonly: true });
  const stored = new Map((db.prepare('select key_id, used from quota_usage where day = ?').all(TODAY) as Array<{ key_id: string; used: number }>).map((r) => [r.key_id, Number(r.used)]));
  db.close();
  for (const [index, { id }] of keys.entries()) if ((stored.get(id) ?? 0) !== probed.get(index)) quotaErrors.push(`key ${index}: store holds ${stored.get(id) ?? 0}, answered ${probed.get(index)}`);
  const freeAnswered = keys.map((_, index) => index).filter((index) => index >= PRO_KEYS).map((index) => answered.get(index) ?? 0);

  // The table.
  console.log(`\n${'period'.padEnd(10)}${'requests'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'RSS MiB'.padStart(10)}  statuses`);
  const summary = periods.map((p, index) => {
    const sorted = [...p.latencies].sort((x, y) => x - y);
    const row = { period: `${index * PERIOD_S}-${(index + 1) * PERIOD_S}s`, requests: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN, rss: p.rss, statuses: [...p.statuses].map(([s, n]) => `${n} x ${s}`).join(', ') };
    console.log(`${row.period.padEnd(10)}${String(row.requests).padStart(10)}${row.p50.toFixed(2).padStart(9)}${row.p99.toFixed(2).padStart(9)}${row.max.toFixed(1).padStart(9)}${row.rss.toFixed(1).padStart(10)}  ${row.statuses}`);
    return row;
  });
  const full = summary.filter((row) => row.requests > (RATE * PERIOD_S) / 2);
  const first = full[1] ?? full[0]!;
  const last = full.at(-1)!;
  const memoryFlat = endRss <= startRss * 1.25 && endRss - startRss <= 32;
  const noDrift = last.p50 <= first.p50 * 2 + 5 && last.p99 <= first.p99 * 2 + 5;
  const checks: Array<[string, boolean, string]> = [
    ['memory flat', memoryFlat, `RSS ${startRss.toFixed(1)} MiB after warm-up, ${endRss.toFixed(1)} MiB at the end (${(endRss - startRss >= 0 ? '+' : '') + (endRss - startRss).toFixed(1)} MiB)`],
    ['no latency drift', noDrift, `p50 ${first.p50.toFixed(2)} → ${last.p50.toFixed(2)} ms, p99 ${first.p99.toFixed(2)} → ${last.p99.toFixed(2)} ms (${first.period} against ${last.period})`],
    ['every quota exact', quotaErrors.length === 0, `${keys.length} keys: service and store agree with the answers given; free keys answered ${[...new Set(freeAnswered)].join('/')} of limit ${FREE_LIMIT}${quotaErrors.length > 0 ? `; ${quotaErrors.slice(0, 3).join('; ')}` : ''}`],
    ['every request answered', unanswered === 0, `${total} sent, ${unanswered} unanswered`],
    ['clean stop', alive && stop.code === 0, `server ${alive ? 'alive' : 'DEAD'} at the end, exit code ${stop.code} on SIGTERM`],
  ];
  console.log('');
  for (const [name, ok, detail] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${name.padEnd(24)} ${detail}`);
  mkdirSync(join('test-artifacts', 'reliability', 'results'), { recursive: true });
  writeFileSync(
    join('test-artifacts', 'reliability', 'results', 'soak.json'),
    `${JSON.stringify({ suite: 'soak', duration: DURATION_S, rate: RATE, keys: keys.length, periods: summary, checks: checks.map(([name, ok, detail]) => ({ name, ok, detail })) }, null, 2)}\n`,
  );
  if (process.argv.includes('--save')) {
    const { fileName, ...identity } = runIdentity(startedAt);
    const saved: SavedSoak = { startedAt: startedAt.toISOString(), ...identity, duration: DURATION_S, rate: RATE, keys: keys.length, periods: summary, checks: checks.map(([name, ok, detail]) => ({ name, ok, detail })) };
    mkdirSync(SAVED_SOAKS_DIR, { recursive: true });
    writeFileSync(join(SAVED_SOAKS_DIR, fileName), `${JSON.stringify(saved, null, 2)}\n`);
    console.log(`saved to ${join(SAVED_SOAKS_DIR, fileName)}: run npm run docs:reliability`);
  }
  dir.remove();
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
}

await main();
