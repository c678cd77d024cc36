import type { IncomingMessage } from 'node:http';
import { closeAfterAnswer } from './client-errors.js';
import { problemOf, type Problem } from './problem.js';

/**
 * What makes a request unanswerable whatever it asks for, checked before anything reads its body
 * or key: a request body whose length cannot be known (RFC 9112 §6.3: a transfer coding other than
 * a final chunked, which Node's parser lets through) is a 400 and its connection is closed; an
 * HTTP/1.1 request must carry a Host header (Node would answer an empty 400).
 */
export function requestDefect(request: IncomingMessage): { problem: Problem; headers: Record<string, string> } | undefined {
  const coding = request.headers['transfer-encoding'];
  if (coding !== undefined && !/(?:^|,)[ \t]*chunked[ \t]*$/i.test(coding)) {
    closeAfterAnswer(request.socket);
    const problem = problemOf('not_found', 'Transfer-Encoding must end with chunked; the request body cannot be delimited.');
    return { problem: { ...problem, status: 400, title: 'Bad Request' }, headers: { connection: 'close' } };
  }
  if (request.headers.host === undefined && request.httpVersion === '1.1') {
    const problem = problemOf('not_found', 'An HTTP/1.1 request must carry a Host header.');
    return { problem: { ...problem, status: 400, title: 'Bad Request' }, headers: {} };
  }
  return undefined;
}
