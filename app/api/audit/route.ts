import { auditQuerySchema } from '@/lib/api/audit';
import { readAudit } from '@/lib/server/audit';
import { auditToCsv } from '@/lib/server/audit-csv';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read', query: auditQuerySchema }, async ({ query }) => {
  const result = await readAudit(query);
  // Both exports are machine formats: JSON keeps `at` as epoch ms, CSV as ISO 8601 UTC (never the
  // screens' local-time format of components/ui/format.ts).
  if (query.format === 'json') return result;
  return new Response(auditToCsv(result.entries), {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="redlock-audit.csv"',
      'cache-control': 'no-store',
    },
  });
});
