import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import { meSchema, type Me } from '../api/auth';
import { ApiError, fetchJson } from './fetch-json';
import { queryKeys } from './queries';

/**
 * The CSRF token of the current session (from GET /api/auth/me or the login answer). Every
 * cookie-authenticated mutation sends it as `x-csrf-token`.
 */
let csrfToken: string | null = null;

export function rememberSession(me: Me | null): void {
  csrfToken = me?.csrfToken ?? null;
}

export const meQuery = () =>
  queryOptions({
    queryKey: queryKeys.me,
    queryFn: async ({ signal }) => {
      try {
        const me = await fetchJson('/api/auth/me', meSchema, { signal });
        rememberSession(me);
        return me;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          rememberSession(null);
          return null;
        }
        throw err;
      }
    },
    staleTime: 60_000,
  });

/** POST JSON with the session's CSRF token; parses the answer with the shared schema. */
export function postJson<S extends z.ZodType>(url: string, body: unknown, schema: S, init?: RequestInit): Promise<z.infer<S>> {
  return fetchJson(url, schema, {
    ...init,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}), ...init?.headers },
    body: JSON.stringify(body),
  });
}
