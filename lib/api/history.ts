import { z } from 'zod';

/**
 * GET /api/history: the rolling window behind the overview's charts (one bucket per second, ten
 * minutes), as the server keeps it (lib/server/history.ts) and the charts read it.
 */
export const historyQuerySchema = z.strictObject({ since: z.coerce.number().int().min(0).optional() });

export const historyBucketSchema = z.object({
  /** Start of the second (epoch ms). */
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

export const historyResponseSchema = z.object({ buckets: z.array(historyBucketSchema) });
export type HistoryResponse = z.infer<typeof historyResponseSchema>;
