import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

export const DEVICE_COOKIE = 'rl_device';
const DEVICE_TTL_MS = 180 * 24 * 60 * 60 * 1000;

/**
 * Trusted devices (OWASP's "device cookies"): a browser that signed in successfully as a user gets
 * a signed, httpOnly cookie naming that user and a random device id, sent only to the login route.
 * Its later login attempts for that user are limited per device instead of per address and skip
 * the username's slowdown, so strangers guessing that user's password, from the same address even,
 * cannot keep its owner out (auth/login-throttle.ts).
 */
export class Devices {
  constructor(private readonly key: Uint8Array) {}

  async issue(username: string, id = randomBytes(16).toString('base64url')): Promise<{ token: string; id: string; maxAgeSeconds: number }> {
    const token = await new SignJWT({ typ: 'device', did: id })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(username)
      .setExpirationTime(Math.floor((Date.now() + DEVICE_TTL_MS) / 1000))
      .sign(this.key);
    return { token, id, maxAgeSeconds: Math.floor(DEVICE_TTL_MS / 1000) };
  }

  async verify(token: string | null): Promise<{ username: string; id: string } | null> {
    if (!token) return null;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      const { sub, typ, did } = payload as { sub?: string; typ?: string; did?: string };
      return sub && typ === 'device' && did ? { username: sub, id: did } : null;
    } catch {
      return null;
    }
  }
}

export function deviceCookie(token: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${DEVICE_COOKIE}=${token}`,
    'Path=/api/auth/login',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
