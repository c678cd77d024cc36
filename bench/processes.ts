/**
 * The processes the bench starts (servers, wrk): kept track of so that every one of them is
 * killed when the bench ends, fails or is interrupted, with the clean-ups an interruption needs.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { waitFor } from '../test/support/wait.js';

const children = new Set<ChildProcess>();
/** Clean-ups to run when the bench is interrupted (the temporary folder, a PostgreSQL schema, Redis keys). */
const onInterrupt: Array<() => void | Promise<void>> = [];

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function cleanUpOnInterrupt(cleanup: () => void | Promise<void>): void {
  onInterrupt.push(cleanup);
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

export function killAll(): void {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
}

process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`\nbench: ${signal}: stopping every server it started`);
    killAll();
    const cleanups = Promise.allSettled(onInterrupt.map(async (cleanup) => cleanup()));
    const timeout = new Promise((resolve) => setTimeout(resolve, 3_000).unref());
    void Promise.race([cleanups, timeout]).finally(() => process.exit(130));
  });
}

/** SIGTERM (the service drains), SIGKILL after a grace period. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last lines of a child's output, to show when it fails. */
export function tail(child: ChildProcess, label: string): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim()));
    lines.splice(0, Math.max(0, lines.length - 40));
  };
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', keep);
  return () => (lines.length ? `${label} output:\n  ${lines.join('\n  ')}` : `${label}: no output`);
}

/** Polls a URL every 10 ms until it answers 200; returns that answer's body and headers. */
export async function waitFor200(url: string, headers: Record<string, string>, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<{ body: string; headers: Headers }> {
  let answer: { body: string; headers: Headers } | undefined;
  const answered = async () => {
    if (!running(child)) throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before answering ${url}`);
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) }).catch(() => undefined); // not listening yet
    const body = await response?.text().catch(() => undefined);
    if (response?.status === 200 && body !== undefined) answer = { body, headers: response.headers };
    return answer !== undefined;
  };
  await waitFor(answered, timeoutMs, `a 200 from ${url}`).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${output()}`)));
  return answer!;
}

/**
 * The CPUs of a pinned run: the servers on one, wrk on the other, so that neither takes the
 * other's core and the kernel never moves them; several workers on every CPU. Undefined with
 * fewer than two CPUs or no `taskset` (util-linux).
 */
export function choosePinning(wanted: boolean): { server: string; generator: string; all: string } | undefined {
  if (!wanted || cpus().length < 2) return undefined;
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
  } catch {
    console.log('bench: taskset (util-linux) is not installed: the processes are not pinned to CPUs');
    return undefined;
  }
  return { server: '0', generator: '1', all: `0-${cpus().length - 1}` };
}

/** A command run on these CPUs (taskset's list; its threads and children inherit it), or as it is. */
export function onCpu(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [command, [...args]] : ['taskset', ['-c', cpus, command, ...args]];
}
