/** pino JSON logs. One root logger per process; requests log through a child carrying `req_id`. */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** `destination` defaults to stdout; tests pass a stream to read what was logged. */
export function createLogger(level: string, name = 'chat-node', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Tokens and secrets never reach the logs, wherever they appear in a logged object.
    redact: { paths: ['authorization', 'headers.authorization', '*.authorization', 'token', '*.token'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
