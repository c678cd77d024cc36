/**
 * A private three-node Redis Cluster on loopback, started by the suite that needs it (redis-server
 * and redis-cli from the machine) and killed at its end: three masters, no replicas, every slot
 * served.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { tempDir } from './stores.js';
import { waitFor } from './wait.js';

export interface RedisCluster {
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`, as EXRATES_REDIS_URL takes it. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Why a cluster cannot be started here ('' when it can). */
export function clusterToolsMissing(): string {
  if (spawnSync('redis-server', ['--version']).status !== 0) return 'redis-server is not installed';
  if (spawnSync('redis-cli', ['--version']).status !== 0) return 'redis-cli is not installed';
  return '';
}

function cli(args: string[]): string {
  const run = spawnSync('redis-cli', args, { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${run.stderr || run.stdout}`);
  return run.stdout;
}

export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = tempDir('exrates-redis-cluster-');
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    dir.remove();
  };
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', join(dir.path, `nodes-${port}.conf`), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir.path],
        { stdio: 'ignore' },
      );
      children.push(child);
    }
    const ping = (port: number) => spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG';
    await waitFor(() => ports.every(ping), 10_000, 'three redis-server nodes', 50);
    cli(['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes']);
    // Every node must know every slot's owner before a client may rely on any of them.
    await waitFor(() => ports.every((port) => cli(['-p', String(port), 'cluster', 'info']).includes('cluster_state:ok')), 20_000, 'cluster_state:ok on every node', 100);
    return { url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
