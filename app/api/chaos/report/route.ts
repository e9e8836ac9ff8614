import { chaosReportPath, readLatestOrReference } from '@/lib/server/chaos-report-file';
import { notFound } from '@/lib/server/http/errors';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The latest chaos report (chaos/reports/latest.json, or REDLOCK_CHAOS_REPORT), else the shipped CI reference; 404 with a message when neither is there. */
export const GET = route({ permission: 'read' }, async () => {
  const read = await readLatestOrReference(chaosReportPath());
  if (!read.ok) throw notFound(read.message);
  return read.value;
});
