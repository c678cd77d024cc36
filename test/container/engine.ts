/**
 * The container engine for the container checks (`npm run test:container`): whether one can run
 * here, the stand-in base image and the image built once per run, and every container, volume and
 * tag a check creates, removed at the end whatever happened. Each `docker` call is bounded.
 *
 * Where no engine can run the checks are skipped with a visible `# SKIPPING` line; on CI (CI=true)
 * they are mandatory and fail instead.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/processes.js';

export const REQUIRED = process.env.CI === 'true';

/** The shared script that builds a local stand-in for `node:26-bookworm-slim` (no registry is reachable here). */
export const BASE_SCRIPT = join(ROOT, '..', 'shared', 'tools', 'container-base.sh');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A command run to its end, killed after `timeoutMs`; never rejects (a failure is its exit code). */
export function run(command: string, args: readonly string[], options: { timeoutMs?: number; cwd?: string; input?: string } = {}): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd ?? ROOT, timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: error && code === null ? `${stderr}${error.message}` : stderr, ms: performance.now() - started });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

export function docker(args: readonly string[], timeoutMs = 60_000): Promise<Run> {
  return run('docker', args, { timeoutMs });
}

/** `docker …` that must succeed; its trimmed stdout. */
export async function dockerOk(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const result = await docker(args, timeoutMs);
  if (result.code !== 0) throw new Error(`docker ${args.join(' ')} exited ${result.code}: ${result.stderr.trim() || result.stdout.trim()}`);
  return result.stdout.trim();
}

/** Skipped with a visible line, or (on CI) a failure: the reason no engine can run the checks here. */
export function unavailable(reason: string): string {
  if (REQUIRED) throw new Error(`a container engine is required on CI: ${reason}`);
  console.log(`# SKIPPING container checks: ${reason}`);
  return reason;
}

function engineAnswers(): boolean {
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
}

/**
 * Prepares the engine and the stand-in base image with the shared script (which starts dockerd,
 * installing docker.io where it is missing: root only; read with bash from its read-only copy, it
 * needs no write or execute bit). '' when the checks can run, else why not (after the visible
 * skip line; on CI this throws).
 */
export async function prepareEngine(): Promise<string> {
  if (!existsSync(BASE_SCRIPT)) return unavailable(`no ${BASE_SCRIPT} (the shared folder beside the repository)`);
  if (process.getuid?.() !== 0 && !engineAnswers()) return unavailable('no container engine answers `docker info`, and starting one needs root');
  const result = await run('bash', [BASE_SCRIPT], { timeoutMs: 10 * 60_000 });
  if (result.code === 0) return '';
  if (!engineAnswers()) return unavailable(`no container engine could be started: ${result.stderr.trim().split('\n').at(-1)}`);
  throw new Error(`${BASE_SCRIPT} exited ${result.code}:\n${result.stderr.trim()}`);
}

/** What a run created, removed by `cleanUp` in the reverse order: containers, then volumes, then tags and the build stage's image. */
export class Created {
  readonly id = randomBytes(4).toString('hex');
  private readonly containers: string[] = [];
  private readonly volumes: string[] = [];
  private readonly tags: string[] = [];

  /** A name unique to this run, for a container or a volume. */
  name(what: string): string {
    return `exrates-check-${this.id}-${what}`;
  }

  container(name: string): string {
    this.containers.push(name);
    return name;
  }

  volume(name: string): string {
    this.volumes.push(name);
    return name;
  }

  tag(tag: string): string {
    this.tags.push(tag);
    return tag;
  }

  async cleanUp(): Promise<void> {
    if (this.containers.length > 0) await docker(['rm', '--force', '--volumes', ...this.containers], 60_000);
    if (this.volumes.length > 0) await docker(['volume', 'rm', '--force', ...this.volumes], 60_000);
    if (this.tags.length > 0) await docker(['rmi', ...this.tags], 60_000);
    // The build stage's untagged image (the classic builder keeps it; the Dockerfile labels it).
    await docker(['image', 'prune', '--force', '--filter', 'label=exrates.stage=build'], 60_000);
  }
}

/** A `docker build` of the repository (`args` after `docker`) that tags `tag`; its time and the image's size. */
export async function buildImage(args: readonly string[], tag: string): Promise<{ seconds: number; bytes: number }> {
  const result = await docker(args, 20 * 60_000);
  if (result.code !== 0) throw new Error(`docker build exited ${result.code}:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  const bytes = Number(await dockerOk(['image', 'inspect', '--format', '{{.Size}}', tag]));
  return { seconds: result.ms / 1000, bytes };
}

/** Polls `check` until it returns a value (not undefined), at most `timeoutMs`; the last error names what was awaited. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** GET with a bounded wait; rejects on a connection error or timeout. */
export async function fetchWithin(url: string, init: RequestInit = {}, timeoutMs = 10_000): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

/** The host's apt-get, for a tool the deployment checks use: installed on CI only, else the check is skipped. */
export async function tool(command: string, debianPackage: string): Promise<string> {
  const present = () => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
  if (present()) return '';
  if (!REQUIRED) {
    console.log(`# SKIPPING the ${command} check: no ${command} here (apt-get install ${debianPackage}; CI installs it)`);
    return `no ${command}`;
  }
  const install = await run('sh', ['-c', `apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${debianPackage} >/dev/null`], { timeoutMs: 10 * 60_000 });
  if (install.code !== 0 || !present()) throw new Error(`apt-get install ${debianPackage} failed: ${install.stderr.trim()}`);
  return '';
}
