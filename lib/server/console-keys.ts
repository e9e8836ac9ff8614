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
 * | `<p>lock-history` | stream | the lock history of every resource (capped), written to every master |
 * | `<p>console:lock-history:<h(resource)>` | stream | one resource's history (capped short, expires a week after its last entry) |
 * | `<p>console:lock-history:index` | sorted set | the resource streams by last write (the least recent dropped past 2,000) |
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
  lockHistoryOf(resource: string): string;
  lockHistoryIndex: string;
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
    lockHistoryOf: (resource) => `${c}lock-history:${digest(resource)}`,
    lockHistoryIndex: `${c}lock-history:index`,
  };
}

/** A short, unambiguous digest of client-supplied strings (joined with a separator they cannot contain). */
export function digest(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(Buffer.from(p, 'utf8').toString('base64')).update('\0');
  return h.digest('base64url').slice(0, 24);
}
