import { slotHistoryQuerySchema } from '@/lib/api/slot-history';
import { slotLockParamsSchema } from '@/lib/api/slot-locks';
import { route } from '@/lib/server/http/route';
import { readSlotHistory } from '@/lib/server/slot-history';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The history of some slots of a semaphore or read-write lock, merged, newest first (at most 16 slots a request). */
export const GET = route({ permission: 'read', params: slotLockParamsSchema, query: slotHistoryQuerySchema }, ({ params, query }) =>
  readSlotHistory(params.kind, params.resource, query.slots, query.limit),
);
