import { z } from 'zod';

/** The quotas an API key can run into, as a 429's `details.quota` and the metrics name them. */
export const API_KEY_QUOTA_NAMES = ['locks-held', 'acquire-rate', 'waiting'] as const;

/**
 * Each API key's use of the lock service against its quotas (REDLOCK_API_KEY_QUOTAS), as counted
 * by the console process that answered: N processes each count their own.
 */
export const apiKeyUsageSchema = z.object({
  /** The key's name (`client:<name>` in the lock history); never the key. */
  name: z.string(),
  /** Resources it holds now through this process (until released or the lease ends). */
  held: z.number(),
  /** Acquires with `waitMs` waiting now. */
  waiting: z.number(),
  quota: z.object({ held: z.number(), rate: z.number(), burst: z.number(), waiting: z.number() }),
  /** Acquires refused with 429 since this process started, by quota. */
  refused: z.object({ 'locks-held': z.number(), 'acquire-rate': z.number(), waiting: z.number() }),
});
export type ApiKeyUsage = z.infer<typeof apiKeyUsageSchema>;

export const apiKeyUsageResponseSchema = z.object({
  /** Always `process`: the counts are this console process's own. */
  scope: z.literal('process'),
  keys: z.array(apiKeyUsageSchema),
});
export type ApiKeyUsageResponse = z.infer<typeof apiKeyUsageResponseSchema>;
