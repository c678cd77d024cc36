import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

/** A store URL as it may be shown: without its user and password. */
export function redactedUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** Anything shaped like an API key, also with its '_' percent-encoded, wherever it is in a URL. */
const KEY_SHAPED = /exr(?:_|%5f)[0-9a-z%]{8,}/gi;

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * The URL with every API key removed: the value of each query parameter whose name decodes to
 * apikey (the query parser decodes names, so `%61pikey=` is a key too), and anything shaped like
 * a key elsewhere, such as a key pasted into the path or another parameter.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).replace(KEY_SHAPED, 'exr_[REDACTED]');
  if (q === -1) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return decodedName(name) === 'apikey' ? `${name}=[REDACTED]` : pair.replace(KEY_SHAPED, 'exr_[REDACTED]');
    })
    .join('&');
  return `${path}?${query}`;
}

export type LogFormat = 'auto' | 'json' | 'pretty';

/** `auto` is readable lines on a terminal and JSON anywhere else (a file, a pipe, a log collector). */
export function resolveLogFormat(format: LogFormat, stream: { isTTY?: boolean }): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return stream.isTTY === true ? 'pretty' : 'json';
}

/**
 * pino's own pretty printer, in this thread and synchronous (no transport worker: a line logged
 * just before an exit is still written). Loaded only when asked for.
 */
function prettyStream(destination: NodeJS.WritableStream | DestinationStream): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({ destination, sync: true, colorize: (destination as { isTTY?: boolean }).isTTY === true, ignore: 'pid,hostname,service', translateTime: 'SYS:HH:MM:ss' });
}

/**
 * Structured JSON logs (or the same records pretty-printed; `auto` decides by the destination);
 * API keys are redacted from headers and URLs. A cluster worker's lines carry its id.
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'exrates', ...(cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Named paths only: with a wildcard path pino walks the bindings of every request's child
    // logger to redact them.
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'req.headers.authorization', 'headers.authorization', 'apikey', 'query.apikey', 'req.query.apikey'], censor: '[REDACTED]' },
    serializers: {
      req(request: { method: string; url: string; ip?: string; id?: string }) {
        return { id: request.id, method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
  if (resolveLogFormat(format, (destination ?? process.stdout) as { isTTY?: boolean }) === 'pretty') return pino(options, prettyStream(destination ?? process.stdout));
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
