import { extendBodySchema, resourceParamsSchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { extendLock } from '@/lib/server/locks-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'lock', params: resourceParamsSchema, body: extendBodySchema }, ({ params, body }) =>
  extendLock(params.resource, body),
);
