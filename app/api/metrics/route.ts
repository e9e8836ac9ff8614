import { route } from '@/lib/server/http/route';
import { refreshLockMetrics } from '@/lib/server/inspect-service';
import { metrics } from '@/lib/server/metrics';
import { listNodes } from '@/lib/server/nodes-service';
import { refreshQuotaMetrics } from '@/lib/server/quotas';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Prometheus text. Node and lock gauges are refreshed by this scrape (from at most 1 s old reads). */
export const GET = route({ permission: 'metrics' }, async () => {
  await Promise.allSettled([listNodes(), refreshLockMetrics()]);
  refreshQuotaMetrics();
  const { registry } = metrics();
  return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
});
