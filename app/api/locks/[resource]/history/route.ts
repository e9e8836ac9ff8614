import { lockHistoryQuerySchema } from '@/lib/api/lock-history';
import { resourceParamsSchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { readLockHistory } from '@/lib/server/lock-history';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Who held the resource, for how long, through which key, and how each hold ended (newest first). */
export const GET = route({ permission: 'read', params: resourceParamsSchema, query: lockHistoryQuerySchema }, ({ params, query }) =>
  readLockHistory(params.resource, query.limit),
);
