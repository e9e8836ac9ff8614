import { eventStream } from '@/lib/server/events/stream';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** Server-sent events: lock and node changes as they happen; a comment every 15 s keeps proxies open. */
export const GET = route({ permission: 'read' }, async ({ req, principal }) => eventStream(req, principal));
