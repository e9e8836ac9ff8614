import 'server-only';
import type { LockDetailResponse, LockListResponse } from '../api/locks';
import {
  earlyPage, earlyPageDue, lockDetail, LOCK_STATES, pageLocks, quorumSize, startSnapshot, InvalidCursorError,
  type EarlyPage, type IndexedSnapshotNode, type Snapshot, type SnapshotNode, type SnapshotRun,
} from '../inspect';
import { badRequest } from './http/errors';
import { recordSample } from './history';
import { metrics } from './metrics';
import { lockIndex } from './lock-index-service';
import { getRuntime } from './runtime';

/** A first page re-reads the nodes when its snapshot is older than this (counted from scan completion). */
const SNAPSHOT_MAX_AGE_MS = 1_000;
/** Later pages (with a cursor) may use an older snapshot: the cursor is a resource name, stable across scans. */
const CURSOR_SNAPSHOT_MAX_AGE_MS = 5_000;
const KEY = Symbol.for('redlock-console.snapshots');
type Holder = { [KEY]?: Map<string, { at: number | null; run: SnapshotRun }> };

/**
 * A snapshot of every node per scan pattern, shared by concurrent requests and reused for up to
 * 1 s, so paging through a large lock list reads the nodes once and the cursor stays stable. The
 * default pattern's snapshots come from the live lock index (a full scan only the first time).
 */
function cachedSnapshot(pattern: string | undefined, fresh: boolean, maxAgeMs = SNAPSHOT_MAX_AGE_MS): SnapshotRun {
  const holder = globalThis as Holder;
  holder[KEY] ??= new Map();
  const cache = holder[KEY];
  const runtime = getRuntime();
  const key = pattern ?? '';
  const hit = cache.get(key);
  // A scan still running is always shared; a finished one is reused while younger than maxAgeMs.
  if (hit && !fresh && (hit.at === null || Date.now() - hit.at < maxAgeMs)) return hit.run;
  // Our own layout comes from the live index (a re-read of what changed); any other pattern is scanned.
  const index = pattern === undefined ? lockIndex() : null;
  const run = index ? index.startSnapshot() : startSnapshot(runtime.clients, {
    keyPrefix: runtime.keyPrefix, pattern, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor,
  });
  const promise = run.done.then((snap) => {
    // The index hands a run still under way to every caller: count each run once.
    if (!pattern && !recorded.has(run)) {
      recorded.add(run);
      const m = metrics();
      for (const [state, count] of Object.entries(snap.stateCounts)) m.locks.set({ state }, count);
      recordRead(snap);
      recordSample({ kind: 'locks', total: snap.lockList.length, byState: snap.stateCounts });
    }
    const entry = cache.get(key);
    if (entry?.run === run) entry.at = Date.now();
    return snap;
  });
  cache.set(key, { at: null, run });
  if (cache.size > 16) cache.delete(cache.keys().next().value!);
  promise.catch(() => cache.delete(key));
  return run;
}

const recorded = new WeakSet<SnapshotRun>();

type ReadNode = SnapshotNode & Partial<Pick<IndexedSnapshotNode, 'indexed' | 'reread' | 'rescan'>>;

/** Did the keys of every node that could be read come from the live index (no full scan)? */
function fromIndex(snap: Snapshot): boolean {
  const read = snap.nodes.filter((n) => n.ok) as ReadNode[];
  return read.length > 0 && read.every((n) => n.indexed === true);
}

/** Prometheus: how long the read took and where it came from, which nodes were rescanned and why, keys re-read. */
function recordRead(snap: Snapshot): void {
  const m = metrics();
  m.lockListRead.observe({ source: fromIndex(snap) ? 'index' : 'scan' }, snap.durationMs / 1000);
  for (const n of snap.nodes as ReadNode[]) {
    if (n.rescan) m.indexRescans.inc({ node: String(n.node), reason: n.rescan });
    if (n.reread) m.indexRereadKeys.inc({ node: String(n.node) }, n.reread);
  }
}

export interface LockListQuery {
  prefix?: string;
  state?: Array<'held' | 'expiring' | 'partial' | 'split'>;
  search?: string;
  cursor?: string;
  limit: number;
  pattern?: string;
  fresh?: '0' | '1';
  progressive?: '0' | '1';
}

/**
 * A page of the lock list from a snapshot at most 1 s old (5 s with a cursor). A progressive first
 * page (`progressive=1`, no cursor) waits for a snapshot while earlyPageDue() says to and
 * otherwise answers with an early page (lib/inspect/early-page.ts), `complete: false`.
 */
export async function listLocks(query: LockListQuery): Promise<LockListResponse> {
  const run = cachedSnapshot(query.pattern, query.fresh === '1', query.cursor ? CURSOR_SNAPSHOT_MAX_AGE_MS : SNAPSHOT_MAX_AGE_MS);
  if (query.progressive === '1' && !query.cursor && (await earlyPageDue(run))) {
    const runtime = getRuntime();
    const early = await earlyPage(runtime.clients, run, { prefix: query.prefix, state: query.state, search: query.search, limit: query.limit }, {
      keyPrefix: runtime.keyPrefix, configuredNodes: runtime.endpoints.length, driftFactor: runtime.driftFactor,
    });
    // A scan that ended meanwhile answers in full instead.
    if (!run.finished()) return earlyResponse(run, early, runtime.endpoints.length);
  }
  const snap = await run.done;
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
    stateCounts: snap.stateCounts, total: snap.lockList.length, matched: page.matched, items: page.items, nextCursor: page.nextCursor,
    complete: true, scannedKeys: snap.nodes.reduce((sum, n) => sum + n.keys, 0),
    index: fromIndex(snap),
  };
}

function earlyResponse(run: SnapshotRun, early: EarlyPage, configuredNodes: number): LockListResponse {
  const stateCounts = Object.fromEntries(LOCK_STATES.map((s) => [s, 0])) as Record<(typeof LOCK_STATES)[number], number>;
  for (const item of early.items) stateCounts[item.state]++;
  return {
    readAt: early.readAt, scanMs: early.scanMs, pattern: run.pattern, quorum: quorumSize(configuredNodes),
    nodes: early.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, keys: n.keys, durationMs: n.durationMs })),
    stateCounts, total: early.found, matched: early.matched, items: early.items, nextCursor: null,
    complete: false, scannedKeys: early.scannedKeys, index: false,
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
