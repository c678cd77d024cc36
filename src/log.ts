import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

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

/** Structured JSON logs; API keys are redacted from headers and URLs. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'exrates' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'apikey', '*.apikey'], censor: '[REDACTED]' },
    serializers: {
      req(request: { method: string; url: string; ip?: string; id?: string }) {
        return { id: request.id, method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
