/** A loopback HTTP client for suites that speak to a served process over real sockets. */
import http from 'node:http';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
  /** The body as received, for what is not text (a gzip answer) or must be measured in bytes. */
  bytes: Buffer;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  agent?: http.Agent | false;
  timeoutMs?: number;
}

/** A request without a body that always settles: an answer, or an error after `timeoutMs` (a hang) or on a refused/reset connection. */
export function send(url: string, options: RequestOptions = {}): Promise<Reply> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: options.agent ?? false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: bytes.toString('utf8'), bytes, ms: performance.now() - started });
      });
      response.on('error', reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end();
  });
}

export function get(url: string, options: Omit<RequestOptions, 'method'> = {}): Promise<Reply> {
  return send(url, options);
}
