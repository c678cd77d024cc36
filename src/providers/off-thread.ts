/**
 * Parsing a large upstream document on a worker thread, so that a refresh never holds up requests:
 * a history file takes the event loop for a second or more to parse (an ECB history in XML, some
 * seconds; a quarter of the NBU's, a good part of one), and a hostile upstream may send a document
 * as large as its limit allows. Small documents (most days' refreshes) are parsed in place, where a
 * thread would cost more than it saves.
 *
 * One short-lived worker per large document, with a heap limit of its own: a document that takes
 * more memory than that to parse fails like any bad document instead of growing the process.
 * https://nodejs.org/api/worker_threads.html
 */
import { Worker } from 'node:worker_threads';
import { FeedError } from '../core/errors.js';
import type { RateDocument } from '../core/ports.js';

/**
 * The parsers a worker may run, by name (parse-worker.ts holds the table): the ECB's takes the
 * bytes and the limit they were read under (a ZIP is inflated no further), the others the decoded
 * text (Frankfurter's, and the base it was asked for). An adapter passes its parser's name with
 * the parser itself, so that this module imports no adapter and no adapter imports itself back.
 */
export type ParserName = 'ecb' | 'bcra' | 'bnm' | 'bnr' | 'boc' | 'boe' | 'boi' | 'cbaLatest' | 'cbaRange' | 'cbn' | 'cbr' | 'cbrDynamic' | 'cbu' | 'cnb' | 'dnb' | 'frankfurter' | 'mnb' | 'nbg' | 'nbk' | 'nbp' | 'nbrb' | 'nbrbDynamics' | 'nbrm' | 'nbt' | 'nbu' | 'norgesbank' | 'rba' | 'riksbank' | 'sarb';

/** Documents from this size on are parsed on a worker thread. */
export const OFF_THREAD_FROM = 256 * 1024;
/** A worker's heap, at most: several times what the largest real document takes to parse. */
const WORKER_HEAP_MB = 256;

/** What a worker answers. */
export type ParseAnswer = { ok: true; document: RateDocument } | { ok: false; feed: boolean; message: string };

/**
 * The worker's module: beside this one in src/ (run through tsx) and in dist/, whether this code
 * runs from dist/providers/ or bundled into dist/cli/.
 */
function workerModule(): URL {
  return new URL(`../providers/parse-worker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);
}

/**
 * The document `parse` makes of `input`: in place when small, on a worker thread when large, where
 * the worker runs the parser of that `name` (the same function: parse-worker.ts).
 */
export async function parseOffThread<A extends [string | Uint8Array, ...unknown[]]>(
  name: ParserName,
  parse: (...args: A) => RateDocument,
  input: A,
  signal?: AbortSignal,
): Promise<RateDocument> {
  const first = input[0];
  const size = typeof first === 'string' ? first.length : first.byteLength;
  if (size < OFF_THREAD_FROM) return parse(...input);
  signal?.throwIfAborted();
  const worker = new Worker(workerModule(), { workerData: { name, input }, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  return new Promise<RateDocument>((resolve, reject) => {
    const onAbort = () => {
      reject(signal!.reason);
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal?.removeEventListener('abort', onAbort);
    worker.once('message', (answer: ParseAnswer) => {
      settle();
      if (answer.ok) resolve(answer.document);
      else reject(answer.feed ? new FeedError(answer.message) : new Error(answer.message));
    });
    worker.once('error', (error: Error & { code?: string }) => {
      settle();
      reject(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new FeedError(`${name} feed: the document (${size} bytes or characters) takes more than ${WORKER_HEAP_MB} MB to parse`, { cause: error })
          : error,
      );
    });
    // After an answer this changes nothing; without one (a worker that could not start), it is the failure.
    worker.once('exit', (code) => {
      settle();
      reject(new Error(`the parsing thread stopped without an answer (exit code ${code})`));
    });
  });
}
