/** Loopback ports for test servers: the kernel picks a free one, so suites running at once never collide. */
import net from 'node:net';

/**
 * Listens on 127.0.0.1 and resolves with the bound port. Port 0 asks the kernel for a free one;
 * a given port reopens a listener a test closed on purpose (a refused upstream or engine coming back).
 */
export function listenOnLoopback(server: net.Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/** A port that was free a moment ago, for a process this test starts and must know the port of in advance. */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  const port = await listenOnLoopback(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A built app listening on a free loopback port, for a client that needs real sockets; resolves with its origin. */
export async function listenApp(app: { listen(options: { port: number; host: string }): Promise<unknown>; server: net.Server }): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
}
