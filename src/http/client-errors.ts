import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ANSWER_HEADERS } from './headers.js';
import { PROBLEM_CONTENT_TYPE, problemOf, toProblem, type ProblemAnswer } from './problem.js';

/**
 * Requests that Node's HTTP parser rejects never reach Fastify's routes or hooks: Node (or
 * Fastify's default client-error handler) would answer them with a bare 400 or 431 that is not
 * problem+json. These answer them in the service's own shape instead (SPEC §7), with the problem
 * toProblem gives the parser's error (malformed_request, header_too_large, request_timeout, or the
 * 405 of a method it does not know), written by Node's own ServerResponse on the socket, which
 * then closes.
 */

/**
 * Writes a problem answer on a socket that has no request Node could read, and closes it. The
 * socket may still be held by the response before it (finished, but not yet let go of by Node, or
 * one the app never saw): then the answer waits a turn, and a socket still held after it is closed
 * unanswered rather than answered twice.
 */
function writeProblem(socket: Duplex, answer: ProblemAnswer, retried = false): void {
  if (socket.destroyed) return;
  // A request Node could not read still gets a response of Node's own making (status line,
  // Date, Content-Length, Connection: close), through a ServerResponse given the socket.
  const unread = new IncomingMessage(socket as Socket);
  unread.httpVersionMajor = 1;
  unread.httpVersionMinor = 1;
  const response = new ServerResponse(unread);
  response.shouldKeepAlive = false;
  try {
    response.assignSocket(socket as Socket);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_HTTP_SOCKET_ASSIGNED') throw error;
    if (retried) socket.destroy();
    else setImmediate(() => writeProblem(socket, answer, true));
    return;
  }
  const body = JSON.stringify(answer.problem);
  response.writeHead(answer.problem.status, { ...ANSWER_HEADERS, ...answer.headers, 'cache-control': 'no-store', 'content-type': PROBLEM_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), connection: 'close' });
  response.end(body, () => socket.end());
  // Destroyed shortly after in case the client never closes its side.
  const timer = setTimeout(() => socket.destroy(), 2_000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

export interface ClientErrorAnswers {
  /**
   * Notes the response a connection is writing (the app's first onRequest hook): bad bytes that
   * follow its request on the connection then let it finish before the connection closes.
   */
  answering(socket: object, response: ServerResponse): void;
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
  const responses = new WeakMap<object, ServerResponse>();
  return {
    answering(socket, response) {
      responses.set(socket, response);
    },
    closeAfterAnswer(socket) {
      closing.add(socket);
    },
    answer(error, socket) {
      // A reset connection has nobody to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      // A request read whole before the bad bytes (a broken body or a garbage request after it) is
      // still being answered, and may have been counted against its key: let that answer go out
      // whole, then close, rather than answer the connection twice or cut the answer short.
      const inProgress = responses.get(socket);
      if (inProgress && !inProgress.writableFinished) {
        const close = () => socket.destroy();
        inProgress.once('finish', close);
        inProgress.once('close', close);
        setTimeout(close, 10_000).unref();
        return;
      }
      if (socket.writable && !closing.has(socket)) writeProblem(socket, toProblem(error));
      else socket.destroy();
    },
  };
}

/** For the server's 'connect' event: this is not a proxy. */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => undefined);
  writeProblem(socket, { problem: problemOf('method_not_allowed', 'CONNECT is not allowed here; use GET or HEAD.'), headers: { allow: 'GET, HEAD' } });
}
