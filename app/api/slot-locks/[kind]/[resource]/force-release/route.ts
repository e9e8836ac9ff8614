import { slotForceReleaseBodySchema, slotLockParamsSchema } from '@/lib/api/slot-locks';
import { forceReleaseSlot } from '@/lib/server/force-release-slot';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Operators only (session CSRF checked by route()): one permit's slot, or one read-write lock holder, by the token seen. */
export const POST = route(
  { permission: 'operate', params: slotLockParamsSchema, body: slotForceReleaseBodySchema },
  ({ principal, params, body }) => forceReleaseSlot(principal, params.kind, params.resource, body),
);
