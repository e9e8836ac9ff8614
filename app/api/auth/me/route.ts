import { me } from '@/lib/server/auth-service';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = route({ permission: 'read' }, async ({ principal }) => me(principal));
