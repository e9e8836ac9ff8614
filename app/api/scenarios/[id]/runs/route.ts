import { scenarioParamsSchema, startRunBodySchema } from '@/lib/api/scenarios';
import { route } from '@/lib/server/http/route';
import { startRun } from '@/lib/server/scenarios-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route(
  { permission: 'operate', params: scenarioParamsSchema, body: startRunBodySchema },
  async ({ principal, params, body }) => startRun(principal, params.id, body),
);
