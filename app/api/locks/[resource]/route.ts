import { resourceParamsSchema } from '@/lib/api/locks';
import { route } from '@/lib/server/http/route';
import { getLock } from '@/lib/server/inspect-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read', params: resourceParamsSchema }, ({ params }) => getLock(params.resource));
