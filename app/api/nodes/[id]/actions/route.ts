import { nodeActionSchema } from '@/lib/api/node-actions';
import { nodeIdParamsSchema } from '@/lib/api/nodes';
import { route } from '@/lib/server/http/route';
import { runNodeAction } from '@/lib/server/node-actions-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'operate', params: nodeIdParamsSchema, body: nodeActionSchema }, ({ principal, params, body }) =>
  runNodeAction(principal, params.id, body),
);
