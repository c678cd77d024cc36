/**
 * A loopback TCP proxy in front of PostgreSQL or Redis, so a test can take the engine away from
 * the service without touching the shared engine itself:
 *  - cut('refuse'): open connections are reset and new ones refused (the engine's process died);
 *  - cut('blackhole'): open connections are reset and new ones accepted but never answered (a
 *    host that vanished from the network, a firewall dropping packets);
 *  - stall(): open connections stay up but nothing passes either way (a partition with no
 *    reset); the bytes are held, not dropped, so protocol streams are intact afterwards;
 *  - restore(): back to forwarding. Held connections of a black hole are reset, as a client's
 *    retransmitted SYN would finally be answered by a fresh connection, not the old one.
 */
import net from 'node:net';
import { listenOnLoopback } from './ports.js';
import { POSTGRES_URL, REDIS_URL } from './stores.js';

export type ProxyState = 'open' | 'refuse' | 'blackhole' | 'stalled';

export interface TcpProxy {
  readonly port: number;
  readonly state: ProxyState;
  /** Connections accepted since the proxy started. */
  readonly accepted: number;
  cut(mode: 'refuse' | 'blackhole'): Promise<void>;
  stall(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

/**
 * Resets a connection (RST rather than FIN). A socket already ending (end() called: by us, or by
 * Node after the peer's FIN) cannot be reset: Node's resetAndDestroy() then fails with EINVAL and
 * leaves the socket's handle open for good, and a process with such a handle never exits. That
 * connection is closing anyway, so it is destroyed instead.
 */
function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const held = new Set<net.Socket>();
  let state: ProxyState = 'open';
  let accepted = 0;
  let closed = false;

  function forward(client: net.Socket): void {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Plain data listeners rather than pipe(): pipe() may resume a source on 'drain', which would
    // let bytes through a stall.
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    if (state === 'stalled') {
      client.pause();
      upstream.pause();
    }
  }

  function onConnection(client: net.Socket): void {
    accepted += 1;
    client.setNoDelay(true);
    if (state === 'blackhole') {
      held.add(client);
      client.on('error', () => undefined);
      client.on('close', () => held.delete(client));
      // Read and discard, so the client's writes never block on a full buffer.
      client.on('data', () => undefined);
      return;
    }
    forward(client);
  }

  let server = net.createServer(onConnection);
  const port = await listenOnLoopback(server);

  function resetAll(): void {
    for (const { client, upstream } of pairs) {
      reset(client);
      upstream.destroy();
    }
    pairs.clear();
  }

  function closeListener(): Promise<void> {
    return new Promise((resolve) => server.close(() => resolve()));
  }

  return {
    port,
    get state() {
      return state;
    },
    get accepted() {
      return accepted;
    },
    async cut(mode) {
      state = mode;
      resetAll();
      if (mode === 'refuse') await closeListener();
    },
    stall() {
      state = 'stalled';
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    async restore() {
      const previous = state;
      state = 'open';
      if (previous === 'refuse' && !closed) {
        server = net.createServer(onConnection);
        await listenOnLoopback(server, port);
      }
      for (const socket of held) reset(socket);
      held.clear();
      if (previous === 'stalled') {
        for (const { client, upstream } of pairs) {
          client.resume();
          upstream.resume();
        }
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      resetAll();
      for (const socket of held) socket.destroy();
      held.clear();
      if (server.listening) await closeListener();
    },
  };
}

/** host and port of a postgres:// or redis:// URL. */
export function endpointOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: parsed.port ? Number(parsed.port) : defaultPort };
}

/** The same URL with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/** PostgreSQL and Redis, each behind its own proxy, for a service whose engines a test takes away. */
export interface EngineProxies {
  postgres: TcpProxy;
  redis: TcpProxy;
  /** The store and Redis URLs through the proxies, for the service under test. */
  proxied: { EXRATES_DATABASE_URL: string; EXRATES_REDIS_URL: string };
  /** The same engines past the proxies, for set-up (issuing keys) that must not depend on a fault. */
  direct: { EXRATES_DATABASE_URL: string; EXRATES_REDIS_URL: string };
  close(): Promise<void>;
}

/** Proxies in front of the test PostgreSQL (`databaseUrl`, usually a schema of it) and the test Redis. */
export async function proxyEngines(databaseUrl: string): Promise<EngineProxies> {
  const postgres = await startTcpProxy(endpointOf(POSTGRES_URL, 5432));
  const redis = await startTcpProxy(endpointOf(REDIS_URL, 6379)).catch(async (error: unknown) => {
    await postgres.close();
    throw error;
  });
  return {
    postgres,
    redis,
    proxied: { EXRATES_DATABASE_URL: throughProxy(databaseUrl, postgres), EXRATES_REDIS_URL: throughProxy(REDIS_URL, redis) },
    direct: { EXRATES_DATABASE_URL: databaseUrl, EXRATES_REDIS_URL: REDIS_URL },
    async close() {
      await postgres.close();
      await redis.close();
    },
  };
}
