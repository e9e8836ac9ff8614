import { releaseBodySchema, resourceParamsSchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { releaseLock } from '@/lib/server/locks-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'lock', params: resourceParamsSchema, body: releaseBodySchema }, ({ params, body }) =>
  releaseLock(params.resource, body),
);
