import 'server-only';
import type { SlotLockDetailResponse, SlotLockListResponse } from '../api/slot-locks';
import { quorumSize, readSlotLock, scanSlotLocks, SLOT_KINDS, type SlotKind, type SlotReading, type SlotReadOptions } from '../inspect';
import { getRuntime } from './runtime';
import { inRootContext } from './root-context';
import { PATTERN_SCAN_MAX_KEYS } from './scan-budget';

/**
 * The console's read of semaphores and read-write locks. A listing scans the kind's namespace on
 * every master (bounded batches, at most PATTERN_SCAN_MAX_KEYS keys per master, the node marked
 * `truncated` past it). One scan per kind runs at a time and its result is shared for up to 1 s,
 * so however many viewers poll, a kind costs the masters one scan a second at most (no scan is
 * started per request, so no one's scan budget is spent). A detail reads the lock's keys directly.
 */
const MAX_AGE_MS = 1_000;
const KEY = Symbol.for('redlock-console.slot-scans');
type Holder = { [KEY]?: Map<SlotKind, { at: number | null; done: Promise<SlotReading> }> };

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

/** The kind's latest scan, shared while it runs and for MAX_AGE_MS after. */
function cachedScan(kind: SlotKind): Promise<SlotReading> {
  const holder = globalThis as Holder;
  const cache = (holder[KEY] ??= new Map());
  const hit = cache.get(kind);
  if (hit && (hit.at === null || Date.now() - hit.at < MAX_AGE_MS)) return hit.done;
  const entry: { at: number | null; done: Promise<SlotReading> } = {
    at: null,
    done: inRootContext(() => scanSlotLocks(getRuntime().clients, kind, readOptions())),
  };
  entry.done.then(
    () => (entry.at = Date.now()),
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
