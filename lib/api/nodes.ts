import { z } from 'zod';

export const safetyVerdictSchema = z.object({
  level: z.enum(['ok', 'warn', 'unsafe']),
  reasons: z.array(z.string()),
});

export const quarantineSchema = z.object({
  state: z.enum(['clean', 'quarantined', 'unknown']),
  until: z.number().nullable(),
  remainingMs: z.number().nullable(),
  origin: z.string().nullable(),
  message: z.string(),
});

/** GET /api/nodes — one entry per configured master, in configuration order. */
export const nodeViewSchema = z.object({
  id: z.number().int(),
  /** host:port clients use (never carries credentials). */
  label: z.string(),
  port: z.number().int(),
  /** Is it answering through the same path the lock clients use? */
  up: z.boolean(),
  /** Up, a master, not quarantined: its vote can count. */
  usable: z.boolean(),
  /** Supervisor's view of the process (sandbox only). */
  process: z.enum(['starting', 'up', 'paused', 'stopping', 'down']).nullable(),
  rttMs: z.number().nullable(),
  clockOffsetMs: z.number().nullable(),
  version: z.string().nullable(),
  role: z.string().nullable(),
  /** none | rdb | aof-always | aof-everysec | aof-no | aof | unknown */
  persistence: z.string().nullable(),
  maxmemoryPolicy: z.string().nullable(),
  notifyKeyspaceEvents: z.string().nullable(),
  uptimeMs: z.number().nullable(),
  quarantine: quarantineSchema.nullable(),
  verdict: safetyVerdictSchema,
  /** Fault proxy mode in the sandbox (pass, blackhole, reset, latency), else null. */
  fault: z.string().nullable(),
  faultDetail: z.string().nullable(),
  restartAt: z.number().nullable(),
  error: z.string().nullable(),
  /** Local time at which this node was read. */
  checkedAt: z.number(),
});
export type NodeView = z.infer<typeof nodeViewSchema>;

export const clusterVerdictSchema = z.object({
  canGrant: z.boolean(),
  usable: z.number().int(),
  up: z.number().int(),
  configuredNodes: z.number().int(),
  quorum: z.number().int(),
  grantableInMs: z.number().nullable(),
  reasons: z.array(z.string()),
});

export const nodesResponseSchema = z.object({
  mode: z.enum(['sandbox', 'external', 'unconfigured']),
  readAt: z.number(),
  quorum: z.number().int(),
  maxTtlMs: z.number(),
  verdict: clusterVerdictSchema,
  nodes: z.array(nodeViewSchema),
  problem: z.string().nullable(),
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
