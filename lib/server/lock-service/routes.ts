/**
 * The lock service's routes, the ones the lock-service process answers (and the console forwards
 * to it, lock-service/forward.ts):
 *
 *   POST /api/locks                            acquire a lock
 *   POST /api/locks/{resource}/extend          extend it by token
 *   POST /api/locks/{resource}/release         release it by token
 *   POST /api/semaphores                       acquire a semaphore permit
 *   POST /api/semaphores/{resource}/extend     extend a permit by token and slots
 *   POST /api/semaphores/{resource}/release    release a permit by token and slots
 *   POST /api/rwlocks/{resource}/read          acquire a read lock
 *   POST /api/rwlocks/{resource}/write         acquire the write lock
 *   POST /api/rwlocks/{resource}/extend        extend a read or write lock by token and slots
 *   POST /api/rwlocks/{resource}/release       release a read or write lock by token and slots
 *
 * Everything else under /api/locks (the inspection GETs, force-release) stays with Next.js. The
 * match is on the raw path, query ignored; `{resource}` is one path segment, percent-decoded once
 * (as Next.js decodes its params), so `a%2Fb` is the resource `a/b`.
 */
export type LockServiceRoute =
  | { kind: 'acquire' | 'semaphore-acquire' }
  | { kind: 'extend' | 'release'; resource: string }
  | { kind: 'semaphore-extend' | 'semaphore-release'; resource: string }
  | { kind: 'rw-read' | 'rw-write' | 'rw-extend' | 'rw-release'; resource: string }
  /** The path is the lock service's but its resource segment is not valid percent-encoding. */
  | { kind: 'bad-path'; message: string }
  /** …/extend or …/release with another method than POST (405; OPTIONS: 204), as Next.js answered them. */
  | { kind: 'wrong-method'; method: string };

/** A route with a resource in its path. */
type ResourceKind = Extract<LockServiceRoute, { resource: string }>['kind'];

/** Each root: the kind of a POST to the root itself (null: none), and the kind of each action after `/{resource}/`. */
interface Root {
  root: string;
  acquire: 'acquire' | 'semaphore-acquire' | null;
  actions: Readonly<Record<string, ResourceKind>>;
}
const ROOTS: readonly Root[] = Object.freeze<Root[]>([
  { root: '/api/locks', acquire: 'acquire', actions: { extend: 'extend', release: 'release' } },
  {
    root: '/api/semaphores',
    acquire: 'semaphore-acquire',
    actions: { extend: 'semaphore-extend', release: 'semaphore-release' },
  },
  { root: '/api/rwlocks', acquire: null, actions: { read: 'rw-read', write: 'rw-write', extend: 'rw-extend', release: 'rw-release' } },
]);

/** The routes above, as the API documents them (README's HTTP API table, the route list tests). */
export const LOCK_SERVICE_ROUTES: ReadonlyArray<{ method: 'POST'; pattern: string }> = Object.freeze(
  ROOTS.flatMap(({ root, acquire, actions }) => [
    ...(acquire ? [{ method: 'POST' as const, pattern: root }] : []),
    ...Object.keys(actions).map((action) => ({ method: 'POST' as const, pattern: `${root}/[resource]/${action}` })),
  ]),
);

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
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  for (const { root, acquire, actions } of ROOTS) {
    if (!path.startsWith(root)) continue;
    // GET /api/locks lists the locks (Next.js); nothing else answers the other roots.
    if (path === root) return acquire !== null && method === 'POST' ? { kind: acquire } : null;
    if (path.charCodeAt(root.length) !== 47 /* / */) continue;
    const rest = path.slice(root.length + 1);
    const slash = rest.indexOf('/');
    if (slash <= 0) return null;
    const action = rest.slice(slash + 1);
    if (!Object.hasOwn(actions, action)) return null;
    if (method !== 'POST') return { kind: 'wrong-method', method };
    try {
      return { kind: actions[action]!, resource: decodeURIComponent(rest.slice(0, slash)) };
    } catch {
      return { kind: 'bad-path', message: `the resource in the path is not valid percent-encoding: ${rest.slice(0, slash).slice(0, 80)}` };
    }
  }
  return null;
}
