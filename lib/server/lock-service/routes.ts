/**
 * The lock service's routes, the ones the fast path answers before Next.js sees the request:
 *
 *   POST /api/locks                        acquire
 *   POST /api/locks/{resource}/extend      extend
 *   POST /api/locks/{resource}/release     release
 *
 * Everything else under /api/locks (the inspection GETs, force-release) stays with Next.js. The
 * match is on the raw path, query ignored; `{resource}` is one path segment, percent-decoded once
 * (as Next.js decodes its params), so `a%2Fb` is the resource `a/b`.
 */
export type LockServiceRoute =
  | { kind: 'acquire' }
  | { kind: 'extend' | 'release'; resource: string }
  /** The path is the lock service's but its resource segment is not valid percent-encoding. */
  | { kind: 'bad-path'; message: string }
  /** …/extend or …/release with another method than POST (405; OPTIONS: 204), as Next.js answered them. */
  | { kind: 'wrong-method'; method: string };

const ROOT = '/api/locks';

/** The routes above, as the API documents them (README's HTTP API table, the route list tests). */
export const LOCK_SERVICE_ROUTES: ReadonlyArray<{ method: 'POST'; pattern: string }> = Object.freeze([
  { method: 'POST', pattern: '/api/locks' },
  { method: 'POST', pattern: '/api/locks/[resource]/extend' },
  { method: 'POST', pattern: '/api/locks/[resource]/release' },
]);

/** The lock service route of a request, or null when it is not one (Next.js answers it). */
export function matchLockService(method: string | undefined, url: string | undefined): LockServiceRoute | null {
  if (!method || !url) return null;
  // The absolute form (`POST http://host/api/locks HTTP/1.1`, sent to proxies) names the same path.
  if (url.charCodeAt(0) !== 47 /* / */) {
    try {
      url = new URL(url).pathname;
    } catch {
      return null;
    }
  }
  if (!url.startsWith(ROOT)) return null;
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (path === ROOT) return method === 'POST' ? { kind: 'acquire' } : null; // GET lists the locks (Next.js)
  if (path.charCodeAt(ROOT.length) !== 47 /* / */) return null;
  const rest = path.slice(ROOT.length + 1);
  const slash = rest.indexOf('/');
  if (slash <= 0) return null;
  const action = rest.slice(slash + 1);
  if (action !== 'extend' && action !== 'release') return null;
  if (method !== 'POST') return { kind: 'wrong-method', method };
  try {
    return { kind: action, resource: decodeURIComponent(rest.slice(0, slash)) };
  } catch {
    return { kind: 'bad-path', message: `the resource in the path is not valid percent-encoding: ${rest.slice(0, slash).slice(0, 80)}` };
  }
}
