import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { WriteResult } from '../masters';
import type { RevocationStore } from './session-store';

export const SESSION_COOKIE = 'rl_session';
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface SessionClaims {
  username: string;
  role: 'viewer' | 'operator';
  sid: string;
  csrf: string;
  expiresAt: number;
  /** When it was issued (ms): "sign out everywhere" refuses every session issued before it. */
  issuedAt: number;
  /** The user's credential stamp at sign-in: a changed password ends the session. */
  stamp: string;
}

/**
 * Sessions: an HS256-signed JWT (jose) in an httpOnly, SameSite=Strict cookie. The CSRF token lives
 * inside the signed claims, so it cannot be forged without the key. A signature is not enough to be
 * signed in: logout and "sign out everywhere" are recorded on the masters (RevocationStore), so
 * they hold after a restart and in every console process.
 */
/** A revocation made by this process: one session (`sid`), or every session of `username` issued until `before`. */
export type Revocation = { sid: string } | { username: string; before: number };

export class Sessions {
  private readonly revocationListeners = new Set<(r: Revocation) => void>();

  constructor(
    private readonly key: Uint8Array,
    private readonly store: RevocationStore,
    readonly ttlMs = DEFAULT_SESSION_TTL_MS,
  ) {}

  /** Hear this process's revocations at once (open event streams end with their session). */
  onRevoked(listener: (r: Revocation) => void): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
  }

  /** Is a session that was valid still valid (not revoked since, by any console process)? */
  async stillValid(session: { sid: string; username: string; issuedAt: number; expiresAt: number }): Promise<boolean> {
    return session.expiresAt > Date.now() && !(await this.store.isRevoked(session));
  }

  private notify(r: Revocation): void {
    for (const listener of this.revocationListeners) listener(r);
  }

  async issue(user: { username: string; role: 'viewer' | 'operator'; stamp: string }): Promise<{ token: string; claims: SessionClaims }> {
    const now = Date.now();
    const claims: SessionClaims = {
      username: user.username,
      role: user.role,
      sid: randomBytes(16).toString('base64url'),
      csrf: randomBytes(18).toString('base64url'),
      expiresAt: now + this.ttlMs,
      issuedAt: now,
      stamp: user.stamp,
    };
    const token = await new SignJWT({ role: claims.role, sid: claims.sid, csrf: claims.csrf, iatMs: claims.issuedAt, pv: claims.stamp })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.username)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(claims.expiresAt / 1000))
      .sign(this.key);
    return { token, claims };
  }

  /** The claims of a well-signed, unexpired session that was not revoked; else null. */
  async verify(token: string): Promise<SessionClaims | null> {
    let claims: SessionClaims;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      const { sub, role, sid, csrf, exp, iatMs, pv } = payload as {
        sub?: string;
        role?: string;
        sid?: string;
        csrf?: string;
        exp?: number;
        iatMs?: number;
        pv?: string;
      };
      if (!sub || (role !== 'viewer' && role !== 'operator') || !sid || !csrf || !exp || typeof iatMs !== 'number' || !pv) return null;
      claims = { username: sub, role, sid, csrf, expiresAt: exp * 1000, issuedAt: iatMs, stamp: pv };
    } catch {
      return null;
    }
    return (await this.store.isRevoked(claims)) ? null : claims;
  }

  /** Logout: this session is refused from now on, everywhere. */
  revoke(claims: Pick<SessionClaims, 'sid' | 'expiresAt'>): Promise<WriteResult> {
    const written = this.store.revoke(claims.sid, claims.expiresAt);
    this.notify({ sid: claims.sid });
    return written;
  }

  /** Sign out everywhere: every session of `username` issued until now is refused. */
  revokeAll(username: string): Promise<WriteResult> {
    const now = Date.now();
    const written = this.store.signOutEverywhere(username, now, this.ttlMs);
    this.notify({ username, before: now });
    return written;
  }
}

export function sessionCookie(token: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
