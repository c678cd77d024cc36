/**
 * A raw-socket HTTP/1.x client, for what fetch and node:http refuse to send: malformed request
 * lines, bodies that do not match their length, bytes that are no request at all.
 */
import net from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Parses the first HTTP/1.x response in `data` (Content-Length or close-delimited; chunked decoded). */
export function parseResponse(data: Buffer, head = false): RawReply | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!match) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(match[1]);
  let body = data.subarray(end + 4);
  if (head || status === 304 || status === 204) body = Buffer.alloc(0);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (body.length < length) return undefined;
    body = body.subarray(0, length);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd === -1) return undefined;
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) return undefined;
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(chunks);
  }
  return { status, headers, body };
}

/** The server closed the connection without sending a byte: what bytes holding no request get. */
export class ClosedUnanswered extends Error {}

/**
 * Writes the bytes (a string as UTF-8) and reads until one whole response has arrived or the server closes. A request
 * the server is still waiting on (a body shorter than announced) gets a half-close after a second,
 * so the server sees the end of input and must answer that too. Not at once: Node's HTTP server
 * aborts a request whose answer is still being prepared when the client half-closes.
 * Rejects when nothing complete arrives within `timeoutMs`, with ClosedUnanswered when the
 * server closed having sent nothing.
 */
export function rawRequest(port: number, bytes: Buffer | string, options: { timeoutMs?: number; head?: boolean } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const parse = (): RawReply | undefined => {
      const data = Buffer.concat(chunks);
      // A HEAD is answered without a body, except where the parser could not read the request
      // (it cannot know the method then): take the body when a whole one follows that is not
      // itself another response.
      let reply = parseResponse(data, options.head);
      if (reply && options.head) {
        const withBody = parseResponse(data, false);
        const after = data.subarray(data.indexOf('\r\n\r\n') + 4);
        if (withBody && !after.subarray(0, 7).equals(Buffer.from('HTTP/1.'))) reply = withBody;
      }
      return reply;
    };
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(halfClose);
      clearTimeout(grace);
      socket.destroy();
      const reply = parse();
      if (reply) resolve(reply);
      else {
        const data = Buffer.concat(chunks);
        if (!error && data.length === 0) reject(new ClosedUnanswered('closed without a byte of an answer'));
        else reject(error ?? new Error(`no complete answer (${data.length} bytes: ${JSON.stringify(data.toString('latin1').slice(0, 160))})`));
      }
    };
    const timer = setTimeout(() => settle(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)), options.timeoutMs ?? 10_000);
    const halfClose = setTimeout(() => socket.end(), 1_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // For a HEAD, a body may still follow the headers (see parse): give it a moment.
      if (parse() && !grace) grace = setTimeout(() => settle(), options.head ? 200 : 0);
    });
    socket.on('close', () => settle());
    // A reset after the answer was written still leaves the answer readable.
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}
