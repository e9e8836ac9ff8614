import { z } from 'zod';

/** GET /api/health: liveness, the server process answers (no node is read). */
export const healthResponseSchema = z.object({ ok: z.literal(true), at: z.number() });
export type HealthResponse = z.infer<typeof healthResponseSchema>;

/** GET /api/ready: 200 when a quorum of masters answers PING, else 503 (read at most once a second). */
export const readinessResponseSchema = z.object({
  ready: z.boolean(),
  /** Masters that answered PING. */
  up: z.number().int(),
  quorum: z.number().int(),
  nodes: z.number().int(),
});
export type Readiness = z.infer<typeof readinessResponseSchema>;
