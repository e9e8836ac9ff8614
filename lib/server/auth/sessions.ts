import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

export const SESSION_COOKIE = 'rl_session';
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface SessionClaims { username: string; role: 'viewer' | 'operator'; sid: string; csrf: string; expiresAt: number }

/**
 * Stateless sessions: an HS256-signed JWT (jose) in an httpOnly, SameSite=Strict cookie. The CSRF
 * token lives inside the signed claims, so it cannot be forged without the key; logout revokes the
 * session id until it would have expired anyway.
 */
export class Sessions {
  private readonly revoked = new Map<string, number>();

  constructor(private readonly key: Uint8Array, private readonly ttlMs = DEFAULT_SESSION_TTL_MS) {}

  async issue(user: { username: string; role: 'viewer' | 'operator' }): Promise<{ token: string; claims: SessionClaims }> {
    const claims: SessionClaims = {
      username: user.username, role: user.role,
      sid: randomBytes(12).toString('base64url'), csrf: randomBytes(18).toString('base64url'),
      expiresAt: Date.now() + this.ttlMs,
    };
    const token = await new SignJWT({ role: claims.role, sid: claims.sid, csrf: claims.csrf })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.username)
      .setIssuedAt()
      .setExpirationTime(Math.floor(claims.expiresAt / 1000))
      .sign(this.key);
    return { token, claims };
  }

  async verify(token: string): Promise<SessionClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      const { sub, role, sid, csrf, exp } = payload as { sub?: string; role?: string; sid?: string; csrf?: string; exp?: number };
      if (!sub || (role !== 'viewer' && role !== 'operator') || !sid || !csrf || !exp) return null;
      if (this.revoked.has(sid)) return null;
      return { username: sub, role, sid, csrf, expiresAt: exp * 1000 };
    } catch {
      return null;
    }
  }

  revoke(claims: SessionClaims): void {
    const now = Date.now();
    for (const [sid, until] of this.revoked) if (until < now) this.revoked.delete(sid);
    this.revoked.set(claims.sid, claims.expiresAt);
  }
}

export function sessionCookie(token: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [`${SESSION_COOKIE}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ['Secure'] : [])].join('; ');
}

export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
