// Structured JSON logs (pino), one object per line: on stdout (npm start), or on another file
// descriptor (the start command logs on stderr, keeping stdout for the address it listens on).
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export function createLogger(level: LogLevel, fd = 1): Logger {
  const options = {
    level,
    base: { service: 'overmind-eval' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return fd === 1 ? pino(options) : pino(options, pino.destination({ fd, sync: true }));
}
