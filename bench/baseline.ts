/**
 * The benchmark's baseline: a bare Fastify server whose every GET answers one constant JSON body
 * of the size of a real rate response. Started by bench/run.ts as its own process, so that it runs
 * on its own core like the service does.
 *
 * Environment: BASELINE_PORT, BASELINE_HOST (127.0.0.1), BASELINE_BODY (a JSON text; the bench
 * passes a real /api/v1/rate response), BASELINE_HEADERS (a JSON object of headers to send with
 * every answer as well: for the row baseline+headers, the service's rate headers). Prints one JSON
 * line `{"listening":<port>}` when ready and exits when its standard input closes, so that it
 * never outlives the bench.
 */
import Fastify from 'fastify';

const DEFAULT_BODY = '{"pair":"EURUSD","from":"EUR","to":"USD","rate":"1.1618","asOf":"2026-03-05T15:00:00Z","stale":false}';

const body: unknown = JSON.parse(process.env.BASELINE_BODY ?? DEFAULT_BODY);
const port = Number(process.env.BASELINE_PORT ?? 0);
const host = process.env.BASELINE_HOST ?? '127.0.0.1';

const headers: Record<string, string> | undefined = process.env.BASELINE_HEADERS ? JSON.parse(process.env.BASELINE_HEADERS) : undefined;

const app = Fastify({ logger: false });
// One route for every path the bench sends, returning the same object (serialised by Fastify).
if (headers) {
  app.get('/*', async (_request, reply) => {
    reply.headers(headers);
    return body;
  });
} else app.get('/*', async () => body);

await app.listen({ port, host });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ listening: typeof address === 'object' && address ? address.port : port })}\n`);

const stop = () => {
  app.close().finally(() => process.exit(0));
};
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
