import { z } from 'zod';
import { resourceSchema } from './common';

/** One server-sent event on GET /api/events (`event:` is the type, `data:` this JSON). */
export const liveEventSchema = z.object({
  type: z.enum([
    'lock.granted',
    'lock.extended',
    'lock.released',
    'lock.expired',
    'lock.force-released',
    'lock.burst',
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
  /**
   * `lock.burst` only: more lock changes in one batch window than a stream lists one by one
   * (STREAM_BURST_AT): how many of each type, and some of the resources they were on. A stream
   * that follows one resource (`?resource=`) is never sent bursts: it gets that resource's events.
   */
  counts: z.record(z.string(), z.number().int().nonnegative()).optional(),
  resources: z.array(z.string()).optional(),
  /**
   * Another console on the same masters did it (its REDLOCK_INSTANCE): a `service` event that
   * crossed between the replicas. Absent on this console's own events and on the masters' reports.
   */
  instance: z.string().max(64).optional(),
  /** 'notifications' (keyspace events) or 'polling' (CONFIG refused) or 'service' (a console did it: this one, or `instance`). */
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

/** The most lock changes a batch window lists one by one to a stream; more become one `lock.burst`. */
export const STREAM_BURST_AT = 64;
/** How many resources a `lock.burst` names. */
export const BURST_RESOURCES = 20;

/** GET /api/events: all changes, or (`resource`) the changes of one lock and of the nodes, never summarised. */
export const eventsQuerySchema = z.strictObject({
  resource: resourceSchema.optional().describe('follow this one lock: its changes one by one, never summarised, and the nodes'),
});
