import type { z } from 'zod';

/** An API answer that was not 2xx: status and the server's message. */
export class ApiError extends Error {
  override readonly name = 'ApiError' as const;
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown = null,
  ) {
    super(message);
  }
}

/** Fetch JSON from the console's API and parse it with the shared zod schema. */
export async function fetchJson<S extends z.ZodType>(url: string, schema: S, init?: RequestInit): Promise<z.infer<S>> {
  const res = await fetch(url, { ...init, headers: { accept: 'application/json', ...init?.headers }, cache: 'no-store' });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const message = (body as { error?: { message?: string } } | null)?.error?.message ?? `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message, body);
  }
  return schema.parse(body);
}
