/**
 * Varnish from the distribution (apt-get install varnish) as a shared cache in front of a test
 * service: `varnishd` with its built-in VCL (-b names the backend, nothing else is configured),
 * on a loopback port, in a work folder of its own. Where EXRATES_REQUIRE_SERVICES=1 (and on CI) a
 * missing varnishd fails the suite instead of skipping it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from './http.js';
import { freePort } from './ports.js';
import { SERVICES_REQUIRED, tempDir } from './stores.js';
import { waitFor } from './wait.js';

/** Where varnishd is: EXRATES_TEST_VARNISHD, else the distribution's place (sbin, often not on a user's PATH). */
export const VARNISHD = process.env.EXRATES_TEST_VARNISHD ?? ['/usr/sbin/varnishd', '/usr/bin/varnishd'].find((path) => existsSync(path)) ?? 'varnishd';

/** True when varnishd runs; in CI (or with EXRATES_REQUIRE_SERVICES=1) a missing one fails the suite. */
export function varnishAvailable(): boolean {
  if (spawnSync(VARNISHD, ['-V'], { encoding: 'utf8' }).status === 0) return true;
  const why = `no varnishd at ${VARNISHD} (apt-get install varnish, or set EXRATES_TEST_VARNISHD)`;
  if (SERVICES_REQUIRED) throw new Error(`Varnish is required here but missing: ${why}`);
  console.log(`# SKIPPING shared-cache suites: ${why}`);
  return false;
}

export interface SharedCache {
  /** The cache's origin, http://127.0.0.1:<port>. */
  origin: string;
  /** What varnishd wrote. */
  output: string[];
  close(): Promise<void>;
}

/**
 * varnishd in the foreground with the built-in VCL in front of `backend` (http://host:port),
 * resolved once it answers through to the backend. `-j none`: no privilege separation, so that it
 * runs the same as root or as anyone else, and its work folder stays ours.
 */
export async function startVarnish(backend: string): Promise<SharedCache> {
  const { hostname, port } = new URL(backend);
  const listen = await freePort();
  const work = tempDir('exrates-varnish-');
  const child = spawn(VARNISHD, ['-F', '-j', 'none', '-n', work.path, '-a', `127.0.0.1:${listen}`, '-b', `${hostname}:${port}`, '-s', 'malloc,32m'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));
  const origin = `http://127.0.0.1:${listen}`;
  const close = async () => {
    if (running) child.kill('SIGTERM');
    await exited;
    work.remove();
  };
  try {
    await waitFor(
      async () => {
        if (!running) throw new Error(`varnishd exited:\n${output.join('')}`);
        return (await get(`${origin}/healthz`, { timeoutMs: 1000 }).catch(() => undefined))?.status === 200;
      },
      30_000,
      'varnishd to answer through to the service',
      100,
    );
  } catch (error) {
    await close();
    throw error;
  }
  return { origin, output, close };
}
