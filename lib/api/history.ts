import { z } from 'zod';

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
  acquireOk: z.number(),
  acquireFailed: z.number(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  /** Per node (index n - 1 for node n), null while it did not answer. */
  rttMs: z.array(z.number().nullable()).nullable(),
  locks: z.number().nullable(),
  byState: z.record(z.string(), z.number()).nullable(),
});
export type HistoryBucket = z.infer<typeof historyBucketSchema>;

export const historyResponseSchema = z.object({
  /** The bucket size of `buckets`, in ms. */
  resolutionMs: z.number().int(),
  buckets: z.array(historyBucketSchema),
});
export type HistoryResponse = z.infer<typeof historyResponseSchema>;
