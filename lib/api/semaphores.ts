import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';
import { resourceSchema } from './common';
import { lockTokenSchema, metadataSchema, ttlSchema, voteSchema } from './locks';

/**
 * The HTTP contract of the fenced semaphore (the core's acquireSemaphore, docs/semaphores.md): an
 * acquire answers a permit, and the permit's token and slots are all a client keeps to extend and
 * release it (POST /api/semaphores/{resource}/extend and /release), as a lock's token is.
 */

/** Slot numbers a permit holds, as the acquire answered them (the extend and release name them again). */
export const slotsSchema = z
  .array(z.number().int('a slot is a whole number').min(0, 'a slot is at least 0'))
  .min(1, 'name at least one slot')
  .max(LIMITS.maxResources, `at most ${LIMITS.maxResources} slots`)
  .refine((s) => new Set(s).size === s.length, 'must not repeat a slot');

/** How long an acquire keeps trying (woken by releases) before it answers 409. @default 0 */
export const waitMsSchema = z.number().int().min(0).max(30_000);

/** POST /api/semaphores */
export const semaphoreAcquireBodySchema = z.strictObject({
  resource: resourceSchema,
  /** Permits of the semaphore: every client of one semaphore must use the same. */
  limit: z.number().int('must be a whole number').min(1).max(LIMITS.maxSemaphoreLimit),
  /** Permits taken at once, all or nothing (at most the limit). @default 1 */
  permits: z.number().int('must be a whole number').min(1).max(LIMITS.maxResources).optional(),
  ttlMs: ttlSchema,
  fenced: z.boolean().optional(),
  metadata: metadataSchema.optional(),
  waitMs: waitMsSchema.optional(),
});
export type SemaphoreAcquireBody = z.infer<typeof semaphoreAcquireBodySchema>;

/** A slot and the fence its grant carries (strictly increasing across the grants of each slot). */
export const slotFenceSchema = z.object({ slot: z.number().int(), fence: z.number() });

export const permitSchema = z.object({
  resource: z.string(),
  limit: z.number().int(),
  token: z.string(),
  /** The slots held, ascending: keep them with the token to extend and release. */
  slots: z.array(z.number().int()),
  /** The grant's fence (null when fenced: false): one number, above every slot's earlier fences. */
  fence: z.number().nullable(),
  /** The fence per slot (a fenced store keeps one mark per slot); empty when fenced: false. */
  fences: z.array(slotFenceSchema),
  validityMs: z.number(),
  expiresAt: z.number(),
  votes: z.array(voteSchema),
});
export type PermitView = z.infer<typeof permitSchema>;

/** POST /api/semaphores/{resource}/extend */
export const slotsExtendBodySchema = z.strictObject({ token: lockTokenSchema, slots: slotsSchema, ttlMs: ttlSchema });
/** POST /api/semaphores/{resource}/release */
export const slotsReleaseBodySchema = z.strictObject({ token: lockTokenSchema, slots: slotsSchema });

export const slotsExtendResponseSchema = z.object({
  resource: z.string(),
  slots: z.array(z.number().int()),
  token: z.string(),
  validityMs: z.number(),
  expiresAt: z.number(),
  votes: z.array(voteSchema),
});
export type SlotsExtendResponse = z.infer<typeof slotsExtendResponseSchema>;

export const slotsReleaseResponseSchema = z.object({
  resource: z.string(),
  slots: z.array(z.number().int()),
  /** A slot key holding the token was deleted on some node. */
  released: z.boolean(),
  deleted: z.number().int(),
  complete: z.boolean(),
  votes: z.array(voteSchema),
});
export type SlotsReleaseResponse = z.infer<typeof slotsReleaseResponseSchema>;
