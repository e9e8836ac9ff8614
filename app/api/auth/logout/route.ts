import { logoutBodySchema } from '@/lib/api/auth';
import { logout } from '@/lib/server/auth-service';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'read', body: logoutBodySchema }, ({ req, principal, body }) => logout(req, principal, body));
