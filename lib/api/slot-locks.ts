import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { SLOT_KINDS, type SlotKind } from '../inspect/slot-locks';
import { resourceSchema } from './common';
import { forceReleaseNodeSchema, holderLivenessSchema, lockTokenSchema, lockViewSchema, snapshotNodeSchema } from './locks';

/** The console's admin view of semaphores and read-write locks (GET /api/slot-locks…, their force-release). */

export { SLOT_KINDS, type SlotKind };
export const slotKindSchema = z.enum(SLOT_KINDS);

/** GET /api/slot-locks?kind=&search= */
export const slotLockListQuerySchema = z.strictObject({
  /** One kind only; both by default. */
  kind: slotKindSchema.optional(),
  /** Resources whose name contains this (case-insensitive). */
  search: z.string().max(256).optional(),
});

/** /api/slot-locks/{kind}/{resource} */
export const slotLockParamsSchema = z.strictObject({ kind: slotKindSchema, resource: resourceSchema });

export const slotHolderSchema = z.object({
  token: z.string(),
  slots: z.array(z.number().int()),
  role: z.enum(['permit', 'reader', 'writer', 'intent']),
  fence: z.number().nullable(),
  validityMs: z.number().nullable(),
  meta: z.record(z.string(), z.string()).nullable(),
});
export type SlotHolderView = z.infer<typeof slotHolderSchema>;

/** One key of a slot lock across the nodes: a slot's index, or null for a read-write lock's intent. */
export const slotRowSchema = z.object({ slot: z.number().int().nullable(), view: lockViewSchema });

export const slotLockSchema = z.object({
  kind: slotKindSchema,
  resource: z.string(),
  limit: z.number().int().nullable(),
  held: z.number().int(),
  holders: z.array(slotHolderSchema),
  mode: z.enum(['free', 'read', 'write']).nullable(),
  intent: slotHolderSchema.nullable(),
  unsettled: z.number().int(),
  rows: z.array(slotRowSchema),
});
export type SlotLockView = z.infer<typeof slotLockSchema>;

const slotNodesSchema = z.array(snapshotNodeSchema);

export const slotLockListResponseSchema = z.object({
  readAt: z.number(),
  quorum: z.number().int(),
  /** Per kind scanned: each node's outcome (a node that failed makes its cells unknown). */
  scans: z.array(z.object({ kind: slotKindSchema, scanMs: z.number(), nodes: slotNodesSchema })),
  counts: z.object({ semaphore: z.number().int(), rwlock: z.number().int() }),
  items: z.array(slotLockSchema),
});
export type SlotLockListResponse = z.infer<typeof slotLockListResponseSchema>;

export const slotLockDetailResponseSchema = z.object({
  readAt: z.number(),
  kind: slotKindSchema,
  resource: z.string(),
  quorum: z.number().int(),
  /** Null when no node holds any of its keys. */
  lock: slotLockSchema.nullable(),
  nodes: slotNodesSchema,
});
export type SlotLockDetailResponse = z.infer<typeof slotLockDetailResponseSchema>;

/**
 * POST /api/slot-locks/{kind}/{resource}/force-release: the compare-and-delete of the token the
 * operator saw. A semaphore: one permit's slot, named by `slot`. A read-write lock: the holder of
 * `token`, a reader's slot or every slot of the writer (`slot` not sent). The token must be seen on
 * those slots now, else 409 before anything is written.
 */
export const slotForceReleaseBodySchema = z.strictObject({
  token: lockTokenSchema,
  slot: z
    .number()
    .int()
    .min(0)
    .max(LIMITS.maxSemaphoreLimit - 1)
    .optional(),
  reason: z.string().trim().min(3, 'say why (at least 3 characters)').max(500),
  /** Report what each node would do, write and delete nothing (no audit entry). */
  dryRun: z.boolean().optional(),
  /** As the mutex's force-release: a holder that is alive (extending now) is released only with it, else 409. */
  confirmLiveHolder: z.literal(true).optional(),
});
export type SlotForceReleaseBody = z.infer<typeof slotForceReleaseBodySchema>;

export const slotForceReleaseResponseSchema = z.object({
  kind: slotKindSchema,
  resource: z.string(),
  token: z.string(),
  /** The slots released (the token's, as read before the release). */
  slots: z.array(z.number().int()),
  deleted: z.number().int(),
  dryRun: z.boolean(),
  /** Per slot, each node's outcome (`would-delete` in a dry run). */
  results: z.array(z.object({ slot: z.number().int(), nodes: z.array(forceReleaseNodeSchema) })),
  /** Null for a dry run. */
  auditId: z.string().nullable(),
  /** The holder of the token as read before the release (lib/inspect/holder-liveness.ts). */
  liveness: holderLivenessSchema,
});
export type SlotForceReleaseResponse = z.infer<typeof slotForceReleaseResponseSchema>;
