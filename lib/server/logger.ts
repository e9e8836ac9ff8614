import 'server-only';
import pino, { type Logger } from 'pino';

let log: Logger | undefined;

/** The server's structured log (pino, JSON lines on stdout; LOG_LEVEL sets the level). */
export function logger(): Logger {
  log ??= pino({ level: process.env.LOG_LEVEL || 'info', base: { app: 'redlock-console' } });
  return log;
}
