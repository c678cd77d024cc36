import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SECURITY_HEADERS } from './headers.js';
import { PROBLEM_CONTENT_TYPE, problemOf, unknownMethodProblem, type Problem } from './problem.js';

/**
 * Requests that Node's HTTP parser rejects never reach Fastify's routes or hooks: Node (or
 * Fastify's default client-error handler) would answer them with a bare 400 or 431 that is not
 * problem+json. These answer them in the service's own shape instead (SPEC §7).
 *
 * The problem code set is fixed. A request that cannot be read as HTTP, or whose request line and
 * headers are too large to read, addresses no resource: `not_found`, like a path that is not valid
 * percent-encoding, with the status HTTP prescribes (400, 408, 431) and its reason phrase as the
 * title. A method the parser does not know, and CONNECT, are `method_not_allowed`.
 */
export function clientErrorProblem(code: string | undefined): { status: number; problem: Problem; allow?: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return httpProblem(431, 'not_found', 'The request line and headers together exceed the 16 KiB this server reads; no resource was addressed.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return httpProblem(408, 'not_found', 'The request did not arrive in time.');
    case 'HPE_INVALID_METHOD':
      return { status: 405, problem: unknownMethodProblem(), allow: 'GET, HEAD' };
    default:
      return httpProblem(400, 'not_found', 'The request is not valid HTTP/1.1 (request line, header syntax, framing or characters), so it addresses no resource.');
  }
}

function httpProblem(status: number, code: 'not_found' | 'method_not_allowed', detail: string): { status: number; problem: Problem } {
  const problem = problemOf(code, detail);
  return { status, problem: { ...problem, status, title: STATUS_CODES[status] ?? problem.title } };
}

/** A client error's problem answer: its body and headers, after which the connection closes. */
function closingProblem(answer: { problem: Problem; allow?: string }): { body: string; headers: Array<readonly [string, string]> } {
  const body = JSON.stringify(answer.problem);
  return {
    body,
    headers: [
      ['Content-Type', PROBLEM_CONTENT_TYPE],
      ['Content-Length', String(Buffer.byteLength(body))],
      ...Object.entries(SECURITY_HEADERS),
      ['Access-Control-Allow-Origin', '*'],
      ...(answer.allow ? [['Allow', answer.allow] as const] : []),
      ['Connection', 'close'],
    ],
  };
}

/**
 * Writes a whole problem+json response on a raw socket and closes it: end() so the answer is
 * flushed before the FIN, then destroyed shortly after in case the client never closes its side.
 */
function writeProblem(socket: Duplex, answer: { status: number; problem: Problem; allow?: string }): void {
  const { body, headers } = closingProblem(answer);
  const head = [`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`, ...headers.map(([name, value]) => `${name}: ${value}`)];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  const timer = setTimeout(() => socket.destroy(), 2_000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

export interface ClientErrorAnswers {
  /**
   * Marks a connection as answered for good (with Connection: close): what its client sends after
   * the request (a body that cannot be delimited, say) then gets no second answer when the parser
   * chokes on it.
   */
  closeAfterAnswer(socket: object): void;
  /** For Fastify's `clientErrorHandler` option: the server's 'clientError' event. */
  answer(error: Error & { code?: string }, socket: Duplex): void;
}

/** One app's answers to client errors, with the connections it marked. */
export function createClientErrorAnswers(): ClientErrorAnswers {
  const closing = new WeakSet<object>();
  return {
    closeAfterAnswer(socket) {
      closing.add(socket);
    },
    answer(error, socket) {
      // A reset connection has nobody to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      // A request read whole before the bad bytes (a broken body or a garbage request after it) is
      // still being answered, and may have been counted against its key: let that answer go out
      // whole, then close, rather than answer the connection twice or cut the answer short.
      const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
      if (inProgress && !inProgress.writableFinished) {
        const close = () => socket.destroy();
        inProgress.once('finish', close);
        inProgress.once('close', close);
        setTimeout(close, 10_000).unref();
        return;
      }
      if (socket.writable && !closing.has(socket)) writeProblem(socket, clientErrorProblem(error.code));
      else socket.destroy();
    },
  };
}

/** For the server's 'connect' event: this is not a proxy. */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => undefined);
  writeProblem(socket, { ...httpProblem(405, 'method_not_allowed', 'CONNECT is not allowed here; use GET or HEAD.'), allow: 'GET, HEAD' });
}
