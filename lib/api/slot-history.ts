import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { lockHoldSchema } from './lock-history';
import { slotKindSchema } from './slot-locks';

/**
 * GET /api/slot-locks/{kind}/{resource}/history: the lock history of a semaphore's or read-write
 * lock's slots, merged. Each slot is a lock of its own in the history, under its slot name; the
 * server names the slots (the key layout's functions), the client names only their numbers.
 */

/** Slots one request reads: each is one history read per master, so a page of them, never all 256. */
export const SLOT_HISTORY_MAX_SLOTS = 16;

const slotNumbers = z
  .string()
  .max(200)
  .regex(/^(0|[1-9][0-9]{0,2})(,(0|[1-9][0-9]{0,2}))*$/, 'slots: slot numbers separated by commas, e.g. 0,1,2')
  .transform((text) => [...new Set(text.split(',').map(Number))].sort((a, b) => a - b))
  .pipe(
    z
      .array(
        z
          .number()
          .int()
          .max(LIMITS.maxSemaphoreLimit - 1, `slots: a slot is below ${LIMITS.maxSemaphoreLimit}`),
      )
      .max(SLOT_HISTORY_MAX_SLOTS, `slots: at most ${SLOT_HISTORY_MAX_SLOTS} slots in one request`),
  );

export const slotHistoryQuerySchema = z.strictObject({
  /** The slots to read, e.g. `0,1,2` (at most SLOT_HISTORY_MAX_SLOTS). */
  slots: slotNumbers,
  /** Holds answered, newest first. */
  limit: z.coerce.number().int().min(1).max(64).default(20),
});
export type SlotHistoryQuery = z.infer<typeof slotHistoryQuerySchema>;

/**
 * One hold of the lock's slots: a lock hold (lock-history.ts) and the slots read that it held
 * with the same ending. A permit of k slots is one row while its slots end together, a row per
 * ending otherwise (one slot force-released, the others released); the writer holds every slot.
 */
export const slotHoldSchema = lockHoldSchema.extend({
  slots: z.array(z.number().int()),
  role: z.enum(['permit', 'reader', 'writer']),
});
export type SlotHold = z.infer<typeof slotHoldSchema>;

export const slotHistoryResponseSchema = z.object({
  kind: slotKindSchema,
  resource: z.string(),
  /** The slots read. */
  slots: z.array(z.number().int()),
  /** Newest first. */
  holds: z.array(slotHoldSchema),
  /** The fewest masters any slot's history was read from, and the most that failed. */
  nodesRead: z.number().int(),
  nodesFailed: z.number().int(),
});
export type SlotHistoryResponse = z.infer<typeof slotHistoryResponseSchema>;
