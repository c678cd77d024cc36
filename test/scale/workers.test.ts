/**
 * One `exrates serve` with EXRATES_WORKERS=2 on SQLite, no Redis: two worker processes on one
 * port, the quota counters and the refresh lock held by the main process. Quotas stay exact
 * across workers, one refresh runs per tick, a killed worker is replaced and loses no count,
 * a stop writes every count to the store, and after a killed main process the next start counts
 * on from its journal. The upstream is the local fake ECB.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv } from '../support/env.js';
import { get, type Reply } from '../support/http.js';
import { createKey, ensureBuilt, keyPrefix, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { startFakeUpstreams, TODAY, type FakeUpstreams } from '../support/upstreams.js';
import { sleep } from '../support/wait.js';
import { callsPerTick } from './load.js';

const REFRESH_SECONDS = 2;
const INTERVAL_MS = REFRESH_SECONDS * 1000;
const DAILY = '/ecb/eurofxref-daily.xml';

/** Child processes of a process, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** CPU time a process has used, in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('EXRATES_WORKERS=2 on SQLite, without Redis', () => {
  let fake: FakeUpstreams | undefined;
  const dir = tempDir('exrates-workers-');
  const database = join(dir.path, 'exrates.db');
  let setup: ProcessSetup;
  let server: Instance;
  let agent: http.Agent;
  const keys = { counted: '', exhausted: '', restart: '' };

  const call = (path: string, key: string): Promise<Reply> =>
    get(`${server.base}${path}`, { headers: { 'X-Api-Key': key }, agent, timeoutMs: 15_000 });

  function storedUsed(key: string): number | undefined {
    const db = new Database(database, { readonly: true });
    try {
      const row = db
        .prepare('select q.used from quota_usage q join api_keys k on k.id = q.key_id where k.prefix = ? and q.day = ?')
        .get(keyPrefix(key), TODAY) as { used: number } | undefined;
      return row?.used;
    } finally {
      db.close();
    }
  }

  before(async () => {
    await ensureBuilt();
    fake = await startFakeUpstreams();
    setup = {
      cwd: dir.path,
      env: processEnv({
        EXRATES_DATABASE_URL: `sqlite:${database}`,
        ...fakeUpstreamVars(fake),
        EXRATES_PROVIDERS: 'ecb',
        EXRATES_REFRESH_SECONDS: String(REFRESH_SECONDS),
        EXRATES_WORKERS: '2',
      }),
    };
    server = await startInstance('cluster', setup);
    agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    [keys.counted, keys.exhausted, keys.restart] = await Promise.all([createKey(setup, 'free'), createKey(setup, 'free'), createKey(setup, 'free')]);
  });

  after(async () => {
    agent?.destroy();
    if (server) await stopInstance(server);
    await fake?.close();
    dir.remove();
  });

  it('runs two workers, both serving', async () => {
    const workers = childrenOf(server.child.pid!);
    assert.equal(workers.length, 2, `worker processes: ${JSON.stringify(workers)}`);
    const before = workers.map(cpuTicks);
    await Promise.all(Array.from({ length: 600 }, (_, i) => call(`/api/v1/rate?from=USD&to=${i % 2 ? 'JPY' : 'GBP'}`, keys.restart)));
    const used = workers.map((pid, i) => cpuTicks(pid) - before[i]!);
    console.log(`workers: CPU ticks used per worker for 600 requests: ${JSON.stringify(used)}`);
    assert.ok(used.every((ticks) => ticks > 0), 'both workers answered requests');
  });

  it('a free key used through both workers at once: 400 requests, remaining 999 down to 600, each once', async () => {
    const replies = await Promise.all(Array.from({ length: 400 }, (_, i) => call(`/api/v1/rate?from=USD&to=${i % 3 ? 'JPY' : 'GBP'}`, keys.counted)));
    assert.deepEqual(replies.map((r) => r.status).filter((s) => s !== 200), []);
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => b - a);
    assert.deepEqual(remaining, Array.from({ length: 400 }, (_, i) => 999 - i));
    const started = performance.now();
    while (performance.now() - started < 3_000 && storedUsed(keys.counted) !== 400) await sleep(50);
    assert.equal(storedUsed(keys.counted), 400, 'the count reaches SQLite within a flush');
  });

  it('1,100 requests on one free key: exactly 1,000 answered and 100 refused', async () => {
    const replies = await Promise.all(Array.from({ length: 1100 }, () => call('/api/v1/convert?from=EUR&to=USD&amount=10', keys.exhausted)));
    const statuses = new Map<number, number>();
    for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    assert.deepEqual([...statuses].sort(), [
      [200, 1000],
      [429, 100],
    ]);
  });

  it('scheduled refreshes: one ECB fetch per tick across both workers', async () => {
    const ticks = 3;
    const { perTick } = await callsPerTick(() => fake!.calls(DAILY), INTERVAL_MS, ticks);
    console.log(`workers refresh: ${ticks} ticks of ${REFRESH_SECONDS} s, 2 workers -> ECB latest fetches per tick ${JSON.stringify(perTick)}`);
    assert.deepEqual(perTick, Array<number>(ticks).fill(1));
  });

  it('a worker killed with SIGKILL is replaced, and no count is lost', async () => {
    const first = await call('/api/v1/rate?from=EUR&to=USD', keys.restart);
    assert.equal(first.status, 200);
    const before = Number(first.headers['x-ratelimit-remaining']);
    const [victim] = childrenOf(server.child.pid!);
    process.kill(victim!, 'SIGKILL');
    let replaced: number[] = [];
    const started = performance.now();
    while (performance.now() - started < 20_000) {
      replaced = childrenOf(server.child.pid!);
      if (replaced.length === 2 && !replaced.includes(victim!)) break;
      await sleep(100);
    }
    assert.equal(replaced.length, 2);
    assert.ok(!replaced.includes(victim!));
    // Fresh connections, so both workers (the new one too) answer.
    const fresh = new http.Agent({ keepAlive: false });
    try {
      let served = 0;
      let last = before;
      for (let i = 0; i < 20; i++) {
        const reply = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': keys.restart }, agent: fresh, timeoutMs: 15_000 });
        if (reply.status !== 200) continue;
        served += 1;
        const remaining = Number(reply.headers['x-ratelimit-remaining']);
        assert.ok(remaining < last, `remaining went from ${last} to ${remaining}`);
        last = remaining;
      }
      assert.equal(served, 20);
      assert.equal(last, before - 20, 'every request since the kill counted once, none forgotten');
    } finally {
      fresh.destroy();
    }
  });

  it('a stop writes every count to the store', async () => {
    const reply = await call('/api/v1/rate?from=EUR&to=GBP', keys.counted);
    const used = 1000 - Number(reply.headers['x-ratelimit-remaining']);
    const outcome = await stopInstance(server);
    assert.equal(outcome.code, 0, server.output.join('').slice(-2000));
    assert.equal(storedUsed(keys.counted), used);
    assert.deepEqual(childrenOf(server.child.pid!), []);
  });

  it('the main process killed with SIGKILL: what the workers counted is in its journal, folded in at the next start', async () => {
    server = await startInstance('cluster', setup);
    const replies = [];
    for (let i = 0; i < 30; i++) replies.push(await call('/api/v1/rate?from=EUR&to=GBP', keys.restart));
    const remaining = Math.min(...replies.map((r) => Number(r.headers['x-ratelimit-remaining'])));
    // Killed well within the second before the first fold: only the journal holds these counts.
    await sleep(100);
    const workers = childrenOf(server.child.pid!);
    server.child.kill('SIGKILL');
    await server.exit;
    const started = performance.now();
    while (workers.some((pid) => existsSync(`/proc/${pid}`)) && performance.now() - started < 10_000) await sleep(50);
    server = await startInstance('cluster', setup);
    const next = await call('/api/v1/rate?from=EUR&to=GBP', keys.restart);
    assert.equal(Number(next.headers['x-ratelimit-remaining']), remaining - 1, 'counting goes on from the last request before the kill');
  });
});
