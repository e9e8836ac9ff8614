import { eventsQuerySchema } from '@/lib/api/events';
import { eventStream } from '@/lib/server/events/stream';
import { route } from '@/lib/server/http/route';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * Server-sent events: lock and node changes as they happen (`?resource=`: one lock's and the
 * nodes'); a comment every 15 s keeps proxies open.
 */
export const GET = route({ permission: 'read', query: eventsQuerySchema }, async ({ req, principal, query }) =>
  eventStream(req, principal, query.resource),
);
