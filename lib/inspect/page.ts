import { InvalidCursorError } from './errors';
import { compareLocks, type LockState, type QuorumView } from './quorum-view';

/** What page of which locks: filters, the cursor from the previous page, and a size. */
export interface PageQuery {
  /** Only resources starting with this. */
  prefix?: string;
  /** Only locks in this state (or these states). */
  state?: LockState | readonly LockState[];
  /** Case-insensitive substring of the resource, key, majority token, or holder owner/host/purpose. */
  search?: string;
  /** From a previous page's `nextCursor`; omit for the first page. */
  cursor?: string | null;
  /** Items per page, 1…1000. @default 100 */
  limit?: number;
}

/** One page of locks and the cursor of the next. */
export interface LockPage {
  items: QuorumView[];
  /** Cursor of the next page, or null when this is the last one. */
  nextCursor: string | null;
  /** How many locks match the filters in the whole snapshot (all pages). */
  matched: number;
}

/** Page size when none is given. */
export const PAGE_LIMIT_DEFAULT = 100;
/** Largest page size; larger limits are clamped to it. */
export const PAGE_LIMIT_MAX = 1_000;

/**
 * The cursor after `lock`: opaque base64url of its resource (and key, which breaks ties between a
 * bare key and one of ours with the same resource name). The next page is everything after it, so
 * locks created or removed between two pages never duplicate or skip the ones that stay.
 */
export function encodeCursor(lock: { resource: string; key: string }): string {
  return Buffer.from(JSON.stringify([lock.resource, lock.key]), 'utf8').toString('base64url');
}

/** The position a cursor stands for; throws InvalidCursorError for anything else. */
export function decodeCursor(cursor: string): { resource: string; key: string } {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { resource: parsed[0], key: parsed[1] };
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError(cursor);
}

/**
 * One page of a snapshot's locks (which are sorted by resource), filtered by resource prefix,
 * state and search text. Works on any snapshot: a cursor from an older snapshot of the same
 * nodes continues after the same resource.
 */
export function pageLocks(snapshot: { locks: readonly QuorumView[] }, query: PageQuery = {}): LockPage {
  const locks = snapshot.locks;
  const limit = clampPageLimit(query.limit);
  const prefix = query.prefix ?? '';
  const states = query.state === undefined ? null : new Set<LockState>(typeof query.state === 'string' ? [query.state] : query.state);
  const needle = query.search?.trim().toLowerCase() || null;
  const after = query.cursor ? decodeCursor(query.cursor) : null;

  // Sorted by resource: the prefix's resources are one run starting at the first resource ≥ prefix.
  let index = firstIndex(locks, (l) => l.resource >= prefix);
  const fromCursor = after ? firstIndex(locks, (l) => compareLocks(l, after) > 0) : 0;
  const start = Math.max(index, fromCursor);

  if (states === null && needle === null) {
    // Only the prefix filters: the run's end is found by binary search too (after its first
    // resource, those starting with the prefix come first), so the page costs O(log n + limit)
    // instead of a walk over every lock of a snapshot that may hold hundreds of thousands.
    const end = firstIndexFrom(locks, index, (l) => !l.resource.startsWith(prefix));
    const items = locks.slice(Math.min(start, end), Math.min(end, start + limit));
    const last = items[items.length - 1];
    return { items, nextCursor: start + limit < end && last ? encodeCursor(last) : null, matched: end - index };
  }

  const items: QuorumView[] = [];
  let matched = 0;
  let hasMore = false;
  for (; index < locks.length; index++) {
    const lock = locks[index]!;
    if (!lock.resource.startsWith(prefix)) break;
    if (states && !states.has(lock.state)) continue;
    if (needle !== null && !matches(lock, needle)) continue;
    matched++;
    if (index < start) continue;
    if (items.length < limit) items.push(lock);
    else hasMore = true;
  }
  const last = items[items.length - 1];
  return { items, nextCursor: hasMore && last ? encodeCursor(last) : null, matched };
}

/** A page size as pageLocks() takes it: PAGE_LIMIT_DEFAULT when absent, else 1…PAGE_LIMIT_MAX. */
export function clampPageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return PAGE_LIMIT_DEFAULT;
  return Math.min(PAGE_LIMIT_MAX, Math.max(1, Math.floor(limit)));
}

/** Binary search: the first index where `pred` holds (pred is false…false true…true). */
function firstIndex<T>(items: readonly T[], pred: (item: T) => boolean): number {
  return firstIndexFrom(items, 0, pred);
}

/** firstIndex() over `items` from `from` on. */
function firstIndexFrom<T>(items: readonly T[], from: number, pred: (item: T) => boolean): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(items[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function matches(lock: QuorumView, needle: string): boolean {
  const fields = [lock.resource, lock.key, lock.majorityToken, lock.meta?.owner, lock.meta?.host, lock.meta?.purpose];
  return fields.some((f) => f !== null && f !== undefined && f.toLowerCase().includes(needle));
}
