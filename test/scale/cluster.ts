/**
 * Real `exrates serve` processes from dist/, several on one store and one Redis, spoken to over
 * loopback HTTP. Shared by the scale and fault suites.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const execFileAsync = promisify(execFile);

/** Sources newer than their compiled output (or a missing CLI): what a build would change. */
export function staleSources(): string[] {
  if (!existsSync(CLI)) return ['dist/cli/main.js (missing)'];
  const stale: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const relative = join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', relative.slice('src/'.length).replace(/\.ts$/, '.js'));
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(ROOT, relative)).mtimeMs) stale.push(relative);
      }
    }
  };
  walk('src');
  return stale;
}

/**
 * These suites run the compiled CLI, so dist/ must match src/. Builds only when it does not; a
 * lock directory keeps suites that run in parallel from compiling over each other.
 */
export async function ensureBuilt(): Promise<void> {
  if (staleSources().length === 0) return;
  const lock = join(tmpdir(), `exrates-build-${Buffer.from(ROOT).toString('hex').slice(-24)}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than the longest build belongs to a run that died.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`another build held ${lock} for 3 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (staleSources().length === 0) return;
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

/** A GET that always settles: an answer, or an error after `timeoutMs` (a hang) or on a refused/reset connection. */
export function get(url: string, options: { headers?: Record<string, string>; agent?: http.Agent | false; timeoutMs?: number } = {}): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: options.headers ?? {}, agent: options.agent ?? false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }),
      );
      response.on('error', reject);
    });
    request.setTimeout(options.timeoutMs ?? 10_000, () => request.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)));
    request.on('error', reject);
  });
}

export interface Instance {
  name: string;
  port: number;
  base: string;
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr interleaved. */
  output: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Parsed JSON log lines with this message. */
  logged(msg: string): Array<Record<string, unknown>>;
}

export interface ClusterEnv {
  env: NodeJS.ProcessEnv;
  /** Working directory: a temp folder, so a developer's .env cannot leak in. */
  cwd: string;
}

export async function startInstance(name: string, setup: ClusterEnv, port?: number): Promise<Instance> {
  const bound = port ?? (await freePort());
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...setup.env, PORT: String(bound), HOST: '127.0.0.1' },
    cwd: setup.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const instance: Instance = {
    name,
    port: bound,
    base: `http://127.0.0.1:${bound}`,
    child,
    output,
    exit,
    logged(msg) {
      return output
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return {};
          }
        })
        .filter((entry) => entry.msg === msg);
    },
  };
  let exited = false;
  void exit.then(() => (exited = true));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new Error(`${name} exited before it was ready:\n${output.join('')}`);
    try {
      const reply = await get(`${instance.base}/readyz`, { timeoutMs: 2_000 });
      if (reply.status === 200) return instance;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready within 30 s:\n${output.join('').slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function isRunning(instance: Instance): boolean {
  return instance.child.exitCode === null && instance.child.signalCode === null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopInstance(instance: Instance, graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (!isRunning(instance)) return instance.exit;
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), graceMs);
  try {
    return await instance.exit;
  } finally {
    clearTimeout(timer);
  }
}

export async function killInstance(instance: Instance): Promise<void> {
  if (!isRunning(instance)) return;
  instance.child.kill('SIGKILL');
  await instance.exit;
}

/** `exrates keys create`; the key alone is on stdout. */
export async function createKey(setup: ClusterEnv, tier: 'free' | 'pro'): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [CLI, 'keys', 'create', '--tier', tier, '--owner', 'scale@example.org'], setup);
  const key = stdout.trim();
  if (!/^exr_[0-9A-Za-z]{22,}$/.test(key)) throw new Error(`keys create printed ${JSON.stringify(stdout)}`);
  return key;
}

/** The prefix `keys list` shows and `keys revoke` takes. */
export function keyPrefix(key: string): string {
  return key.slice(0, 12);
}

export async function revokeKey(setup: ClusterEnv, key: string): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [CLI, 'keys', 'revoke', keyPrefix(key)], setup);
  return stdout.trim();
}

/** Runs `work` for every item with at most `limit` in flight. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Counts calls to an upstream path per refresh tick over `ticks` whole ticks of `intervalMs`,
 * starting mid-interval so that every tick of the window lies well inside it.
 */
export async function callsPerTick(calls: () => number, intervalMs: number, ticks: number): Promise<{ perTick: number[]; windowStart: number; windowEnd: number }> {
  await sleep((intervalMs * 1.5 - (Date.now() % intervalMs)) % intervalMs);
  const windowStart = Date.now();
  const windowEnd = windowStart + ticks * intervalMs;
  const firstTick = Math.ceil(windowStart / intervalMs);
  const perTick = new Map<number, number>();
  for (let n = 0; n < ticks; n += 1) perTick.set(firstTick + n, 0);
  let seen = calls();
  while (Date.now() < windowEnd) {
    await sleep(20);
    const now = calls();
    if (now > seen) {
      const tick = Math.floor(Date.now() / intervalMs);
      perTick.set(tick, (perTick.get(tick) ?? 0) + (now - seen));
      seen = now;
    }
  }
  return { perTick: [...perTick.values()], windowStart, windowEnd };
}
