import { loginBodySchema } from '@/lib/api/auth';
import { login } from '@/lib/server/auth-service';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const POST = route({ permission: 'public', body: loginBodySchema }, ({ req, body }) => login(req, body.username, body.password));
