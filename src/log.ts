import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import { pino, type Bindings, type ChildLoggerOptions, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

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
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'apikey', '*.apikey'], censor: '[REDACTED]' },
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

type LogMethod = (...args: unknown[]) => void;

/**
 * A logger whose children are made when they first log. Fastify gives every request a child
 * logger carrying its id; pino's child (bindings serialised, redaction set up) costs about 3 % of
 * a rate answer's instructions, and with request logging off (the default) almost no request
 * logs. Given to Fastify as its logger, so that its default factory (which, unlike one of ours,
 * is not checked on every request) makes these children.
 */
class DeferredLogger {
  #made: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Bindings | undefined;
  readonly #options: ChildLoggerOptions | undefined;

  /** `parent` itself without bindings; else its child with them, made on first use. */
  constructor(parent: Logger, bindings?: Bindings, options?: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    if (bindings === undefined) this.#made = parent;
  }

  #logger(): Logger {
    return (this.#made ??= this.#parent.child(this.#bindings!, this.#options));
  }

  /** pino's serializers, which Fastify reads off the logger it is given to add its own to. */
  get [pino.symbols.serializersSym](): unknown {
    return (this.#logger() as unknown as Record<symbol, unknown>)[pino.symbols.serializersSym];
  }

  get level(): string {
    return this.#made?.level ?? this.#options?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#logger().isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return new DeferredLogger(this.#logger(), bindings, options) as unknown as Logger;
  }

  fatal(...args: unknown[]): void {
    (this.#logger().fatal as LogMethod)(...args);
  }

  error(...args: unknown[]): void {
    (this.#logger().error as LogMethod)(...args);
  }

  warn(...args: unknown[]): void {
    (this.#logger().warn as LogMethod)(...args);
  }

  info(...args: unknown[]): void {
    (this.#logger().info as LogMethod)(...args);
  }

  debug(...args: unknown[]): void {
    (this.#logger().debug as LogMethod)(...args);
  }

  trace(...args: unknown[]): void {
    (this.#logger().trace as LogMethod)(...args);
  }

  silent(): void {}
}

/** The app's logger for Fastify: `log` itself, with children made when they first log (DeferredLogger). */
export function deferringChildren(log: Logger): Logger {
  return new DeferredLogger(log) as unknown as Logger;
}
