import { HISTORY_TIERS, historyQuerySchema } from '@/lib/api/history';
import { grantCounting } from '@/lib/server/grants-seen';
import { readHistory } from '@/lib/server/history';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The rolling windows behind the overview's charts: 1 s buckets for 10 minutes, 1 min buckets for 24 hours. */
export const GET = route({ permission: 'read', query: historyQuerySchema }, async ({ query }) => {
  const resolution = query.resolution ?? '1s';
  return { resolutionMs: HISTORY_TIERS[resolution].bucketMs, grants: grantCounting(), buckets: readHistory(resolution, query.since) };
});
