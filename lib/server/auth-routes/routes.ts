/**
 * Sign-in and sign-out, answered before Next.js (handler.ts), as the API documents them (README's
 * HTTP API table, the route list tests):
 *
 *   POST /api/auth/login    anyone: username and password → the session and device cookies
 *   POST /api/auth/logout   a session: revoke it (or every session of the user)
 *
 * Why before Next.js: a login is the one route anyone may send at any rate, and through Next.js
 * even a refused one cost several milliseconds of the event loop the lock service answers on
 * (100 refused logins a second moved the lock service's p50 from 5 to 50 ms). The match
 * is on the raw path, query ignored (neither route reads one). Nothing here touches the server's
 * state: the tests' harness imports it before it sets the environment.
 */
export type AuthRoute =
  | { kind: 'login' | 'logout' }
  /** Another method than POST (405; OPTIONS: 204), as Next.js answered them. */
  | { kind: 'wrong-method'; method: string };

const PATHS: Readonly<Record<string, 'login' | 'logout'>> = Object.freeze({ '/api/auth/login': 'login', '/api/auth/logout': 'logout' });

export const AUTH_ROUTES: ReadonlyArray<{ method: 'POST'; pattern: string }> = Object.freeze(
  Object.keys(PATHS).map((pattern) => ({ method: 'POST' as const, pattern })),
);

/** The sign-in route of a request, or null when it is not one (another route answers it). */
export function matchAuthRoute(method: string | undefined, url: string | undefined): AuthRoute | null {
  if (!method || !url) return null;
  // The absolute form (`POST http://host/api/auth/login HTTP/1.1`, sent to proxies) names the same path.
  if (url.charCodeAt(0) !== 47 /* / */) {
    try {
      url = new URL(url).pathname;
    } catch {
      return null;
    }
  }
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (!Object.hasOwn(PATHS, path)) return null;
  const kind = PATHS[path]!;
  return method === 'POST' ? { kind } : { kind: 'wrong-method', method };
}
