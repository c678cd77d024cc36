/**
 * A local stand-in for a central bank on loopback, and the bank's recorded answers
 * (`../shared/data/central-banks/`, each with the exact request that produced it).
 *
 * The server answers what `answer` returns for a request's URL (path and query as sent), its
 * method, body, Content-Type and Accept (a POST query, a versioned media type); 404 otherwise.
 * It keeps every request line and body so a test can check what the provider asked for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_DATA } from './data.js';
import { serveOnLoopback } from './upstreams.js';

const CENTRAL_BANKS = join(SHARED_DATA, 'central-banks');

export interface Recording {
  /** The response body, byte for byte. */
  body: Buffer;
  /** The request's path and query, exactly as recorded. */
  pathAndQuery: string;
  contentType: string;
  /** The body of a POST (a SOAP envelope), exactly as recorded. */
  requestBody?: string;
}

interface RecordingsEntry {
  bank: string;
  recordings: Array<{ file: string; url: string; contentType: string; status: number; requestBody?: string }>;
}

/** The recordings of one bank folder (`boc`, `nb`, ...), in the order recordings.json lists them. */
export function recordingsOf(folder: string): Recording[] {
  const entries = JSON.parse(readFileSync(join(CENTRAL_BANKS, 'recordings.json'), 'utf8')) as RecordingsEntry[];
  const entry = entries.find((e) => e.bank === folder);
  if (!entry) throw new Error(`no recordings for ${folder}`);
  return entry.recordings.map((r) => {
    const url = new URL(r.url);
    return {
      body: readFileSync(join(CENTRAL_BANKS, r.file)),
      pathAndQuery: `${url.pathname}${url.search}`,
      contentType: r.contentType,
      ...(r.requestBody === undefined ? {} : { requestBody: r.requestBody }),
    };
  });
}

export interface Reply {
  status?: number;
  body: Uint8Array | string;
  contentType: string;
}

export interface BankServer {
  /** Scheme, host and port: what a provider's `baseUrl` is set to. */
  origin: string;
  /** Path and query of every request, in arrival order. */
  requests: string[];
  /** The body of every request (empty for a GET), in the same order. */
  bodies: string[];
  close(): Promise<void>;
}

/** What a request carried besides its URL, for stand-ins of services asked by POST (SOAP). */
export interface RequestContent {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export async function startBankServer(answer: (url: URL, request: RequestContent) => Reply | undefined): Promise<BankServer> {
  const requests: string[] = [];
  const bodies: string[] = [];
  const server = await serveOnLoopback(async (req, res) => {
    const pathAndQuery = req.url ?? '';
    requests.push(pathAndQuery);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = Buffer.concat(chunks).toString('utf8');
    bodies.push(received);
    const reply = answer(new URL(pathAndQuery, 'http://bank.invalid'), { method: req.method ?? 'GET', headers: req.headers, body: received });
    if (!reply) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType, 'content-length': String(body.length) }).end(body);
  });
  return { origin: server.origin, requests, bodies, close: server.close };
}
