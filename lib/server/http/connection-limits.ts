import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConfigError } from '../../config/errors';
import { parseTrustProxy } from '../../config/trust-proxy';

/**
 * What one console process lets its clients hold (20,000 anonymous keep-alive sockets
 * took every file descriptor, and with them health, logins and the lock service). The connection
 * guard (connection-guard.ts) and the console's HTTP server (front.ts) apply them on every
 * connection, the lean lock-service path and Node's parser alike.
 *
 * - `maxConnections`: connections open at once, all peers together. Default: the process's open-file
 *   limit less a fifth of it (at least 256) for the masters, files and Next.js, at most 32,768
 *   (REDLOCK_MAX_CONNECTIONS).
 * - `maxPerPeer`: connections open at once from one address (REDLOCK_MAX_CONNECTIONS_PER_PEER,
 *   default 256). The addresses of trusted proxies named in REDLOCK_TRUST_PROXY (CIDR ranges)
 *   count only against the total: all their clients come through them.
 * - `anonymousIdleMs`: how long a connection that has not authenticated may sit idle, before its
 *   first request and between requests (10 s).
 * - `keepAliveMs`: the same for a connection on which a principal authenticated (65 s, longer
 *   than the usual 60 s of proxies and client pools, so a reused connection is not closed under
 *   a client's next request).
 * - `headersMs`: a request's head must arrive within this from its first byte (the lean path: its
 *   whole request, at most a few KiB) (20 s).
 * - `requestMs`: a request with its body, on Node's path (30 s).
 */
export interface ConnectionLimits {
  maxConnections: number;
  maxPerPeer: number;
  anonymousIdleMs: number;
  keepAliveMs: number;
  headersMs: number;
  requestMs: number;
  /** True for a peer address exempt from the per-peer cap (a trusted proxy). */
  exempt(address: string): boolean;
}

export const CONNECTION_DEFAULTS = Object.freeze({
  maxPerPeer: 256,
  anonymousIdleMs: 10_000,
  keepAliveMs: 65_000,
  headersMs: 20_000,
  requestMs: 30_000,
});

/** The default total cap for an open-file limit of `nofile` (unknown: 4,096). */
export function defaultMaxConnections(nofile: number | null): number {
  if (nofile === null || !Number.isFinite(nofile)) return 4_096;
  return Math.max(64, Math.min(32_768, nofile - Math.max(256, Math.floor(nofile / 5))));
}

/** This process's soft open-file limit (Node raises it to the hard limit at start), null where /proc does not say. */
export function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!line) return null;
    return line[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line[1]);
  } catch {
    return null;
  }
}

/** The limits from the environment (see above), `overrides` on top (the tests scale them down). */
export function connectionLimits(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<ConnectionLimits> = {},
): ConnectionLimits {
  const nofile = openFileLimit();
  const trust = parseTrustProxy(env.REDLOCK_TRUST_PROXY);
  const exempt =
    trust.kind === 'cidrs'
      ? (address: string) => {
          const family = isIP(address);
          return family !== 0 && trust.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
        }
      : () => false;
  const limits: ConnectionLimits = {
    maxConnections: count(env, 'REDLOCK_MAX_CONNECTIONS', defaultMaxConnections(nofile)),
    maxPerPeer: count(env, 'REDLOCK_MAX_CONNECTIONS_PER_PEER', CONNECTION_DEFAULTS.maxPerPeer),
    anonymousIdleMs: CONNECTION_DEFAULTS.anonymousIdleMs,
    keepAliveMs: CONNECTION_DEFAULTS.keepAliveMs,
    headersMs: CONNECTION_DEFAULTS.headersMs,
    requestMs: CONNECTION_DEFAULTS.requestMs,
    exempt,
    ...overrides,
  };
  if (limits.headersMs > limits.requestMs) throw new ConfigError('the headers timeout must not be longer than the request timeout');
  return limits;
}

function count(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1)
    throw new ConfigError(`${name} must be a whole number of connections (1 or more), got "${raw}"`);
  return Number(raw);
}
