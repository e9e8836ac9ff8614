import { route } from '@/lib/server/http/route';
import { apiKeyUsage } from '@/lib/server/quotas';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Each configured API key's use of the lock service against its quotas, in this console process. */
export const GET = route({ permission: 'read' }, async () => apiKeyUsage());
