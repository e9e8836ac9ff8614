import { markCleanBodySchema, nodeIdParamsSchema } from '@/lib/api/nodes';
import { route } from '@/lib/server/http/route';
import { markClean } from '@/lib/server/node-actions-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'operate', params: nodeIdParamsSchema, body: markCleanBodySchema }, ({ principal, params, body }) =>
  markClean(principal, params.id, body.reason, body.seen),
);
