import { forceReleaseBodySchema, resourceParamsSchema } from '@/lib/api/locks';
import { forceRelease } from '@/lib/server/force-release';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route(
  { permission: 'operate', params: resourceParamsSchema, body: forceReleaseBodySchema },
  ({ principal, params, body }) => forceRelease(principal, params.resource, body),
);
