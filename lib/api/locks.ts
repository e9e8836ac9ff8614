import { LIMITS, VOTE_REASONS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { LOCK_STATES } from '../inspect/quorum-view';
import { resourceSchema } from './common';

/** A lock token as the lock core takes it (packages/redlock/src/validate.ts checkToken): 1-256 characters, no space (a lock value is "<token> <metadata>"). */
export const lockTokenSchema = z
  .string()
  .min(1)
  .max(256)
  .refine((t) => !t.includes(' '), 'a token never holds a space (a lock value is "<token> <metadata>")');

export { LOCK_STATES };
export const lockStateSchema = z.enum(LOCK_STATES);

export const lockCellSchema = z.object({
  node: z.number().int(),
  known: z.boolean(),
  present: z.boolean(),
  token: z.string().nullable(),
  pttlMs: z.number().nullable(),
  meta: z.record(z.string(), z.string()).nullable(),
});

/** One resource across every node: the row of the quorum matrix. */
export const lockViewSchema = z.object({
  resource: z.string(),
  key: z.string(),
  cells: z.array(lockCellSchema),
  state: lockStateSchema,
  majorityToken: z.string().nullable(),
  holders: z.number().int(),
  tokens: z.number().int(),
  quorum: z.number().int(),
  validityMs: z.number().nullable(),
  fence: z.number().nullable(),
  meta: z.record(z.string(), z.string()).nullable(),
  noTtlNodes: z.array(z.number().int()).readonly(),
  /** Nodes whose key has a PTTL above the cluster's lease ceiling (a client that does not keep it). */
  overCeilingNodes: z.array(z.number().int()).readonly(),
  unknownNodes: z.array(z.number().int()).readonly(),
});
export type LockView = z.infer<typeof lockViewSchema>;

const stateList = z.string().transform((value, ctx) => {
  const states = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of states) {
    if (!(LOCK_STATES as readonly string[]).includes(s)) {
      ctx.addIssue({ code: 'custom', message: `unknown state "${s}" (use ${LOCK_STATES.join(', ')})` });
      return z.NEVER;
    }
  }
  return states as Array<(typeof LOCK_STATES)[number]>;
});

/** GET /api/locks?prefix=&state=&search=&cursor=&limit=&pattern= */
export const lockListQuerySchema = z.strictObject({
  prefix: z.string().max(512).optional(),
  state: stateList.optional(),
  search: z.string().max(256).optional(),
  cursor: z.string().max(2048).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  /** A glob to scan instead of `<prefix>lock:*` (e.g. keys another Redlock library wrote). */
  pattern: z.string().min(1).max(512).optional(),
  /** Re-scan now instead of using a snapshot up to 1 s old. */
  fresh: z.enum(['0', '1']).optional(),
  /**
   * A first page (no cursor) that does not wait for a long scan: after ~100 ms it answers with the
   * first locks found so far, each read directly on every node, and `complete: false`.
   */
  progressive: z.enum(['0', '1']).optional(),
});

export const snapshotNodeSchema = z.object({
  node: z.number().int(),
  ok: z.boolean(),
  error: z.string().nullable(),
  keys: z.number().int(),
  durationMs: z.number(),
  /** The scan stopped at its bound of keys on this node (a pattern read keeps at most 50,000 per master): narrow the pattern. */
  truncated: z.boolean().optional(),
});

export const lockListResponseSchema = z.object({
  readAt: z.number(),
  scanMs: z.number(),
  pattern: z.string(),
  quorum: z.number().int(),
  nodes: z.array(snapshotNodeSchema),
  stateCounts: z.record(lockStateSchema, z.number().int()),
  /** Locks with a key that never expires, and with a PTTL above the lease ceiling, whatever their state (counted like `stateCounts`). */
  flagCounts: z.object({ noTtl: z.number().int(), overCeiling: z.number().int() }),
  total: z.number().int(),
  matched: z.number().int(),
  items: z.array(lockViewSchema),
  nextCursor: z.string().nullable(),
  /**
   * False for a progressive first page answered while the scan was still running: its items are the
   * first locks found so far, each read directly on every node (so every row is exact), but locks
   * not reached yet may be missing; `total`, `matched`, `stateCounts` and the nodes' `keys` count
   * only what was found so far (`stateCounts`: the items), and `nextCursor` is null. Ask again
   * (without `fresh`) until it is true.
   */
  complete: z.boolean().default(true),
  /** Lock keys the scan has read so far, summed over the nodes (all of them when complete). */
  scannedKeys: z.number().int().default(0),
  /**
   * True when the keys of every node that could be read came from the console's live lock index (kept by keyspace
   * notifications: only the keys that changed were read again); false for a full scan (the first
   * read, a node without notifications, a node that lost its subscription). `scanMs` is either's time.
   */
  index: z.boolean().default(false),
});
export type LockListResponse = z.infer<typeof lockListResponseSchema>;

export const resourceParamsSchema = z.strictObject({ resource: resourceSchema });

export const lockDetailResponseSchema = z.object({
  readAt: z.number(),
  resource: z.string(),
  key: z.string(),
  view: lockViewSchema.nullable(),
  nodes: z.array(z.object({ node: z.number().int(), ok: z.boolean(), error: z.string().nullable(), type: z.string().nullable() })),
});
export type LockDetailResponse = z.infer<typeof lockDetailResponseSchema>;

export const voteSchema = z.object({
  node: z.number().int(),
  label: z.string(),
  vote: z.enum(['for', 'against']),
  reason: z.enum(VOTE_REASONS),
  detail: z.string().optional(),
  quarantineUntil: z.number().optional(),
});
export type VoteView = z.infer<typeof voteSchema>;

/** `error.details` of LOCK_CONTENDED / QUORUM_UNAVAILABLE / LOCK_EXPIRED: the deciding round's votes, and the holder's metadata (never its token) when contended. */
export const lockErrorDetailsSchema = z.object({
  votes: z.array(voteSchema),
  holder: z.record(z.string(), z.string()).nullable().optional(),
});
export type LockErrorDetails = z.infer<typeof lockErrorDetailsSchema>;

// The core's limits (the core checks them again): a request it would refuse is a 400 here, with the field named.
export const metadataSchema = z
  .record(z.string().min(1).max(LIMITS.maxMetadataKeyChars), z.string().max(LIMITS.maxMetadataValueChars))
  .refine((m) => Object.keys(m).length <= LIMITS.maxMetadataFields, `at most ${LIMITS.maxMetadataFields} metadata fields`);
export const ttlSchema = z.number().int('must be a whole number of milliseconds').positive('must be positive');

/** POST /api/locks */
export const acquireBodySchema = z
  .strictObject({
    resource: resourceSchema.optional(),
    resources: z.array(resourceSchema).min(1).max(LIMITS.maxResources).optional(),
    ttlMs: ttlSchema,
    fenced: z.boolean().optional(),
    metadata: metadataSchema.optional(),
    /** Keep trying (woken by releases) for up to this long before answering 409. @default 0 */
    waitMs: z.number().int().min(0).max(30_000).optional(),
  })
  .refine((b) => (b.resource === undefined) !== (b.resources === undefined), 'give exactly one of resource or resources')
  // The refinement in JSON Schema (the OpenAPI document), as generated clients type it: one of the
  // two is present and the other absent (`false`). Zod cannot derive it from the function.
  .meta({
    oneOf: [
      { required: ['resource'], properties: { resource: {}, resources: false } },
      { required: ['resources'], properties: { resources: {}, resource: false } },
    ],
  });

export const lockGrantSchema = z.object({
  resources: z.array(z.string()),
  token: z.string(),
  fence: z.number().nullable(),
  validityMs: z.number(),
  expiresAt: z.number(),
  votes: z.array(voteSchema),
});
export type LockGrant = z.infer<typeof lockGrantSchema>;

/** POST /api/locks/{resource}/extend — `resources` when the lock covers more than the path's one. */
export const extendBodySchema = z.strictObject({
  token: lockTokenSchema,
  ttlMs: ttlSchema,
  resources: z.array(resourceSchema).min(1).max(64).optional(),
});

export const extendResponseSchema = z.object({
  resources: z.array(z.string()),
  token: z.string(),
  validityMs: z.number(),
  expiresAt: z.number(),
  votes: z.array(voteSchema),
});

/** POST /api/locks/{resource}/release */
export type ExtendResponse = z.infer<typeof extendResponseSchema>;

export const releaseBodySchema = z.strictObject({
  token: lockTokenSchema,
  resources: z.array(resourceSchema).min(1).max(64).optional(),
});

export const releaseResponseSchema = z.object({
  resources: z.array(z.string()),
  released: z.boolean(),
  deleted: z.number().int(),
  complete: z.boolean(),
  votes: z.array(voteSchema),
});

/** POST /api/locks/{resource}/force-release — compare-and-delete of the token the operator saw. */
export type ReleaseResponse = z.infer<typeof releaseResponseSchema>;

export const forceReleaseBodySchema = z.strictObject({
  token: lockTokenSchema,
  reason: z.string().trim().min(3, 'say why (at least 3 characters)').max(500),
  dryRun: z.boolean().optional(),
  /**
   * The operator saw that the holder is alive (it extended within its pace: the dry run's
   * `liveness`) and releases anyway. Without it, a force-release of a live holder is refused 409
   * CONFLICT before anything is written: the holder goes on as if it held the lock until its
   * next extend or check.
   */
  confirmLiveHolder: z.literal(true).optional(),
});

/** The holder's pulse, read from its keys (lib/inspect/holder-liveness.ts). */
export const holderLivenessSchema = z.object({
  pulse: z.enum(['alive', 'stopped', 'never-extended', 'unknown']),
  extensions: z.number().int(),
  acquiredAt: z.number().nullable(),
  sinceLastMs: z.number().nullable(),
  everyMs: z.number().nullable(),
  learnsWithinMs: z.number().nullable(),
});
export type HolderLivenessView = z.infer<typeof holderLivenessSchema>;

export const forceReleaseNodeSchema = z.object({
  node: z.number().int(),
  /** What the node held before: its token (null when absent) and PTTL. */
  before: z.object({ token: z.string().nullable(), pttlMs: z.number().nullable() }).nullable(),
  /** deleted | would-delete | other-holder (a different token: left alone) | absent | unreachable */
  outcome: z.enum(['deleted', 'would-delete', 'other-holder', 'absent', 'unreachable']),
  after: z.object({ token: z.string().nullable(), pttlMs: z.number().nullable() }).nullable(),
  error: z.string().nullable(),
});

export const forceReleaseResponseSchema = z.object({
  resource: z.string(),
  token: z.string(),
  dryRun: z.boolean(),
  deleted: z.number().int(),
  nodes: z.array(forceReleaseNodeSchema),
  auditId: z.string().nullable(),
  /** The holder of the token as read before the release: alive, stopped extending, never extended, or unknown (no metadata). */
  liveness: holderLivenessSchema.nullable().default(null),
});
export type ForceReleaseResponse = z.infer<typeof forceReleaseResponseSchema>;

/** The most locks one bulk force-release takes (one preview, one reason, one confirmation). */
export const BULK_RELEASE_MAX = 200;

/**
 * POST /api/force-release — several force-releases in one: each item is the compare-and-delete of
 * the token the operator saw on that resource (a split lock: one item per token). One reason for
 * all; every item is audited on its own, marked with the batch it was part of.
 */
export const bulkForceReleaseBodySchema = z
  .strictObject({
    locks: z
      .array(z.strictObject({ resource: resourceSchema, token: lockTokenSchema }))
      .min(1, 'name at least one lock')
      .max(BULK_RELEASE_MAX, `at most ${BULK_RELEASE_MAX} locks at once`),
    reason: z.string().trim().min(3, 'say why (at least 3 characters)').max(500),
    dryRun: z.boolean().optional(),
    /** As a single force-release's `confirmLiveHolder`, for every item: without it a batch with a live holder is refused 409 before any delete. */
    confirmLiveHolders: z.literal(true).optional(),
  })
  .refine((b) => new Set(b.locks.map((l) => `${l.resource}\u0000${l.token}`)).size === b.locks.length, {
    message: 'a lock and token are named twice',
    path: ['locks'],
  });
export type BulkForceReleaseBody = z.infer<typeof bulkForceReleaseBodySchema>;

export const bulkForceReleaseResponseSchema = z.object({
  dryRun: z.boolean(),
  /** The batch every audit entry of this release names; null for a dry run. */
  batchId: z.string().nullable(),
  /** Keys deleted, summed over every lock and node. */
  deleted: z.number().int(),
  /** One answer per lock, in the order asked. */
  results: z.array(forceReleaseResponseSchema),
});
export type BulkForceReleaseResponse = z.infer<typeof bulkForceReleaseResponseSchema>;
