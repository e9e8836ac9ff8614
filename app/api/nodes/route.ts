import { route } from '@/lib/server/http/route';
import { listNodes } from '@/lib/server/nodes-service';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read' }, () => listNodes());
