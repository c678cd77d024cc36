import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY = /([?&]apikey=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[REDACTED]');
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
