import { slotLockParamsSchema } from '@/lib/api/slot-locks';
import { route } from '@/lib/server/http/route';
import { getSlotLock } from '@/lib/server/slot-inspect-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read', params: slotLockParamsSchema }, ({ params }) => getSlotLock(params.kind, params.resource));
