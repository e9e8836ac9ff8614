import 'server-only';
import type { SlotLockDetailResponse, SlotLockListResponse } from '../api/slot-locks';
import { quorumSize, readSlotLock, scanSlotLocks, SLOT_KINDS, type SlotKind, type SlotReading, type SlotReadOptions } from '../inspect';
import { metrics } from './metrics';
import { getRuntime } from './runtime';
import { inRootContext } from './root-context';
import { PATTERN_SCAN_MAX_KEYS } from './scan-budget';

/**
 * The console's read of semaphores and read-write locks. A listing scans the kind's namespace on
 * every master (bounded batches, at most PATTERN_SCAN_MAX_KEYS keys per master, the node marked
 * `truncated` past it). One scan per kind runs at a time and its result is shared, so however
 * many viewers poll, no scan is started per request (and no one's scan budget is spent). A SCAN
 * walks every key of a master, lock keys too, whatever its MATCH: with 100,000 lock keys per
 * master one kind's scan took 280–410 ms (three masters, machine load ~19), so a scan is reused
 * for ten times what it took, at least 1 s: the listing keeps each master at most about a tenth
 * busy per kind however large its keyspace, and on a small one is at most 1 s old. A detail reads
 * the lock's keys directly (no scan).
 */
const MIN_AGE_MS = 1_000;
/** A scan is reused for this many times its own duration (at least MIN_AGE_MS). */
const REUSE_FACTOR = 10;
type Entry = { at: number | null; maxAgeMs: number; done: Promise<SlotReading> };
const scans = new Map<SlotKind, Entry>();

function readOptions(): SlotReadOptions {
  const runtime = getRuntime();
  return {
    keyPrefix: runtime.keyPrefix,
    configuredNodes: runtime.endpoints.length,
    driftFactor: runtime.driftFactor,
    maxTtlMs: runtime.maxTtlMs,
    maxKeys: PATTERN_SCAN_MAX_KEYS,
  };
}

/** The kind's latest scan, shared while it runs and for REUSE_FACTOR times its duration after (at least MIN_AGE_MS). */
function cachedScan(kind: SlotKind): Promise<SlotReading> {
  const cache = scans;
  const hit = cache.get(kind);
  if (hit && (hit.at === null || Date.now() - hit.at < hit.maxAgeMs)) return hit.done;
  const entry: Entry = {
    at: null,
    maxAgeMs: MIN_AGE_MS,
    done: inRootContext(() => scanSlotLocks(getRuntime().clients, kind, readOptions())),
  };
  entry.done.then(
    (reading) => {
      entry.maxAgeMs = Math.max(MIN_AGE_MS, REUSE_FACTOR * reading.durationMs);
      entry.at = Date.now();
    },
    () => cache.delete(kind),
  );
  cache.set(kind, entry);
  return entry.done;
}

/** Every semaphore and read-write lock (or one kind), optionally those whose name contains `search`. */
export async function listSlotLocks(query: { kind?: SlotKind; search?: string }): Promise<SlotLockListResponse> {
  const kinds = query.kind ? [query.kind] : [...SLOT_KINDS];
  const scans = await Promise.all(kinds.map(cachedScan));
  const needle = query.search?.trim().toLowerCase() ?? '';
  const counts = { semaphore: 0, rwlock: 0 };
  for (const scan of scans) counts[scan.kind] = scan.locks.length;
  return {
    readAt: Math.min(...scans.map((s) => s.readAt)),
    quorum: quorumSize(getRuntime().endpoints.length),
    scans: scans.map((s) => ({
      kind: s.kind,
      scanMs: s.durationMs,
      nodes: s.nodes.map((n) => ({
        node: n.node,
        ok: n.ok,
        error: n.error,
        keys: n.keys,
        durationMs: n.durationMs,
        truncated: n.truncated,
      })),
    })),
    counts,
    items: scans.flatMap((s) => s.locks).filter((l) => !needle || l.resource.toLowerCase().includes(needle)),
  };
}

/** One semaphore or read-write lock read directly from every master. */
export async function getSlotLock(kind: SlotKind, resource: string): Promise<SlotLockDetailResponse> {
  const runtime = getRuntime();
  const read = await readSlotLock(runtime.clients, kind, resource, readOptions());
  return {
    readAt: read.readAt,
    kind,
    resource,
    quorum: quorumSize(runtime.endpoints.length),
    lock: read.locks[0] ?? null,
    nodes: read.nodes.map((n) => ({ node: n.node, ok: n.ok, error: n.error, keys: n.keys, durationMs: n.durationMs })),
  };
}

/**
 * For a Prometheus scrape: how many semaphores and read-write locks there are and how many holders
 * they have on a quorum, by kind (counts only: one series per lock would be unbounded), from the
 * shared listing (no scan of its own when one is young enough).
 */
export async function refreshSlotMetrics(): Promise<void> {
  const scans = await Promise.all(SLOT_KINDS.map(cachedScan));
  const m = metrics();
  for (const scan of scans) {
    m.slotLocks.set({ kind: scan.kind }, scan.locks.length);
    m.slotHolders.set(
      { kind: scan.kind },
      scan.locks.reduce((sum, lock) => sum + lock.holders.length, 0),
    );
  }
}
