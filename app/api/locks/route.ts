import { acquireBodySchema, lockListQuerySchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { listLocks } from '@/lib/server/inspect-service';
import { acquireLock } from '@/lib/server/locks-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * The quorum view of every lock, paged with a stable cursor. With `pattern`, values of keys that
 * are not the console's locks are shown raw to operators only (viewers get fingerprints).
 */
export const GET = route({ permission: 'read', query: lockListQuerySchema }, ({ query, principal }) =>
  listLocks(query, principal.kind === 'session' && principal.role === 'operator' ? 'raw' : 'fingerprint'),
);

/** The lock service: 200 with the grant, 409 when contended, 503 without a quorum. */
export const POST = route({ permission: 'lock', body: acquireBodySchema }, ({ req, principal, body }) =>
  acquireLock(principal, { ...body, resources: body.resources ?? [body.resource!] }, req.signal),
);
