/**
 * A baseline: a bare Fastify server whose every GET answers one constant JSON body, started by
 * the bench as a process of its own on 127.0.0.1:BASELINE_PORT. BASELINE_BODY: the body (the
 * bench passes the service's own rate answer, so that the sizes match); BASELINE_HEADERS: a JSON
 * object of headers to send with it too (for baseline+headers, the rate answer's). It exits when
 * its standard input closes, so that it never outlives the bench.
 */
import Fastify from 'fastify';

const body: unknown = JSON.parse(process.env.BASELINE_BODY!);
const headers: Record<string, string> | undefined = process.env.BASELINE_HEADERS ? JSON.parse(process.env.BASELINE_HEADERS) : undefined;

const app = Fastify({ logger: false });
// One route for every path the bench sends, returning the same object (serialised by Fastify).
if (headers) {
  app.get('/*', async (_request, reply) => {
    reply.headers(headers);
    return body;
  });
} else app.get('/*', async () => body);
await app.listen({ port: Number(process.env.BASELINE_PORT), host: '127.0.0.1' });

const stop = () => void app.close().finally(() => process.exit(0));
process.stdin.on('end', stop).on('error', stop).resume();
process.once('SIGTERM', stop).once('SIGINT', stop);
