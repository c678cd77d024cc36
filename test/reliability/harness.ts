/**
 * Shared by the reliability suites: where their figures and logs go, a raw-socket HTTP client for
 * what fetch and node:http refuse to send, a problem+json checker, and snapshots of the store.
 *
 * Each suite writes one JSON result into test-artifacts/reliability/results/; `run.ts` prints them
 * as one table. Every server a suite starts has its whole output saved under logs/, and every key
 * a suite issues is listed under keys/, so the runner can scan the logs of the whole run for keys.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ERROR_CODES } from '../../src/core/errors.js';
import { ROOT, type ServeProcess } from '../support/processes.js';

export const ARTIFACTS = join(ROOT, 'test-artifacts', 'reliability');
export const RESULTS_DIR = join(ARTIFACTS, 'results');
export const LOGS_DIR = join(ARTIFACTS, 'logs');
export const KEYS_DIR = join(ARTIFACTS, 'keys');

export interface SuiteResult {
  suite: string;
  /** What was shown, one line. */
  claim: string;
  passed: boolean;
  seconds: number;
  /** Figures, label → value, in the order they should be printed. */
  figures: Array<[string, string | number]>;
  notes?: string[];
}

export function writeResult(result: SuiteResult): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${result.suite}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** Lists keys a suite issued, for the log scan at the end of the run. */
export function recordKeys(suite: string, keys: readonly string[]): void {
  mkdirSync(KEYS_DIR, { recursive: true });
  appendFileSync(join(KEYS_DIR, `${suite}.txt`), keys.map((k) => `${k}\n`).join(''));
}

/** Saves everything a server process wrote. */
export function saveLog(suite: string, label: string, instance: Pick<ServeProcess, 'output'>): void {
  mkdirSync(LOGS_DIR, { recursive: true });
  writeFileSync(join(LOGS_DIR, `${suite}-${label}.log`), instance.output.join(''));
}

// ---------------------------------------------------------------------------------------------
// Problems

export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const CODES = new Set<string>(ERROR_CODES);
const STACK = /\bat [^\s]+ \(|\.js:\d+:\d+|node:internal|node_modules/;

/** Why an error response is not a valid problem of SPEC §7, or undefined when it is. */
export function problemDefect(status: number, contentType: string | undefined, body: string, head: boolean): string | undefined {
  if (contentType !== PROBLEM_TYPE) return `content-type ${String(contentType)}`;
  if (head) return body.length === 0 ? undefined : 'a body on HEAD';
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return `not JSON: ${body.slice(0, 120)}`;
  }
  if (problem.status !== status) return `status field ${String(problem.status)} on a ${status}`;
  if (typeof problem.code !== 'string' || !CODES.has(problem.code)) return `code ${String(problem.code)} not in SPEC §7`;
  if (problem.type !== `/problems/${problem.code}`) return `type ${String(problem.type)}`;
  if (typeof problem.title !== 'string' || typeof problem.detail !== 'string') return 'title or detail missing';
  if (STACK.test(body)) return 'a stack trace or path in the body';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP over a socket

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
 * Writes the bytes and reads until one whole response has arrived or the server closes. A request
 * the server is still waiting on (a body shorter than announced) gets a half-close after a second,
 * so the server sees the end of input and must answer that too. Not at once: Node's HTTP server
 * aborts a request whose answer is still being prepared when the client half-closes.
 * Rejects when nothing complete arrives within `timeoutMs`, with ClosedUnanswered when the
 * server closed having sent nothing.
 */
export function rawRequest(port: number, bytes: Buffer, options: { timeoutMs?: number; head?: boolean } = {}): Promise<RawReply> {
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

// ---------------------------------------------------------------------------------------------
// The store

/** A digest of the rows of a table, in a fixed order: equal digests, equal tables. */
export function tableDigest(databaseFile: string, table: 'rates' | 'api_keys' | 'provider_state' | 'quota_usage'): { rows: number; digest: string } {
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    const order: Record<string, string> = {
      rates: 'provider, quote, day',
      api_keys: 'id',
      provider_state: 'provider',
      quota_usage: 'key_id, day',
    };
    const rows = db.prepare(`select * from ${table} order by ${order[table]}`).all();
    const hash = createHash('sha256');
    for (const row of rows) hash.update(`${JSON.stringify(row)}\n`);
    return { rows: rows.length, digest: hash.digest('hex').slice(0, 16) };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** "12 x 200, 3 x 400" from a status → count map, statuses ascending. */
export function tally(counts: Map<string | number, number>): string {
  return [...counts]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([status, n]) => `${n} x ${status}`)
    .join(', ');
}

export function bump<K>(counts: Map<K, number>, key: K, by = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}
