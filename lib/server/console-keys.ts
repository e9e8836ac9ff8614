import 'server-only';
import { createHash } from 'node:crypto';
import { getRuntime } from './runtime';

/**
 * Every key the console itself keeps on the masters (beside the lock core's own `lock:`, `meta:`,
 * `epoch`, `fence`), named here and nowhere else. All live under the lock core's prefix, outside
 * its `lock:` namespace, so the scanner, the live index and the chaos harness's leak check never
 * see them as locks. Names and addresses that come from a client are hashed: keys stay short,
 * and nothing a client typed becomes part of a key.
 *
 * | key | type | what |
 * |---|---|---|
 * | `<p>audit` | stream | the audit log of signed-in principals (capped), written to every master |
 * | `<p>audit:login-failures` | stream | failed logins, one entry per address + username + window (capped apart) |
 * | `<p>audit:viewer-sessions` | stream | viewers' sign-ins and sign-outs (capped apart from the operators' stream) |
 * | `<p>console:session:<sid>:revoked` | string | a logged-out session, PX = until it would have expired |
 * | `<p>console:user:<h(user)>:not-before` | string | "sign out everywhere": sessions issued before this ms are refused |
 * | `<p>console:login:<scope>:<h(…)>` | string / hash | login throttling counters (see auth/login-throttle.ts) |
 * | `<p>console:audit:login-failed:<h(addr, user)>:<window>` | hash | that entry's counts (failed, refused), first and last |
 * | `<p>console:audit:login-failed:<h(addr)>:<window>:users` | set | usernames tried from an address in a window (folded past 10) |
 * | `<p>lock-history` | stream | the lock history of every resource (capped), written to a majority of the masters |
 * | `<p>console:lock-history:p:<h(principal)>` | stream | one principal's history (capped, a week) |
 * | `<p>console:lock-history:r:<h(resource)>:p:<h(principal)>` | stream | one resource's history by one principal (capped short, a week) |
 * | `<p>console:lock-history:r:<h(resource)>` | sorted set | that resource's streams, one per principal, by last write |
 * | `<p>console:lock-history:p:<h(principal)>:resources` | sorted set | that principal's resource streams by last write (its least recent dropped past its bound) |
 * | `<p>console:lease:<name>` | string | a lease one console process holds among the replicas (`scenario-run`, `sandbox-supervisor`; console-lease.ts) |
 * | `<p>console:quota-usage` | hash | each console process's API-key use, one field per process (quotas/shared-usage.ts) |
 * | `<p>console:events` | pub/sub channel | the events a console publishes itself, for the other replicas' streams (events/replica-bus.ts) |
 */
export interface ConsoleKeys {
  audit: string;
  auditLoginFailures: string;
  auditViewerSessions: string;
  sessionRevoked(sid: string): string;
  userNotBefore(username: string): string;
  login(scope: string, ...parts: string[]): string;
  failedLoginWindow(parts: string[], window: number): string;
  failedLoginUsers(address: string, window: number): string;
  lockHistory: string;
  /** One principal's history (every resource). */
  lockHistoryOfPrincipal(principal: string): string;
  /** One resource's streams (one per principal that wrote it). */
  lockHistoryOfResource(resource: string): string;
  /** One resource's history by one principal. */
  lockHistoryOf(principal: string, resource: string): string;
  /** One principal's resource streams, by last write. */
  lockHistoryResourcesOf(principal: string): string;
  /** A lease among the console replicas (one scenario run at a time, the sandbox supervisor's owner). */
  lease(name: 'scenario-run' | 'sandbox-supervisor'): string;
  /** Every console process's API-key use (one field per process). */
  quotaUsage: string;
  /** The channel the consoles' own events cross between replicas on. */
  events: string;
}

export function consoleKeys(prefix: string = getRuntime().keyPrefix): ConsoleKeys {
  const c = `${prefix}console:`;
  return {
    audit: `${prefix}audit`,
    auditLoginFailures: `${prefix}audit:login-failures`,
    auditViewerSessions: `${prefix}audit:viewer-sessions`,
    sessionRevoked: (sid) => `${c}session:${sid}:revoked`,
    userNotBefore: (username) => `${c}user:${digest(username)}:not-before`,
    login: (scope, ...parts) => `${c}login:${scope}:${digest(...parts)}`,
    failedLoginWindow: (parts, window) => `${c}audit:login-failed:${digest(...parts)}:${window}`,
    failedLoginUsers: (address, window) => `${c}audit:login-failed:${digest(address)}:${window}:users`,
    lockHistory: `${prefix}lock-history`,
    lockHistoryOfPrincipal: (principal) => `${c}lock-history:p:${digest(principal)}`,
    lockHistoryOfResource: (resource) => `${c}lock-history:r:${digest(resource)}`,
    lockHistoryOf: (principal, resource) => `${c}lock-history:r:${digest(resource)}:p:${digest(principal)}`,
    lockHistoryResourcesOf: (principal) => `${c}lock-history:p:${digest(principal)}:resources`,
    lease: (name) => `${c}lease:${name}`,
    quotaUsage: `${c}quota-usage`,
    events: `${c}events`,
  };
}

/** A short, unambiguous digest of client-supplied strings (joined with a separator they cannot contain). */
export function digest(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(Buffer.from(p, 'utf8').toString('base64')).update('\0');
  return h.digest('base64url').slice(0, 24);
}
