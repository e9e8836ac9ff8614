import { z } from 'zod';

/**
 * The lock history: what the lock service and the operators did to each resource,
 * kept on the masters beside the audit log. Who is the **authenticated principal** (the API key's
 * name or the signed-in user), never what the client's metadata claims; the client's metadata is
 * kept apart. A token is never stored or shown: its fingerprint links a grant to its extends and
 * its release.
 */
export const LOCK_HISTORY_EVENTS = Object.freeze(['granted', 'extended', 'released', 'force-released'] as const);
export type LockHistoryEvent = (typeof LOCK_HISTORY_EVENTS)[number];

export const lockHistoryEntrySchema = z.object({
  id: z.string(),
  /** Console clock, ms. */
  at: z.number(),
  event: z.enum(LOCK_HISTORY_EVENTS),
  /** Every resource of the lock (a multi-resource lock is one entry under each of them). */
  resources: z.array(z.string()),
  /** A short fingerprint of the lock's token (the same for its grant, extends and release). */
  token: z.string(),
  fence: z.number().nullable(),
  /** Who authenticated: `client:<api key name>` or `<role>:<user>`. */
  principal: z.string(),
  /** The metadata the client sent (its own claims: owner, host, …). */
  metadata: z.record(z.string(), z.string()),
  /** The lease asked for (granted, extended), when there is one. */
  ttlMs: z.number().nullable(),
  /** When the lease ends, console clock (granted, extended); null otherwise. */
  expiresAt: z.number().nullable(),
  /** Released / force-released: whether a quorum's keys were deleted, and the operator's reason. */
  detail: z.string(),
});
export type LockHistoryEntry = z.infer<typeof lockHistoryEntrySchema>;

/** One hold of the resource, from its grant to how it ended (derived from the entries). */
export const lockHoldSchema = z.object({
  token: z.string(),
  /**
   * Whether the history has the grant. False: the lock was taken before the history's window (a
   * long hold whose grant was pushed out) or outside the lock service (a program using the core
   * directly); who took it is then unknown, never guessed from a later entry.
   */
  grantSeen: z.boolean(),
  /** Who authenticated for the grant; null when the grant is not in the history. */
  principal: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  fence: z.number().nullable(),
  /** The grant's time (see `grantTime` for where it comes from). */
  grantedAt: z.number(),
  /**
   * Where `grantedAt` comes from: `recorded`, the lock service's grant entry; `holder-clock`, the
   * `acquiredAt` the holder wrote into its key (a client of the package outside the lock service:
   * its own clock); `first-seen`, when the console first saw the hold (the earliest entry, or the
   * read that found the key): the grant was earlier, by how much is not known.
   */
  grantTime: z.enum(['recorded', 'holder-clock', 'first-seen']).default('recorded'),
  /**
   * When it ended: the release or force-release, or the last lease's end when it expired (a
   * release or force-release after that end does not make the hold longer); null while held.
   */
  endedAt: z.number().nullable(),
  ended: z.enum(['released', 'force-released', 'expired', 'held']),
  extensions: z.number().int(),
});
export type LockHold = z.infer<typeof lockHoldSchema>;

export const lockHistoryQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(32).default(20),
});

export const lockHistoryResponseSchema = z.object({
  resource: z.string(),
  /** Newest first. */
  holds: z.array(lockHoldSchema),
  entries: z.array(lockHistoryEntrySchema),
  nodesRead: z.number().int(),
  nodesFailed: z.number().int(),
});
export type LockHistoryResponse = z.infer<typeof lockHistoryResponseSchema>;

/** The page sizes of the lock service's log, smallest (the default) first; "Show older" steps through them. */
export const LOCK_SERVICE_LOG_LIMITS = [200, 1_000, 5_000] as const;

/** GET /api/lock-history: the lock service's log across resources, newest first (the Audit screen's lock-service view). */
export const lockServiceLogQuerySchema = z.strictObject({
  /** Only this principal's entries, e.g. `client:billing` (an API key) or `operator:alice`. */
  principal: z.string().max(160).optional(),
  limit: z.coerce.number().int().min(1).max(LOCK_SERVICE_LOG_LIMITS.at(-1)!).default(LOCK_SERVICE_LOG_LIMITS[0]),
});

export const lockServiceLogResponseSchema = z.object({
  entries: z.array(lockHistoryEntrySchema),
  nodesRead: z.number().int(),
  nodesFailed: z.number().int(),
});
export type LockServiceLogResponse = z.infer<typeof lockServiceLogResponseSchema>;
