import { z } from 'zod';

/** One server-sent event on GET /api/events (`event:` is the type, `data:` this JSON). */
export const liveEventSchema = z.object({
  type: z.enum([
    'lock.granted',
    'lock.extended',
    'lock.released',
    'lock.expired',
    'lock.force-released',
    'node.up',
    'node.down',
    'node.quarantined',
    'node.action',
  ]),
  at: z.number(),
  resource: z.string().optional(),
  /** Nodes (1-based) the change was seen on, within the grouping window. */
  nodes: z.array(z.number().int()).optional(),
  node: z.number().int().optional(),
  detail: z.string().optional(),
  /** 'notifications' (keyspace events) or 'polling' (CONFIG refused) or 'service' (this console did it). */
  source: z.enum(['notifications', 'polling', 'service']),
});
export type LiveEvent = z.infer<typeof liveEventSchema>;

/**
 * The stream's own control events (not in liveEventSchema): `event: resync` when the stream fell
 * too far behind (it is then closed: reconnect and read the current state), `event: session-ended`
 * when the session was revoked or expired (closed too). Their `data` is this JSON. (A `: connected`
 * comment line says the subscriptions are in place: no event after it is lost.)
 */
export const STREAM_CONTROL_EVENTS = ['resync', 'session-ended'] as const;
export type StreamControlEvent = (typeof STREAM_CONTROL_EVENTS)[number];
export const streamControlDataSchema = z.object({ reason: z.string().optional() }).loose();
