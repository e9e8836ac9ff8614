import type { z } from 'zod';

/** An API answer that was not 2xx: status and the server's message. Status 0: no answer at all. */
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

/** How long a read waits for the console before it counts as failed (a hung request must not show a skeleton forever). */
export const READ_TIMEOUT_MS = 10_000;

/**
 * Fetch JSON from the console's API and parse it with the shared zod schema. A read (GET) gives
 * up after `timeoutMs` (default READ_TIMEOUT_MS); a write waits for its answer (giving up would
 * not undo it). A request that got no answer fails with `ApiError` status 0.
 */
export async function fetchJson<S extends z.ZodType>(
  url: string,
  schema: S,
  init?: RequestInit & { timeoutMs?: number },
): Promise<z.infer<S>> {
  const { timeoutMs, ...rest } = init ?? {};
  const read = !rest.method || rest.method.toUpperCase() === 'GET';
  const limit = timeoutMs ?? (read ? READ_TIMEOUT_MS : null);
  const timeout = limit !== null ? AbortSignal.timeout(limit) : null;
  const signal = timeout && rest.signal ? AbortSignal.any([rest.signal, timeout]) : (timeout ?? rest.signal ?? undefined);
  let res: Response;
  let body: unknown;
  try {
    res = await fetch(url, { ...rest, signal, headers: { accept: 'application/json', ...rest.headers }, cache: 'no-store' });
    // Inside the same guard: a timeout while the body is still arriving is "no answer" too.
    body = await res.json().catch((err: unknown) => {
      if (signal?.aborted) throw err;
      return null;
    });
  } catch (err) {
    // The caller's own cancellation (a query no longer needed) stays an abort, not a failure.
    if (rest.signal?.aborted) throw err;
    const how = timeout?.aborted
      ? `no answer from the console within ${Math.round(limit! / 1000)} s`
      : `the console could not be reached (${(err as Error).message})`;
    // A write whose answer never came may still have been applied: say so, do not invite a blind retry.
    throw new ApiError(0, read ? how : `${how}: the action may have been applied; check the audit log before trying again`);
  }
  if (!res.ok) {
    const message = (body as { error?: { message?: string } } | null)?.error?.message ?? `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message, body);
  }
  return schema.parse(body);
}
