import { route } from '@/lib/server/http/route';
import { currentRun } from '@/lib/server/scenarios-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read' }, async () => currentRun());
