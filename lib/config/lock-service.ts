import { ConfigError } from './errors';

/**
 * The lock-service process's settings (scripts/lock-service-server.ts; `npm start` runs one):
 * - REDLOCK_SERVICE_PORT: the port `npm start` gives it (on HOST, as the console's). @default PORT + 1 (3001)
 * - REDLOCK_DRAIN_MS: how long a SIGTERM waits for the requests in flight before it closes them. @default 3500
 * - REDLOCK_LOCK_SERVICE_URL: where the console forwards the lock routes (`npm start` sets it to
 *   the process it runs; unset, the console answers them itself): read by lib/server/lock-service/forward.ts.
 */
export interface LockServiceConfig {
  port: number;
  drainMs: number;
}

export const LOCK_SERVICE_DEFAULTS = Object.freeze({ drainMs: 3_500 });

export function lockServiceConfig(env: Record<string, string | undefined>, consolePort: number): LockServiceConfig {
  return {
    port: whole(env, 'REDLOCK_SERVICE_PORT', consolePort === 65_535 ? 65_534 : consolePort + 1, 1, 65_535),
    drainMs: whole(env, 'REDLOCK_DRAIN_MS', LOCK_SERVICE_DEFAULTS.drainMs, 0, 600_000),
  };
}

function whole(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}
