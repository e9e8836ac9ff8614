import { lockServiceLogQuerySchema } from '@/lib/api/lock-history';
import { route } from '@/lib/server/http/route';
import { readLockServiceLog } from '@/lib/server/lock-history';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Every grant, extend, release and force-release across resources, newest first; `principal` narrows to one key or user. */
export const GET = route({ permission: 'read', query: lockServiceLogQuerySchema }, ({ query }) => readLockServiceLog(query));
