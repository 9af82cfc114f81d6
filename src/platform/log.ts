import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from './config.js';

export type Log = Logger;

/**
 * Structured JSON logs with dotted event names. Credentials never reach a log line: the
 * request serializer keeps only method and path (no headers, no query string) and the
 * redact list catches secrets passed in log objects by mistake.
 */
export function createLog(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Log {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'licensing' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'password',
          '*.password',
          'token',
          '*.token',
          'key',
          '*.key',
          'secret',
          '*.secret',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'req.headers.authorization',
          // Fastify logs malformed requests with their raw bytes, headers included.
          'err.rawPacket',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
