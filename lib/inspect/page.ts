import { InvalidCursorError } from './errors';
import { compareLocks, type LockState, type QuorumView } from './quorum-view';
import { arrayLockList, type LockList } from './view-list';

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
 * nodes continues after the same resource. A snapshot's LockList is read by position, so only the
 * views of the page are made, and of the locks a search has to look into.
 */
export function pageLocks(snapshot: { lockList: LockList } | { locks: readonly QuorumView[] }, query: PageQuery = {}): LockPage {
  const locks = 'lockList' in snapshot ? snapshot.lockList : arrayLockList(snapshot.locks);
  const limit = clampPageLimit(query.limit);
  const prefix = query.prefix ?? '';
  const states = query.state === undefined ? null : new Set<LockState>(typeof query.state === 'string' ? [query.state] : query.state);
  const needle = query.search?.trim().toLowerCase() || null;
  const after = query.cursor ? decodeCursor(query.cursor) : null;

  // Sorted by resource: the prefix's resources are one run starting at the first resource ≥ prefix.
  let index = firstIndexFrom(locks.length, 0, (i) => locks.resourceAt(i) >= prefix);
  const fromCursor = after
    ? firstIndexFrom(locks.length, 0, (i) => compareLocks({ resource: locks.resourceAt(i), key: locks.keyAt(i) }, after) > 0)
    : 0;
  const start = Math.max(index, fromCursor);

  if (states === null && needle === null) {
    // Only the prefix filters: the run's end is found by binary search too (after its first
    // resource, those starting with the prefix come first), so the page costs O(log n + limit)
    // instead of a walk over every lock of a snapshot that may hold hundreds of thousands.
    const end = firstIndexFrom(locks.length, index, (i) => !locks.resourceAt(i).startsWith(prefix));
    const items: QuorumView[] = [];
    for (let i = Math.min(start, end); i < Math.min(end, start + limit); i++) items.push(locks.at(i));
    const last = items[items.length - 1];
    return { items, nextCursor: start + limit < end && last ? encodeCursor(last) : null, matched: end - index };
  }

  const items: QuorumView[] = [];
  let matched = 0;
  let hasMore = false;
  for (; index < locks.length; index++) {
    if (!locks.resourceAt(index).startsWith(prefix)) break;
    if (states && !states.has(locks.stateAt(index))) continue;
    if (needle !== null && !matches(locks.at(index), needle)) continue;
    matched++;
    if (index < start) continue;
    if (items.length < limit) items.push(locks.at(index));
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

/** Binary search over positions from … length − 1: the first where `pred` holds (false…false true…true). */
function firstIndexFrom(length: number, from: number, pred: (index: number) => boolean): number {
  let lo = from;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function matches(lock: QuorumView, needle: string): boolean {
  const fields = [lock.resource, lock.key, lock.majorityToken, lock.meta?.owner, lock.meta?.host, lock.meta?.purpose];
  return fields.some((f) => f !== null && f !== undefined && f.toLowerCase().includes(needle));
}
