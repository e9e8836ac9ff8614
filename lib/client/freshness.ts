/**
 * When a reading on screen stops counting as "now" (unknown is never shown as fine).
 * The one definition: a reading is stale once it is older than STALE_AFTER_POLLS of its screen's
 * poll intervals, and never sooner than MIN_STALE_MS (one slow answer on a busy machine must not
 * grey a screen that is still being read). Headlines, counts and the live dot go grey/unknown
 * past it; the "read … ago" labels turn amber at the same age.
 */
export const STALE_AFTER_POLLS = 2;
export const MIN_STALE_MS = 5_000;

/** The nodes are read every second (the Overview's and Nodes screens' headlines, the live dot). */
export const NODES_POLL_MS = 1_000;

/** How old a reading polled every `pollMs` may be before it is stale. */
export function staleAfterMs(pollMs: number = NODES_POLL_MS): number {
  return Math.max(STALE_AFTER_POLLS * pollMs, MIN_STALE_MS);
}

/** Is a reading received at `readAt` (local ms, null: never) stale at `now`? `now` 0 (server render) is never stale. */
export function isStale(readAt: number | null, now: number, pollMs: number = NODES_POLL_MS): boolean {
  if (now === 0) return false;
  return readAt === null || now - readAt > staleAfterMs(pollMs);
}
