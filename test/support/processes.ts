/**
 * The compiled CLI (dist/cli/main.js) as child processes: `exrates serve` started and awaited
 * until ready, stopped or killed, with everything it wrote kept; and the one-shot commands the
 * suites run beside it (`keys create`, `keys revoke`). Each process runs in a temp folder with
 * an environment of its own (test/support/env.ts), so a developer's .env cannot leak in.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { get } from './http.js';
import { freePort } from './ports.js';
import { sleep } from './wait.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
/** Sources newer than their compiled output (or a missing CLI): what a build would change. */
export function staleSources(): string[] {
  if (!existsSync(CLI)) return ['dist/cli/main.js (missing)'];
  const stale: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const relative = join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        // The portal's modules are bundled into its one script (scripts/build.mjs); the rest compile one to one.
        const built = relative.startsWith('src/portal/') ? join(ROOT, 'dist/portal/portal.js') : join(ROOT, 'dist', relative.slice('src/'.length).replace(/\.ts$/, '.js'));
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
      await sleep(250);
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

/** Where and with what a CLI process runs. */
export interface ProcessSetup {
  env: NodeJS.ProcessEnv;
  /** Working directory: a temp folder, so a developer's .env cannot leak in. */
  cwd: string;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface ServeProcess {
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr interleaved. */
  output: string[];
  exit: Promise<Exit>;
}

/** `exrates serve` on 127.0.0.1:`port`, not awaited: for a test that must catch it before it is ready. */
export function spawnServe(setup: ProcessSetup, port: number): ServeProcess {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...setup.env, PORT: String(port), HOST: '127.0.0.1' },
    cwd: setup.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exit = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output, exit };
}

export interface Instance extends ServeProcess {
  name: string;
  port: number;
  base: string;
  /** Parsed JSON log lines with this message. */
  logged(msg: string): Array<Record<string, unknown>>;
}

/** `exrates serve`, resolved once /readyz answers 200; fails with the process's output if it exits or is not ready within 30 s. */
export async function startInstance(name: string, setup: ProcessSetup, port?: number): Promise<Instance> {
  const bound = port ?? (await freePort());
  const spawned = spawnServe(setup, bound);
  const { child, output, exit } = spawned;
  const instance: Instance = {
    ...spawned,
    name,
    port: bound,
    base: `http://127.0.0.1:${bound}`,
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
      // A fresh connection per probe: the server is not listening yet for the first ones.
      const reply = await get(`${instance.base}/readyz`, { timeoutMs: 2_000 });
      if (reply.status === 200) return instance;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready within 30 s:\n${output.join('').slice(-4000)}`);
    }
    await sleep(100);
  }
}

/**
 * Instances started together, as a deployment would start them. Each one that started is added to
 * `into` even when another failed, so the suite's `after` stops it; then the first failure is thrown.
 */
export async function startInstances(names: readonly string[], setup: ProcessSetup, into: Instance[]): Promise<void> {
  const started = await Promise.allSettled(names.map((name) => startInstance(name, setup)));
  for (const outcome of started) if (outcome.status === 'fulfilled') into.push(outcome.value);
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

export function isRunning(instance: Pick<ServeProcess, 'child'>): boolean {
  return instance.child.exitCode === null && instance.child.signalCode === null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopInstance(instance: ServeProcess, graceMs = 10_000): Promise<Exit> {
  if (!isRunning(instance)) return instance.exit;
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), graceMs);
  try {
    return await instance.exit;
  } finally {
    clearTimeout(timer);
  }
}

export async function killInstance(instance: ServeProcess): Promise<void> {
  if (!isRunning(instance)) return;
  instance.child.kill('SIGKILL');
  await instance.exit;
}

/** A one-shot CLI command beside the served processes; resolves with what it printed. */
export async function runCli(setup: ProcessSetup, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const run = await runCommand([...args], setup);
  if (run.code !== 0) throw new Error(`exrates ${args.join(' ')} exited with ${run.code ?? run.signal}${run.timedOut ? ' (timed out)' : ''}:\n${run.stderr}`);
  return { stdout: run.stdout, stderr: run.stderr };
}

/** `exrates keys create`: the key alone and a newline on stdout, so scripts can capture it. */
export async function createKey(setup: ProcessSetup, tier: 'free' | 'pro', owner = 'tester@example.org'): Promise<string> {
  const { stdout } = await runCli(setup, ['keys', 'create', '--tier', tier, '--owner', owner]);
  if (!/^exr_[0-9A-Za-z]{22,}\n$/.test(stdout)) throw new Error(`keys create printed ${JSON.stringify(stdout)}`);
  return stdout.trim();
}

/** The prefix `keys list` shows and `keys revoke` takes. */
export function keyPrefix(key: string): string {
  return key.slice(0, 12);
}

export async function revokeKey(setup: ProcessSetup, key: string): Promise<string> {
  const { stdout } = await runCli(setup, ['keys', 'revoke', keyPrefix(key)]);
  return stdout.trim();
}

/**
 * A command of the built CLI as a child process that always settles: its exit, or a kill after
 * `timeoutMs` (reported as `timedOut`, so a hang is a failed assertion and not a stuck suite).
 */
export interface CommandRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to exit. */
  ms: number;
}

export interface CommandOptions {
  /** The whole environment of the process (nothing of the test's own is inherited). */
  env: NodeJS.ProcessEnv;
  /** A temp folder, so a developer's .env cannot leak in. */
  cwd: string;
  timeoutMs?: number;
  /** Called with each chunk of stdout and stderr as it arrives. */
  onOutput?(text: string): void;
}

export interface RunningCommand {
  child: ChildProcess;
  /** Everything written so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves when the process is gone (killed after `timeoutMs`). */
  done: Promise<CommandRun>;
}

/** Starts a command and returns at once: for `serve`, which runs until stopped. */
export function startCommand(args: string[], options: CommandOptions): RunningCommand {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let both = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    both += chunk.toString();
    options.onOutput?.(chunk.toString());
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    both += chunk.toString();
    options.onOutput?.(chunk.toString());
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 60_000);
  const done = new Promise<CommandRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stderr, ms: performance.now() - started });
    });
  });
  return { child, output: () => both, done };
}

export function runCommand(args: string[], options: CommandOptions): Promise<CommandRun> {
  return startCommand(args, options).done;
}

/** The JSON log records in some output (lines that are not JSON are skipped). */
export function records(output: string): Array<Record<string, unknown>> {
  return lines(output).flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
