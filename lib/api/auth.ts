import { z } from 'zod';
import { roleSchema } from './common';

export const loginBodySchema = z.strictObject({
  username: z.string().min(1).max(128),
  password: z.string().min(1).max(1024),
});
export type LoginBody = z.infer<typeof loginBodySchema>;

/** POST /api/auth/logout — `everywhere`: end every session of this user, in every console process. */
export const logoutBodySchema = z.strictObject({
  everywhere: z.boolean().optional(),
});

export const meSchema = z.object({
  username: z.string(),
  role: roleSchema,
  /** Send back as `x-csrf-token` on every cookie-authenticated mutation. */
  csrfToken: z.string(),
  /** Does this console manage a local sandbox cluster (node actions allowed)? */
  sandbox: z.boolean(),
  expiresAt: z.number(),
});
export type Me = z.infer<typeof meSchema>;

/** What POST /api/auth/logout answers; `revokedOn`: the masters that recorded the revocation. */
export const logoutResponseSchema = z.object({ ok: z.literal(true), everywhere: z.boolean(), revokedOn: z.number().int() });
export type LogoutResponse = z.infer<typeof logoutResponseSchema>;
