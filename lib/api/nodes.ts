import { QUARANTINE_CAUSES } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { FAULT_MODE_KINDS, type FaultModeKind } from '../faults/modes';

export const safetyVerdictSchema = z.object({
  level: z.enum(['ok', 'warn', 'unsafe']),
  reasons: z.array(z.string()),
});

export const quarantineSchema = z.object({
  state: z.enum(['clean', 'quarantined', 'unknown']),
  until: z.number().nullable(),
  remainingMs: z.number().nullable(),
  origin: z.string().nullable(),
  /** Why it is quarantined: restart detected, data loss, keys evicted (null when clean or not recorded). */
  cause: z.enum(QUARANTINE_CAUSES).nullable(),
  /** The redis-server process the sentinel speaks for, and the one before it (a restart). */
  runId: z.string().nullable(),
  prevRunId: z.string().nullable(),
  serverStartedAt: z.number().nullable(),
  /** The sentinel's createdAt: send it back with runId to mark the node clean (a compare-and-set). */
  createdAt: z.number().nullable(),
  recordedMaxTtlMs: z.number().nullable(),
  /** The process changed and no client has recorded it yet: the next acquire starts the restart quarantine. */
  restartPending: z.boolean(),
  /** What marking it clean now would warn about (a restart or data loss within maxTtlMs), else null. */
  markCleanWarning: z.string().nullable(),
  message: z.string(),
});

/** A vote the lock core refuses whatever the quarantine: an evicting maxmemory-policy, or another lease ceiling. */
export const refusalSchema = z.object({
  reason: z.enum(['unsafe-eviction', 'ceiling-mismatch']),
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
  /** INFO run_id of the redis-server process answering now. */
  runId: z.string().nullable(),
  role: z.string().nullable(),
  /** none | rdb | aof-always | aof-everysec | aof-no | aof | unknown */
  persistence: z.string().nullable(),
  maxmemoryPolicy: z.string().nullable(),
  notifyKeyspaceEvents: z.string().nullable(),
  uptimeMs: z.number().nullable(),
  quarantine: quarantineSchema.nullable(),
  /** Set when the lock core votes against this node whatever its quarantine (it is then not usable). */
  refusal: refusalSchema.nullable(),
  verdict: safetyVerdictSchema,
  /** Fault proxy mode in the sandbox (pass, blackhole, reset, latency), else null. */
  fault: z.enum(FAULT_MODE_KINDS as [FaultModeKind, ...FaultModeKind[]]).nullable(),
  faultDetail: z.string().nullable(),
  restartAt: z.number().nullable(),
  /** Sandbox: a down node stopped gracefully with this persistence; started again with the same one, its restart is adopted (it votes at once). */
  resumable: z.string().nullable(),
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

/**
 * Which console drives the sandbox supervisor's node actions (one at a time across the consoles on
 * these masters: the first that acts takes the lease and keeps it while it runs). `self`: this
 * console; otherwise its process and network actions are refused with 409 naming that one.
 */
export const actionsBySchema = z.object({
  instance: z.string(),
  what: z.string(),
  since: z.number(),
  self: z.boolean(),
});
export type ActionsBy = z.infer<typeof actionsBySchema>;

export const nodesResponseSchema = z.object({
  mode: z.enum(['sandbox', 'external', 'unconfigured']),
  /** Sandbox only: the console that drives the node actions; null when none does yet (the first to act will) or not a sandbox. */
  actionsBy: actionsBySchema.nullable(),
  readAt: z.number(),
  quorum: z.number().int(),
  maxTtlMs: z.number(),
  verdict: clusterVerdictSchema,
  nodes: z.array(nodeViewSchema),
  problem: z.string().nullable(),
});
export type NodesResponse = z.infer<typeof nodesResponseSchema>;

/** A node id in a path: decimal digits only (`0x2`, `2e0`, ` 2` or `02` name no node), 1–15. */
export const nodeIdParamsSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[1-9][0-9]?$/, 'node ids are whole numbers written in decimal, from 1')
    .transform(Number)
    .pipe(z.number().int().max(15, 'node ids go up to 15')),
});

/**
 * The sentinel the operator judged (quarantine.runId and quarantine.createdAt of GET /api/nodes):
 * the mark applies only if the node still has exactly that one (409 SENTINEL_CHANGED otherwise).
 * runId null: the node had no sentinel.
 */
export const seenSentinelSchema = z.strictObject({
  runId: z
    .string()
    .regex(/^[0-9a-f]{1,64}$/, 'a redis run_id (hex)')
    .nullable(),
  createdAt: z.number().int().min(0).optional(),
});

export type SeenSentinel = z.infer<typeof seenSentinelSchema>;

export const markCleanBodySchema = z.strictObject({
  reason: z.string().trim().min(3, 'say why (at least 3 characters)').max(500),
  /** What the operator saw; omit only from scripts that accept marking whatever the node has now. */
  seen: seenSentinelSchema.optional(),
});

export const markCleanResponseSchema = z.object({
  node: z.number().int(),
  markedAt: z.number(),
  /** The process the clean sentinel now speaks for. */
  runId: z.string().nullable(),
  /** Set when a restart or data loss happened less than maxTtl ago (or when is unknown): locks it lost may still be valid elsewhere. */
  warning: z.string().nullable(),
});
