import { acquireBodySchema, lockListQuerySchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { listLocks } from '@/lib/server/inspect-service';
import { acquireLock } from '@/lib/server/locks-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The quorum view of every lock, paged with a stable cursor. */
export const GET = route({ permission: 'read', query: lockListQuerySchema }, ({ query }) => listLocks(query));

/** The lock service: 200 with the grant, 409 when contended, 503 without a quorum. */
export const POST = route({ permission: 'lock', body: acquireBodySchema }, ({ req, principal, body }) =>
  acquireLock(principal, { ...body, resources: body.resources ?? [body.resource!] }, req.signal));
