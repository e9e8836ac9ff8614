import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { metadataSchema, ttlSchema, voteSchema } from './locks';
import { slotFenceSchema, waitMsSchema } from './semaphores';

/**
 * The HTTP contract of the read-write lock (the core's acquireRead / acquireWrite,
 * docs/rwlocks.md): the mode is the path's (…/read, …/write), so a client's intent is in its URL
 * and a body that forgets a field cannot turn a reader into a writer. A grant's token and slots
 * are what a client keeps to extend and release it (…/extend, …/release), whichever its mode.
 */

/** POST /api/rwlocks/{resource}/read and /write */
export const rwAcquireBodySchema = z.strictObject({
  ttlMs: ttlSchema,
  /** Reader slots of the lock: every client of one lock must use the same. @default 16 */
  maxReaders: z.number().int('must be a whole number').min(1).max(LIMITS.maxResources).optional(),
  fenced: z.boolean().optional(),
  metadata: metadataSchema.optional(),
  waitMs: waitMsSchema.optional(),
});
export type RwAcquireBody = z.infer<typeof rwAcquireBodySchema>;

export const rwGrantSchema = z.object({
  resource: z.string(),
  mode: z.enum(['read', 'write']),
  maxReaders: z.number().int(),
  token: z.string(),
  /** One slot for a reader, every slot for the writer: keep them with the token to extend and release. */
  slots: z.array(z.number().int()),
  /** Strictly increasing across writers; a reader's orders it against each writer (docs/rwlocks.md). Null when fenced: false. */
  fence: z.number().nullable(),
  fences: z.array(slotFenceSchema),
  validityMs: z.number(),
  expiresAt: z.number(),
  votes: z.array(voteSchema),
});
export type RwGrantView = z.infer<typeof rwGrantSchema>;

export { slotsExtendBodySchema as rwExtendBodySchema, slotsReleaseBodySchema as rwReleaseBodySchema } from './semaphores';
