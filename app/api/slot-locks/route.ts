import { slotLockListQuerySchema } from '@/lib/api/slot-locks';
import { route } from '@/lib/server/http/route';
import { listSlotLocks } from '@/lib/server/slot-inspect-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Every semaphore and read-write lock on the masters, per quorum (a scan shared for 1 s). */
export const GET = route({ permission: 'read', query: slotLockListQuerySchema }, ({ query }) => listSlotLocks(query));
