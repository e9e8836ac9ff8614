import 'server-only';
import pino, { type Logger } from 'pino';

const KEY = Symbol.for('redlock-console.logger');
type Holder = { [KEY]?: Logger };

/** The server's structured log (pino, JSON lines on stdout; LOG_LEVEL sets the level). */
export function logger(): Logger {
  const holder = globalThis as Holder;
  holder[KEY] ??= pino({ level: process.env.LOG_LEVEL || 'info', base: { app: 'redlock-console' } });
  return holder[KEY];
}
