import type { LockView } from '@/lib/api/locks';

/** One lock as read, and the local time its PTTLs count down from. */
export interface MatrixRowData {
  view: LockView;
  t0: number;
}

/** What mergeWindow needs of a re-read window (a LockWindow from lib/client/lock-queries.ts). */
export interface WindowRead {
  readAt: number;
  receivedAt: number;
  items: LockView[];
  nextCursor: string | null;
  /** The window starts after this lock; null: from the first one. */
  anchor: { resource: string; key: string } | null;
}

/** PTTLs in a page were read at `readAt` (server clock); count down from it, never from later than arrival. */
export function t0Of(page: { readAt: number; receivedAt: number }): number {
  return Math.min(page.readAt, page.receivedAt);
}

/** Resource, then key, in code-unit order: the order of the server's pages and cursor. */
export function compareKeys(a: { resource: string; key: string }, b: { resource: string; key: string }): number {
  if (a.resource !== b.resource) return a.resource < b.resource ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return 0;
}

/** First index in rows (sorted by resource, key) whose lock comes after `key`. */
function firstAfter(rows: readonly MatrixRowData[], key: { resource: string; key: string }): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(rows[mid]!.view, key) > 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Patch a freshly read window over the loaded rows (sorted by resource): every loaded row in the
 * window's range — after its anchor, up to its last lock, or to the end when the window reached
 * the end of the list — is replaced by what the window says, so released locks vanish and new
 * ones appear where they belong. Rows outside the range are kept as they were loaded.
 */
export function mergeWindow(base: readonly MatrixRowData[], win: WindowRead): MatrixRowData[] {
  const last = win.items[win.items.length - 1];
  if (win.nextCursor !== null && !last) return base.slice();
  const t0 = t0Of(win);
  const fresh = win.items.map((view) => ({ view, t0 }));
  const start = win.anchor ? firstAfter(base, win.anchor) : 0;
  const end = win.nextCursor === null || !last ? base.length : firstAfter(base, last);
  return [...base.slice(0, start), ...fresh, ...base.slice(Math.max(start, end))];
}
