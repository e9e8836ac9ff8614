import { z } from 'zod';

/** The quotas an API key can run into, as a 429's `details.quota` and the metrics name them. */
export const API_KEY_QUOTA_NAMES = ['locks-held', 'acquire-rate', 'waiting'] as const;

/**
 * Each API key's use of the lock service against its quotas (REDLOCK_API_KEY_QUOTAS), summed over
 * every console process on the same masters (the response's `scope` says whether they were read).
 */
export const apiKeyUsageSchema = z.object({
  /** The key's name (`client:<name>` in the lock history); never the key. */
  name: z.string(),
  /** Resources it holds now through every console (until released or the lease ends). */
  held: z.number(),
  /** Acquires with `waitMs` waiting now. */
  waiting: z.number(),
  quota: z.object({ held: z.number(), rate: z.number(), burst: z.number(), waiting: z.number() }),
  /** Acquires refused with 429 since each console process started, summed, by quota. */
  refused: z.object({ 'locks-held': z.number(), 'acquire-rate': z.number(), waiting: z.number() }),
});
export type ApiKeyUsage = z.infer<typeof apiKeyUsageSchema>;

export const apiKeyUsageResponseSchema = z.object({
  /**
   * `shared`: every console process's use, as the masters had it when this answer was made (the
   * quotas hold for their sum); `process`: the masters were not read within the last 3 s, so only
   * this process's own use (each process then holds the quota on its own).
   */
  scope: z.enum(['shared', 'process']),
  keys: z.array(apiKeyUsageSchema),
});
export type ApiKeyUsageResponse = z.infer<typeof apiKeyUsageResponseSchema>;
