import { z } from 'zod';
import { lockStateSchema } from './locks';

/**
 * GET /api/history: the rolling windows behind the overview's charts, as the server keeps them
 * (lib/server/history.ts) and the charts read them: one-second buckets for ten minutes, one-minute
 * buckets for 24 hours.
 */
export const HISTORY_TIERS = {
  '1s': { bucketMs: 1_000, windowMs: 600_000 },
  '1m': { bucketMs: 60_000, windowMs: 86_400_000 },
} as const;
export type HistoryResolution = keyof typeof HISTORY_TIERS;

export const historyQuerySchema = z.strictObject({
  since: z.coerce.number().int().min(0).optional(),
  /** Bucket size: `1s` (the default; ten minutes kept) or `1m` (24 hours kept). */
  resolution: z.enum(['1s', '1m']).optional(),
});

export const historyBucketSchema = z.object({
  /** Start of the bucket (epoch ms). */
  t: z.number(),
  /** Acquires through this console: its own lock core's, or forwarded to the lock service (they carry the latencies below). */
  acquireOk: z.number(),
  acquireFailed: z.number(),
  /**
   * Grants seen on the masters, by any client (the package in applications, HTTP, raw clients): one
   * per lock taken, from the masters' keyspace notifications (lib/server/grants-seen.ts). Null in a
   * bucket the console was not counting them (not started yet, or no master could be subscribed to).
   */
  grantsSeen: z.number().nullable(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  /** Per node (index n - 1 for node n), null while it did not answer. */
  rttMs: z.array(z.number().nullable()).nullable(),
  locks: z.number().nullable(),
  /** Locks in each state (every state present, 0 when none). */
  byState: z.record(lockStateSchema, z.number()).nullable(),
});
export type HistoryBucket = z.infer<typeof historyBucketSchema>;

/** How the console counts grants on the masters right now (GET /api/history's `grants`). */
export const grantCountingSchema = z.object({
  /** Counting at all (the console's subscription to the masters is up). */
  counting: z.boolean(),
  /** Nodes without keyspace notifications (off, and not the console's to turn on; or refused): their locks are counted when a scan each second first sees them, so a lock held for less is missed. */
  polledNodes: z.array(z.number().int()),
  /** Why those nodes are polled, in words (null when none is). */
  note: z.string().nullable(),
});
export type GrantCounting = z.infer<typeof grantCountingSchema>;

export const historyResponseSchema = z.object({
  /** The bucket size of `buckets`, in ms. */
  resolutionMs: z.number().int(),
  grants: grantCountingSchema,
  buckets: z.array(historyBucketSchema),
});
export type HistoryResponse = z.infer<typeof historyResponseSchema>;
