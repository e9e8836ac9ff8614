import { runActionBodySchema, runActionParamsSchema } from '@/lib/api/scenarios';
import { route } from '@/lib/server/http/route';
import { runAction } from '@/lib/server/scenarios-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route(
  { permission: 'operate', params: runActionParamsSchema, body: runActionBodySchema },
  ({ principal, params, body }) => runAction(principal, params.action, body),
);
