import { isIP } from 'node:net';
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

/**
 * REDLOCK_TRUST_PROXY for the lock service `npm start` runs beside its console: the addresses the
 * console reaches the service from (loopback, and the service's host when it is an address), and
 * nothing else. Every request the console forwards comes from there, so without it the service's
 * per-peer connection cap (REDLOCK_MAX_CONNECTIONS_PER_PEER, 256) would be one cap shared by every
 * client of the console; a trusted proxy counts against the total only (connection-limits.ts), and
 * its X-Forwarded-For, to which the console appends the client, is believed. Not the console's own
 * list: its proxies (often a whole private network) do not reach the service through the console,
 * and a host in such a range that connected to the service's port directly would escape the
 * per-peer cap (found in review). A local process that connects to the service directly can claim
 * any client address: the service uses it for nothing but that cap.
 */
export function trustForOwnService(serviceHost: string): string {
  return ['127.0.0.1', '::1', ...(isIP(serviceHost) && !['127.0.0.1', '::1'].includes(serviceHost) ? [serviceHost] : [])].join(',');
}
