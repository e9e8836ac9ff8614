import { historyQuerySchema } from '@/lib/api/history';
import { readHistory } from '@/lib/server/history';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The rolling window behind the overview's charts (one bucket per second, 10 minutes). */
export const GET = route({ permission: 'read', query: historyQuerySchema }, async ({ query }) => ({ buckets: readHistory(query.since) }));
