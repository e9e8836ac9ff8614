import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';

// The console's pages run under a CSP without eval (lib/server/http/security-headers.ts). Zod's
// JIT probes `new Function` on its first parse, which the browser reports as a CSP violation even
// though zod catches it: in the browser, parse without the JIT.
if (typeof window !== 'undefined') z.config({ jitless: true });

/** Every non-2xx answer of the API. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

export const ROLES = ['viewer', 'operator', 'client'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** A resource name as the lock core accepts it (validated again there). */
export const resourceSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => new TextEncoder().encode(s).length <= LIMITS.maxResourceBytes, `must be at most ${LIMITS.maxResourceBytes} bytes (UTF-8)`);
