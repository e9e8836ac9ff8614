import { z } from 'zod';

/** GET /api/nodes — one entry per configured master, in configuration order. */
export const nodeViewSchema = z.object({
  id: z.number().int(),
  /** host:port clients use (never carries credentials). */
  label: z.string(),
  port: z.number().int(),
  /** Is it answering PING through the same path the lock clients use? */
  up: z.boolean(),
  /** Supervisor's view of the process (sandbox only): up, paused, down, starting, stopping. */
  process: z.enum(['starting', 'up', 'paused', 'stopping', 'down']).nullable(),
  rttMs: z.number().nullable(),
  persistence: z.string().nullable(),
  uptimeMs: z.number().nullable(),
  /** Fault proxy mode in the sandbox (pass, blackhole, reset, latency), else null. */
  fault: z.string().nullable(),
  restartAt: z.number().nullable(),
  error: z.string().nullable(),
});
export type NodeView = z.infer<typeof nodeViewSchema>;

export const nodesResponseSchema = z.object({
  mode: z.enum(['sandbox', 'external', 'unconfigured']),
  readAt: z.number(),
  quorum: z.number().int(),
  nodes: z.array(nodeViewSchema),
});
export type NodesResponse = z.infer<typeof nodesResponseSchema>;

/** POST /api/nodes/{id}/actions — the same contract the supervisor's control channel accepts. */
export { nodeActionSchema, NODE_ACTION_NAMES, type NodeAction } from '../cluster/actions';

export const nodeIdParamsSchema = z.strictObject({
  id: z.coerce.number().int('node ids are whole numbers').min(1).max(15),
});

export const markCleanBodySchema = z.strictObject({
  reason: z.string().trim().min(3, 'say why (at least 3 characters)').max(500),
});

export const markCleanResponseSchema = z.object({
  node: z.number().int(),
  markedAt: z.number(),
  /** Set when the node restarted less than maxTtl ago: it may have lost locks that are still valid elsewhere. */
  warning: z.string().nullable(),
});
