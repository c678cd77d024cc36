/**
 * The built `exrates` command (dist/) as a child process that always settles: its exit, or a kill
 * after `timeoutMs` (reported as `timedOut`, so a hang is a failed assertion and not a stuck suite).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../scale/cluster.js';

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to exit. */
  ms: number;
}

export interface CliOptions {
  /** The whole environment of the process (nothing of the test's own is inherited). */
  env: NodeJS.ProcessEnv;
  /** A temp folder, so a developer's .env cannot leak in. */
  cwd: string;
  timeoutMs?: number;
  /** Called with each chunk of stdout and stderr as it arrives. */
  onOutput?(text: string): void;
}

export interface RunningCli {
  child: ChildProcess;
  /** Everything written so far, stdout and stderr interleaved. */
  output(): string;
  /** Resolves when the process is gone (killed after `timeoutMs`). */
  done: Promise<CliRun>;
}

/** Starts a command and returns at once: for `serve`, which runs until stopped. */
export function startCli(args: string[], options: CliOptions): RunningCli {
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
  const done = new Promise<CliRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stderr, ms: performance.now() - started });
    });
  });
  return { child, output: () => both, done };
}

export function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  return startCli(args, options).done;
}

/** Waits until `check` holds (polled every 100 ms), or fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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

/** The environment a command runs in: PATH and HOME, and only the variables given. */
export function cleanEnv(variables: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...variables };
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
