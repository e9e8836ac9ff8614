import 'server-only';
import type { LockDetailResponse, LockListResponse } from '../api/locks';
import { lockDetail, pageLocks, snapshot, InvalidCursorError, type Snapshot } from '../inspect';
import { badRequest } from './http/errors';
import { recordSample } from './history';
import { metrics } from './metrics';
import { getRuntime } from './runtime';

/** A first page re-reads the nodes when its snapshot is older than this (counted from scan completion). */
const SNAPSHOT_MAX_AGE_MS = 1_000;
/** Later pages (with a cursor) may use an older snapshot: the cursor is a resource name, stable across scans. */
const CURSOR_SNAPSHOT_MAX_AGE_MS = 5_000;
const KEY = Symbol.for('redlock-console.snapshots');
type Holder = { [KEY]?: Map<string, { at: number | null; promise: Promise<Snapshot> }> };

/**
 * A snapshot of every node per scan pattern, shared by concurrent requests and reused for up to
 * 1 s, so paging through a large lock list reads the nodes once and the cursor stays stable.
 */
function cachedSnapshot(pattern: string | undefined, fresh: boolean, maxAgeMs = SNAPSHOT_MAX_AGE_MS): Promise<Snapshot> {
  const holder = globalThis as Holder;
  holder[KEY] ??= new Map();
  const cache = holder[KEY];
  const runtime = getRuntime();
  const key = pattern ?? '';
  const hit = cache.get(key);
  // A scan still running is always shared; a finished one is reused while younger than maxAgeMs.
  if (hit && !fresh && (hit.at === null || Date.now() - hit.at < maxAgeMs)) return hit.promise;
  const promise = snapshot(runtime.clients, {
    keyPrefix: runtime.keyPrefix, pattern, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor,
  }).then((snap) => {
    if (!pattern) {
      const m = metrics();
      for (const [state, count] of Object.entries(snap.stateCounts)) m.locks.set({ state }, count);
      recordSample({ kind: 'locks', total: snap.locks.length, byState: snap.stateCounts });
    }
    const entry = cache.get(key);
    if (entry?.promise === promise) entry.at = Date.now();
    return snap;
  });
  cache.set(key, { at: null, promise });
  if (cache.size > 16) cache.delete(cache.keys().next().value!);
  promise.catch(() => cache.delete(key));
  return promise;
}

export interface LockListQuery {
  prefix?: string;
  state?: Array<'held' | 'expiring' | 'partial' | 'split'>;
  search?: string;
  cursor?: string;
  limit: number;
  pattern?: string;
  fresh?: '0' | '1';
}

export async function listLocks(query: LockListQuery): Promise<LockListResponse> {
  const snap = await cachedSnapshot(query.pattern, query.fresh === '1', query.cursor ? CURSOR_SNAPSHOT_MAX_AGE_MS : SNAPSHOT_MAX_AGE_MS);
  let page;
  try {
    page = pageLocks(snap, { prefix: query.prefix, state: query.state, search: query.search, cursor: query.cursor, limit: query.limit });
  } catch (err) {
    if (err instanceof InvalidCursorError) throw badRequest(err.message);
    throw err;
  }
  return {
    readAt: snap.readAt, scanMs: snap.durationMs, pattern: snap.pattern, quorum: snap.quorum,
    nodes: snap.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, keys: n.keys, durationMs: n.durationMs })),
    stateCounts: snap.stateCounts, total: snap.locks.length, matched: page.matched, items: page.items, nextCursor: page.nextCursor,
  };
}

export async function getLock(resource: string): Promise<LockDetailResponse> {
  const runtime = getRuntime();
  const detail = await lockDetail(runtime.clients, resource, {
    keyPrefix: runtime.keyPrefix, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor,
  });
  return {
    readAt: detail.readAt, resource: detail.resource, key: detail.key, view: detail.view,
    nodes: detail.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, type: n.type })),
  };
}
