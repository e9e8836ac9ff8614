import 'server-only';
import type { LockDetailResponse, LockListResponse } from '../api/locks';
import { createHmac } from 'node:crypto';
import {
  arrayLockList,
  earlyPage,
  earlyPageDue,
  lockDetail,
  LOCK_STATES,
  pageLocks,
  quorumSize,
  startSnapshot,
  InvalidCursorError,
  type EarlyPage,
  type IndexedSnapshotNode,
  type LockList,
  type LockState,
  type QuorumView,
  type Snapshot,
  type SnapshotNode,
  type SnapshotRun,
} from '../inspect';
import { lockKeyPrefix } from '@redlock-console/redlock';
import { getAuth } from './auth';
import { badRequest } from './http/errors';
import { recordSample } from './history';
import { metrics, oldestLockAgeMs } from './metrics';
import { lockIndex } from './lock-index-service';
import { getRuntime } from './runtime';
import { inRootContext } from './root-context';
import { PATTERN_SCAN_MAX_KEYS, ScanBudget } from './scan-budget';
import { refreshSlotMetrics } from './slot-inspect-service';

/** A first page re-reads the nodes when its snapshot is older than this (counted from scan completion). */
const SNAPSHOT_MAX_AGE_MS = 1_000;
/** Later pages (with a cursor) may use an older snapshot: the cursor is a resource name, stable across scans. */
const CURSOR_SNAPSHOT_MAX_AGE_MS = 5_000;
const snapshots = new Map<string, { at: number | null; run: SnapshotRun }>();

/**
 * A snapshot of every node per scan pattern, shared by concurrent requests and reused for up to
 * 1 s, so paging through a large lock list reads the nodes once and the cursor stays stable. The
 * default pattern's snapshots come from the live lock index (a full scan only the first time).
 */
function cachedSnapshot(pattern: string | undefined, fresh: boolean, who: string, maxAgeMs = SNAPSHOT_MAX_AGE_MS): SnapshotRun {
  const cache = snapshots;
  const runtime = getRuntime();
  const key = pattern ?? '';
  const hit = cache.get(key);
  // A scan still running is always shared (`fresh` too: it started no earlier than any read it
  // could replace); a finished one is reused while younger than maxAgeMs, unless `fresh`.
  if (hit && (hit.at === null || (!fresh && Date.now() - hit.at < maxAgeMs))) return hit.run;
  // A full scan of a pattern is spent from its caller's budget (scan-budget.ts; 429 past it).
  const ticket = pattern === undefined ? null : scanBudget().take(who, pattern);
  // Our own layout comes from the live index (a re-read of what changed); any other pattern is scanned.
  // Shared by every request (the index, its idle timer and its subscriptions live on): not in
  // this request's async context (root-context.ts).
  const run = inRootContext(() => {
    const index = pattern === undefined ? lockIndex() : null;
    return index
      ? index.startSnapshot()
      : startSnapshot(runtime.clients, {
          keyPrefix: runtime.keyPrefix,
          pattern,
          configuredNodes: runtime.endpoints.length,
          driftFactor: runtime.driftFactor,
          maxTtlMs: runtime.maxTtlMs,
          maxKeys: PATTERN_SCAN_MAX_KEYS,
        });
  });
  const promise = run.done.then((snap) => {
    // The index hands a run still under way to every caller: count each run once.
    if (!pattern && !recorded.has(run)) {
      recorded.add(run);
      const m = metrics();
      for (const [state, count] of Object.entries(snap.stateCounts)) m.locks.set({ state }, count);
      m.locksFlagged.set({ flag: 'over_ceiling' }, snap.flagCounts.overCeiling);
      m.locksFlagged.set({ flag: 'no_ttl' }, snap.flagCounts.noTtl);
      recordRead(snap);
      recordSample({ kind: 'locks', total: snap.lockList.length, byState: snap.stateCounts });
    }
    const entry = cache.get(key);
    if (entry?.run === run) entry.at = Date.now();
    return snap;
  });
  if (ticket) void run.done.then(ticket.release, ticket.release);
  cache.set(key, { at: null, run });
  if (cache.size > 16) cache.delete(cache.keys().next().value!);
  promise.catch(() => cache.delete(key));
  return run;
}

const recorded = new WeakSet<SnapshotRun>();

/** One budget per console process. */
let budget: ScanBudget | undefined;
function scanBudget(): ScanBudget {
  return (budget ??= new ScanBudget());
}

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

/**
 * For a Prometheus scrape: the lock gauges from the default layout's snapshot (at most 1 s old),
 * and the oldest held lock's age, read here rather than on every snapshot: it reads the metadata
 * of every held lock from a scratch view (none kept): with 100,000 held locks a scrape stalled the
 * event loop for at most 12 ms, where keeping a view per lock stalled it for 200–360 ms.
 */
export async function refreshLockMetrics(): Promise<void> {
  // Semaphores and read-write locks, counted by kind (slot-inspect-service.ts); best effort.
  const slots = refreshSlotMetrics().catch(() => undefined);
  const { lockList } = await cachedSnapshot(undefined, false, 'console').done;
  const held: { state: LockState; meta: Record<string, string> | null }[] = [];
  for (let i = 0; i < lockList.length; i++) {
    const state = lockList.stateAt(i);
    if (state === 'held' || state === 'expiring') held.push({ state, meta: lockList.metaAt ? lockList.metaAt(i) : lockList.at(i).meta });
  }
  metrics().oldestLockAge.set(oldestLockAgeMs(held, Date.now()) / 1000);
  await slots;
}

export interface LockListQuery {
  prefix?: string;
  state?: LockState[];
  search?: string;
  cursor?: string;
  limit: number;
  pattern?: string;
  fresh?: '0' | '1';
  progressive?: '0' | '1';
}

/**
 * What a caller may see of the values of keys found by `pattern` that are not the console's own
 * locks: any string on a shared Redis (a password-reset token, a session…). Operators see them
 * raw; everyone else sees a fingerprint — a keyed hash (equal values, equal fingerprints, so the
 * quorum matrix still works), the length, and the TTL beside it — and searches only key names.
 */
export type ValueAccess = 'raw' | 'fingerprint';

/**
 * A page of the lock list from a snapshot at most 1 s old (5 s with a cursor). A progressive first
 * page (`progressive=1`, no cursor) waits for a snapshot while earlyPageDue() says to and
 * otherwise answers with an early page (lib/inspect/early-page.ts), `complete: false`.
 */
export async function listLocks(query: LockListQuery, access: ValueAccess = 'raw', who = 'console'): Promise<LockListResponse> {
  const runtime = getRuntime();
  const hide = access === 'fingerprint' && query.pattern !== undefined;
  const fingerprint = hide ? await fingerprinter(runtime.keyPrefix) : (view: QuorumView) => view;
  // Searching values would be an oracle for them (does any value contain "reset-7f"?): key names only.
  const keyOnlySearch = hide && Boolean(query.search?.trim());
  const run = cachedSnapshot(query.pattern, query.fresh === '1', who, query.cursor ? CURSOR_SNAPSHOT_MAX_AGE_MS : SNAPSHOT_MAX_AGE_MS);
  if (query.progressive === '1' && !query.cursor && !keyOnlySearch && (await earlyPageDue(run))) {
    const early = await earlyPage(
      runtime.clients,
      run,
      { prefix: query.prefix, state: query.state, search: query.search, limit: query.limit },
      {
        keyPrefix: runtime.keyPrefix,
        configuredNodes: runtime.endpoints.length,
        driftFactor: runtime.driftFactor,
        maxTtlMs: runtime.maxTtlMs,
      },
    );
    // A scan that ended meanwhile answers in full instead.
    if (!run.finished()) return earlyResponse(run, { ...early, items: early.items.map(fingerprint) }, runtime.endpoints.length);
  }
  const snap = await run.done;
  let page;
  try {
    const pageQuery = { prefix: query.prefix, state: query.state, search: query.search, cursor: query.cursor, limit: query.limit };
    page = keyOnlySearch
      ? pageLocks({ lockList: keyMatches(snap.lockList, query.search!) }, { ...pageQuery, search: undefined })
      : pageLocks(snap, pageQuery);
  } catch (err) {
    if (err instanceof InvalidCursorError) throw badRequest(err.message);
    throw err;
  }
  return {
    readAt: snap.readAt,
    scanMs: snap.durationMs,
    pattern: snap.pattern,
    quorum: snap.quorum,
    nodes: snap.nodes.map((n) => ({
      node: n.node,
      ok: n.ok,
      error: n.error,
      keys: n.keys,
      durationMs: n.durationMs,
      truncated: n.truncated,
    })),
    stateCounts: snap.stateCounts,
    flagCounts: snap.flagCounts,
    total: snap.lockList.length,
    matched: page.matched,
    items: page.items.map(fingerprint),
    nextCursor: page.nextCursor,
    complete: true,
    scannedKeys: snap.nodes.reduce((sum, n) => sum + n.keys, 0),
    index: fromIndex(snap),
  };
}

/** The locks whose resource or key contains `search` (case-insensitive), views made only for those. */
function keyMatches(list: LockList, search: string): LockList {
  const needle = search.trim().toLowerCase();
  const views: QuorumView[] = [];
  for (let i = 0; i < list.length; i++) {
    if (list.resourceAt(i).toLowerCase().includes(needle) || list.keyAt(i).toLowerCase().includes(needle)) views.push(list.at(i));
  }
  return arrayLockList(views);
}

/**
 * Views with foreign values replaced by fingerprints; the console's own lock keys (`<prefix>lock:`)
 * hold lock tokens and are left as they are. The scanner reads a value as `<token> <metadata>`:
 * the fingerprint is of the token (the whole value when it has no space), and whatever followed
 * it (metadata parsed from it) is dropped.
 */
async function fingerprinter(keyPrefix: string): Promise<(view: QuorumView) => QuorumView> {
  const { fingerprintKey } = await getAuth();
  const ownLocks = lockKeyPrefix(keyPrefix);
  const cache = new Map<string, string>();
  const fp = (value: string) => {
    let out = cache.get(value);
    if (out === undefined) {
      out = `${createHmac('sha256', fingerprintKey).update(value).digest('hex').slice(0, 10)}… (fingerprint, ${Buffer.byteLength(value)} bytes)`;
      cache.set(value, out);
    }
    return out;
  };
  return (view) => {
    if (view.key.startsWith(ownLocks)) return view;
    return {
      ...view,
      cells: view.cells.map((c) => ({ ...c, token: c.token === null ? null : fp(c.token), meta: null })),
      majorityToken: view.majorityToken === null ? null : fp(view.majorityToken),
      meta: null,
      fence: null,
    };
  };
}

function earlyResponse(run: SnapshotRun, early: EarlyPage, configuredNodes: number): LockListResponse {
  const stateCounts = Object.fromEntries(LOCK_STATES.map((s) => [s, 0])) as Record<(typeof LOCK_STATES)[number], number>;
  for (const item of early.items) stateCounts[item.state]++;
  const flagCounts = {
    noTtl: early.items.filter((i) => i.noTtlNodes.length > 0).length,
    overCeiling: early.items.filter((i) => i.overCeilingNodes.length > 0).length,
  };
  return {
    readAt: early.readAt,
    scanMs: early.scanMs,
    pattern: run.pattern,
    quorum: quorumSize(configuredNodes),
    nodes: early.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, keys: n.keys, durationMs: n.durationMs })),
    stateCounts,
    flagCounts,
    total: early.found,
    matched: early.matched,
    items: early.items,
    nextCursor: null,
    complete: false,
    scannedKeys: early.scannedKeys,
    index: false,
  };
}

export async function getLock(resource: string): Promise<LockDetailResponse> {
  const runtime = getRuntime();
  const detail = await lockDetail(runtime.clients, resource, {
    keyPrefix: runtime.keyPrefix,
    configuredNodes: runtime.endpoints.length,
    driftFactor: runtime.driftFactor,
    maxTtlMs: runtime.maxTtlMs,
  });
  return {
    readAt: detail.readAt,
    resource: detail.resource,
    key: detail.key,
    view: detail.view,
    nodes: detail.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, type: n.type })),
  };
}
