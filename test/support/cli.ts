/**
 * The built `exrates` command (dist/) as a child process that always settles: its exit, or a kill
 * after `timeoutMs` (reported as `timedOut`, so a hang is a failed assertion and not a stuck suite).
 */
import { spawn } from 'node:child_process';
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

export function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    options.onOutput?.(chunk.toString());
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onOutput?.(chunk.toString());
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, stdout, stderr, ms: performance.now() - started });
    });
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
