/**
 * A worker thread's entry (off-thread.ts): parses one document and posts the document, or why it
 * could not be read, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FeedError } from '../core/errors.js';
import type { RateDocument } from '../core/ports.js';
import { PARSERS, type ParseAnswer, type ParserName } from './off-thread.js';

const { name, input } = workerData as { name: ParserName; input: unknown[] };
let answer: ParseAnswer;
try {
  answer = { ok: true, document: (PARSERS[name] as (...args: unknown[]) => RateDocument)(...input) };
} catch (error) {
  answer = { ok: false, feed: error instanceof FeedError, message: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer);
