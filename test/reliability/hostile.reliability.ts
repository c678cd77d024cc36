/**
 * A hostile upstream and a store taken away, with figures: memory, the latency of /healthz during
 * the attack, what a second process and a lost store make the service do.
 *
 * 1. Upstream: one server on SQLite refreshing every second from a local ECB stand-in that sends a
 *    gzip bomb (a few hundred KB inflating to 300 MB), then a valid daily document followed by
 *    200 MB of spaces (chunked: no length to refuse it by), then a 200 MB body declared by its
 *    length. The service must stay up, /healthz answer within a second throughout, memory stay
 *    under 600 MB, rates be served stale meanwhile, and the log name the limit.
 * 2. One writer per SQLite file: a second `exrates serve` on the same file refuses to start with one
 *    line naming the file and the first process; the first one serves on.
 * 3. The store lost while serving: its folder deleted; its filesystem filled (a small tmpfs, where
 *    mounting is permitted). Each time the error is logged, /readyz answers 503 and the process
 *    exits with code 1. (A filesystem cannot be remounted read-only while the store is open for
 *    writing; a write SQLite refuses, SQLITE_FULL or SQLITE_READONLY, is a fault too:
 *    test/storage/writer-lock.test.ts.)
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGzip } from 'node:zlib';
import { tempDir } from '../helper.js';
import { fakeUpstreamVars, processEnv, sharedHistoryVars } from '../support/env.js';
import { get } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { createKey, ensureBuilt, isRunning, spawnServe, startInstance, stopInstance, type Instance, type ProcessSetup, type ServeProcess } from '../support/processes.js';
import { ECB_DAILY_XML, serveOnLoopback, startFakeUpstreams, type FakeUpstreams, type LoopbackServer } from '../support/upstreams.js';
import { sleep } from '../support/wait.js';
import { percentile, recordKeys, saveLog, writeResult } from './harness.js';

const SUITE = 'hostile';
const rows: Array<[string, string | number]> = [];
const failures: string[] = [];
const started = performance.now();
const MiB = 1024 * 1024;

function expect(ok: boolean, what: string): void {
  if (!ok) failures.push(what);
  assert.ok(ok, what);
}

/** A process's resident memory now and at its highest, in MiB (Linux). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** `bytes` of zeros, gzipped as it streams: a few hundred KB. */
async function gzipBomb(bytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const zeros = Buffer.alloc(MiB);
  for (let written = 0; written < bytes; written += zeros.length) if (!gzip.write(zeros)) await once(gzip, 'drain');
  gzip.end();
  await once(gzip, 'end');
  return Buffer.concat(chunks);
}

/** Writes `spaces` bytes of spaces after `head`, as the reader takes them; stops when the reader goes. */
function writeSpaces(res: ServerResponse, head: Buffer, spaces: number): void {
  const block = Buffer.alloc(MiB, 0x20);
  let left = spaces;
  res.write(head);
  const more = (): void => {
    while (left > 0 && !res.destroyed) {
      left -= block.length;
      if (!res.write(block)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end();
  };
  more();
}

/** How a server exited, or undefined when it still runs after `withinMs`. */
async function exitOf(instance: ServeProcess, withinMs: number): Promise<{ code: number | null; signal: string | null } | undefined> {
  return Promise.race([instance.exit, sleep(withinMs).then(() => undefined)]);
}

describe('hostile upstreams and a store taken away', () => {
  after(() => {
    writeResult({
      suite: SUITE,
      claim: 'an ECB stand-in sending a gzip bomb and 200 MB bodies: the service stays up, /healthz within 1 s, memory under 600 MB; a second process on one SQLite file refuses to start; a store deleted or its disk full: logged, /readyz 503, exit 1',
      passed: failures.length === 0,
      seconds: (performance.now() - started) / 1000,
      figures: rows,
      notes: failures,
    });
  });

  describe('an ECB stand-in sending a gzip bomb and 200 MB bodies', () => {
    const dir = tempDir('exrates-hostile-upstream-');
    let fake: FakeUpstreams;
    let hostile: LoopbackServer;
    let server: Instance | undefined;
    let key: string;
    let bomb: Buffer;
    let mode: 'ok' | 'gzip bomb' | '200 MB of spaces' | '200 MB declared' = 'ok';
    const hostileAnswers = new Map<string, number>();

    before(async () => {
      await ensureBuilt();
      bomb = await gzipBomb(300 * MiB);
      fake = await startFakeUpstreams();
      // In front of the ECB stand-in: the daily file turns hostile on demand, the rest is passed on.
      hostile = await serveOnLoopback((req, res) => {
        if (req.url === '/eurofxref-daily.xml' && mode !== 'ok') {
          hostileAnswers.set(mode, (hostileAnswers.get(mode) ?? 0) + 1);
          if (mode === 'gzip bomb') return void res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb);
          if (mode === '200 MB declared') {
            res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(ECB_DAILY_XML.length + 200 * MiB) });
            return writeSpaces(res, ECB_DAILY_XML, 200 * MiB);
          }
          res.writeHead(200, { 'content-type': 'text/xml' });
          return writeSpaces(res, ECB_DAILY_XML, 200 * MiB);
        }
        void fetch(`${fake.ecb.url}${req.url}`).then(
          async (upstream) => res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' }).end(Buffer.from(await upstream.arrayBuffer())),
          () => res.destroy(),
        );
      });
      const setup: ProcessSetup = {
        cwd: dir.path,
        env: processEnv({ EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'hostile.db')}`, ...fakeUpstreamVars(fake), EXRATES_ECB_URL: hostile.origin, EXRATES_REFRESH_SECONDS: '1' }),
      };
      key = await createKey(setup, 'pro');
      recordKeys(SUITE, [key]);
      server = await startInstance('hostile-upstream', setup);
      // The five-year history came whole, through the worker thread that parses large documents.
      const history = await get(`${server.base}/api/v1/history?from=EUR&to=USD&range=5y`, { headers: { 'X-Api-Key': key } });
      assert.equal(history.status, 200, history.body);
      assert.ok((JSON.parse(history.body) as { points: unknown[] }).points.length > 1_000, 'five years of ECB history loaded');
    });

    after(async () => {
      if (server) {
        await stopInstance(server);
        saveLog(SUITE, 'upstream', server);
      }
      await hostile?.close();
      await fake?.close();
      dir.remove();
    });

    it('stays up, answers /healthz within a second and keeps memory under 600 MB, serving stored rates stale', async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
      const phases = [
        { mode: 'ok', ms: 3_000 },
        { mode: 'gzip bomb', ms: 6_000 },
        { mode: '200 MB of spaces', ms: 6_000 },
        { mode: '200 MB declared', ms: 4_000 },
        { mode: 'ok', ms: 4_000 },
      ] as const;
      const pid = server!.child.pid!;
      for (const [index, phase] of phases.entries()) {
        mode = phase.mode;
        const healthz: number[] = [];
        let failed = 0;
        let rss = 0;
        const rates = new Map<string, number>();
        const until = performance.now() + phase.ms;
        while (performance.now() < until) {
          const sent = performance.now();
          try {
            const reply = await get(`${server!.base}/healthz`, { agent, timeoutMs: 5_000 });
            healthz.push(performance.now() - sent);
            if (reply.status !== 200) failed += 1;
          } catch {
            healthz.push(performance.now() - sent);
            failed += 1;
          }
          const rate = await get(`${server!.base}/api/v1/rate?from=EUR&to=USD`, { agent, headers: { 'X-Api-Key': key }, timeoutMs: 5_000 }).catch(() => undefined);
          const label = rate === undefined ? 'none' : rate.status === 200 ? ((JSON.parse(rate.body) as { stale: boolean }).stale ? '200 stale' : '200') : String(rate.status);
          rates.set(label, (rates.get(label) ?? 0) + 1);
          rss = Math.max(rss, memoryOf(pid).rss);
          await sleep(50);
        }
        const sorted = [...healthz].sort((a, b) => a - b);
        const slowest = sorted.at(-1) ?? NaN;
        const label = index === phases.length - 1 ? 'healthy again' : phase.mode === 'ok' ? 'healthy' : phase.mode;
        rows.push([
          `upstream: ${label} (${phase.ms / 1000} s)`,
          `/healthz ${healthz.length} x, p99 ${percentile(sorted, 99).toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms; rate ${[...rates].map(([s, n]) => `${n} x ${s}`).join(', ')}; RSS up to ${Math.round(rss)} MB`,
        ]);
        expect(failed === 0, `${label}: /healthz always 200 (${failed} not)`);
        expect(slowest < 1_000, `${label}: /healthz within a second (slowest ${slowest.toFixed(0)} ms)`);
        expect(rss < 600, `${label}: RSS under 600 MB (${Math.round(rss)} MB)`);
        expect(![...rates.keys()].some((s) => !s.startsWith('200')), `${label}: rates answered 200 throughout (${[...rates.keys()].join(', ')})`);
        if (phase.mode !== 'ok') expect((rates.get('200 stale') ?? 0) > 0, `${label}: the stored rates are served stale while the refresh fails`);
      }
      agent.destroy();
      const memory = memoryOf(pid);
      const failures = server!.logged('refresh failed; serving stored rates as stale').filter((line) => line['provider'] === 'ecb').map((line) => String(line['err']));
      const inflated = failures.filter((err) => /limit of 1 MiB \(inflated from gzip\)/.test(err)).length;
      const read = failures.filter((err) => /limit of 1 MiB \(read\)/.test(err)).length;
      const declared = failures.filter((err) => /declares \d+ bytes, over this feed's limit of 1 MiB; not read/.test(err)).length;
      rows.push(['upstream: hostile answers sent', [...hostileAnswers].map(([m, n]) => `${n} x ${m}`).join(', ')]);
      rows.push(['upstream: refresh failures logged, naming the limit', `${inflated} x "over 1 MiB inflated from gzip", ${read} x "over 1 MiB read", ${declared} x "declares … over 1 MiB; not read"`]);
      rows.push(['upstream: server memory', `peak RSS over its whole life (first load included) ${Math.round(memory.peak)} MB`]);
      expect(isRunning(server!), 'the server is still running');
      expect(inflated > 0 && read > 0 && declared > 0, 'each hostile answer failed a refresh with a log line naming the limit');
      expect(memory.peak < 600, `peak RSS under 600 MB (${Math.round(memory.peak)} MB)`);
    });
  });

  describe('one process per SQLite file', () => {
    const dir = tempDir('exrates-hostile-writer-');
    const file = resolve(join(dir.path, 'one.db'));
    const setup: ProcessSetup = { cwd: dir.path, env: processEnv({ EXRATES_DATABASE_URL: `sqlite:${file}`, ...sharedHistoryVars() }) };
    let first: Instance | undefined;

    before(async () => {
      await ensureBuilt();
      first = await startInstance('writer-first', setup);
    });

    after(async () => {
      if (first) {
        await stopInstance(first);
        saveLog(SUITE, 'writer-first', first);
      }
      dir.remove();
    });

    it('a second exrates serve on the same file refuses to start, naming the file and the first process', async () => {
      const port = await freePort();
      const sent = performance.now();
      const second = spawnServe(setup, port);
      const exit = await exitOf(second, 30_000);
      const ms = performance.now() - sent;
      saveLog(SUITE, 'writer-second', second);
      const output = second.output.join('');
      const lines = output.split('\n').filter((line) => line !== '');
      const refusal = `exrates: the store ${file} is in use by process ${first!.child.pid} on `;
      rows.push(['writer: second process on the same file', `exit ${exit?.code ?? 'none'} after ${Math.round(ms)} ms; said: ${lines.join(' | ').slice(0, 260)}`]);
      expect(exit?.code === 1, `the second process exits 1 (${JSON.stringify(exit)})`);
      expect(lines.length === 1 && lines[0]!.startsWith(refusal), `one line naming the file and the first process: ${JSON.stringify(lines)}`);
      const refused = await get(`http://127.0.0.1:${port}/healthz`, { timeoutMs: 1_000 }).then(
        () => false,
        () => true,
      );
      expect(refused, 'the second process never listened');
      const ready = await get(`${first!.base}/readyz`);
      expect(ready.status === 200 && isRunning(first!), 'the first process serves on');
    });
  });

  describe('the store lost while serving', () => {
    const dir = tempDir('exrates-hostile-store-');
    const mounts: string[] = [];
    const instances: Instance[] = [];

    after(async () => {
      for (const instance of instances) {
        await stopInstance(instance);
        saveLog(SUITE, instance.name, instance);
      }
      for (const mount of mounts) {
        try {
          execFileSync('umount', [mount], { stdio: 'ignore' });
        } catch {
          // left mounted: the folder removal below reports it
        }
      }
      dir.remove();
    });

    /** A tmpfs of `size` at a new folder, or why none can be mounted here. */
    function smallFilesystem(name: string, size: string): string | { skip: string } {
      const at = join(dir.path, name);
      mkdirSync(at, { recursive: true });
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'pipe' });
      } catch (error) {
        return { skip: `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim().split('\n')[0]}): needs root with CAP_SYS_ADMIN` };
      }
      mounts.push(at);
      return at;
    }

    /** Starts a server on `folder`, takes the store away with `takeAway`, and measures what follows. */
    async function loseStore(label: string, folder: string, takeAway: () => void, reason: RegExp): Promise<void> {
      const setup: ProcessSetup = { cwd: dir.path, env: processEnv({ EXRATES_DATABASE_URL: `sqlite:${join(folder, 'store.db')}`, ...sharedHistoryVars() }) };
      const instance = await startInstance(`store-${label.replace(/\W+/g, '-')}`, setup);
      instances.push(instance);
      const agent = new http.Agent({ keepAlive: true });
      const before = await get(`${instance.base}/readyz`, { agent });
      expect(before.status === 200, `${label}: ready before`);
      const taken = performance.now();
      takeAway();
      let notReadyAfter: number | undefined;
      while (isRunning(instance) && performance.now() - taken < 15_000) {
        const ready = await get(`${instance.base}/readyz`, { agent, timeoutMs: 2_000 }).catch(() => undefined);
        if (ready?.status === 503 && notReadyAfter === undefined) notReadyAfter = performance.now() - taken;
        await sleep(20);
      }
      agent.destroy();
      const exit = await exitOf(instance, 15_000);
      const exitedAfter = performance.now() - taken;
      const logged = instance.logged('the store can no longer be written: stopping');
      rows.push([
        `store: ${label}`,
        `/readyz 503 after ${notReadyAfter === undefined ? 'never' : `${Math.round(notReadyAfter)} ms`}; exit ${exit?.code ?? 'none'} after ${Math.round(exitedAfter)} ms; logged: ${String(logged[0]?.['reason'] ?? 'nothing')}`,
      ]);
      expect(logged.length === 1 && logged[0]!['level'] === 50 && reason.test(String(logged[0]!['reason'])), `${label}: one error line with the reason (${JSON.stringify(logged)})`);
      expect(notReadyAfter !== undefined, `${label}: /readyz answered 503 before the exit`);
      expect(exit?.code === 1, `${label}: the process exits 1 (${JSON.stringify(exit)})`);
    }

    it('a store folder deleted while serving: logged, /readyz 503, exit 1', async () => {
      await ensureBuilt();
      const folder = join(dir.path, 'deleted');
      await loseStore('folder deleted', folder, () => rmSync(folder, { recursive: true, force: true }), /store\.db was deleted$/);
    });

    it('a store whose filesystem fills up while serving: logged, /readyz 503, exit 1', async (t) => {
      const at = smallFilesystem('full', '96m');
      if (typeof at !== 'string') return t.skip(at.skip);
      await loseStore(
        'filesystem filled',
        at,
        () => {
          const { bavail, bsize } = statfsSync(at);
          writeFileSync(join(at, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - 64 * 1024)));
        },
        /is full \(\d+ bytes free\)$/,
      );
    });
  });
});
