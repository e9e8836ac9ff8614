import type { Redis } from 'ioredis';
import { elapsedMs } from './connection';
import { fillMissingMeta } from './meta-fill';
import { LockGrouper } from './grouping';
import { quorumSize, type FlagCounts, type LockState, type QuorumOptions, type QuorumView } from './quorum-view';
import type { LockList } from './view-list';
import { lockKeyPrefix, lockPattern, scanNode, SCAN_DEFAULTS, type NonStringKey, type ScanOptions } from './scan';

/** Scan options (pattern, batch size, metadata, timeouts, signal) and quorum options. */
export interface SnapshotOptions extends ScanOptions, Partial<QuorumOptions> {}

/** How the scan of one node went. */
export interface SnapshotNode {
  /** Node id: position in the clients array + 1. */
  node: number;
  ok: boolean;
  error: string | null;
  /** Lock keys (string keys matching the pattern) found on the node (before the failure, when not ok). */
  keys: number;
  nonString: NonStringKey[];
  nonStringCount: number;
  truncated: boolean;
  batches: number;
  durationMs: number;
}

/** Every node's lock keys at about one moment, grouped into quorum views. */
export interface Snapshot {
  /** Local clock (ms) when the scan started. PTTLs and validity are as of its end (readAt + durationMs). */
  readAt: number;
  durationMs: number;
  pattern: string;
  configuredNodes: number;
  quorum: number;
  nodes: SnapshotNode[];
  /**
   * One view per key found on any readable node, sorted by resource (then key). Made on first
   * use: to page, count or filter, read `lockList`, which makes only the views asked for.
   */
  readonly locks: QuorumView[];
  /** The same locks, read by position (view-list.ts). */
  lockList: LockList;
  /** How many locks are in each state. */
  stateCounts: Record<LockState, number>;
  /** How many locks have a key without TTL, or one whose PTTL is above the lease ceiling. */
  flagCounts: FlagCounts;
}

/**
 * A snapshot under way: the full result when it ends, and a look at what the scan has found so
 * far (an early page is made of that; see early-page.ts).
 */
export interface SnapshotRun {
  /** Local clock (ms) when the scan started. */
  readonly readAt: number;
  /** The MATCH pattern scanned. */
  readonly pattern: string;
  /** Resolves to the full snapshot; rejects only when `options.signal` aborts. */
  readonly done: Promise<Snapshot>;
  /** The snapshot once `done` has resolved, else null. */
  finished(): Snapshot | null;
  /** Milliseconds since the scan started. */
  elapsedMs(): number;
  /**
   * Is a node being scanned in full now? Such a run takes seconds on a large keyspace; one that is
   * only catching up with what changed (the live index) takes a fraction of that.
   */
  scanning(): boolean;
  /** Distinct keys found so far on each node (index: node − 1). */
  keysPerNode(): readonly number[];
  /** Distinct keys found so far, all nodes together. */
  found(): number;
  /** The first `limit` keys found so far in view order among those `accept` takes (see LockGrouper.firstKeys). */
  firstKeys(
    limit: number,
    accept: (resource: string, key: string) => boolean,
  ): { keys: { resource: string; key: string }[]; accepted: number };
}

/**
 * Start scanning every node in parallel, grouping the keys into quorum views as they arrive.
 * Holder metadata (the JSON after the token in each value) is shipped from one node per key
 * (then fetched for the keys that node did not hold). A node that fails or times out is reported
 * in `nodes` (ok: false) and its cells are unknown; `done` only rejects when `options.signal`
 * aborts. Node ids are positions in `clients` plus one.
 */
export function startSnapshot(clients: readonly Redis[], options: SnapshotOptions): SnapshotRun {
  options.signal?.throwIfAborted();
  const readAt = Date.now();
  const started = performance.now();
  const pattern = options.pattern ?? lockPattern(options.keyPrefix);
  const configuredNodes = options.configuredNodes ?? clients.length;
  const withMeta = options.withMeta ?? SCAN_DEFAULTS.withMeta;
  // Metadata is the same on every holder: each node sends it for its share of the keys only.
  // Keys are grouped batch by batch as they arrive, so the grouping overlaps the nodes' work.
  const grouper = new LockGrouper(clients.length, lockKeyPrefix(options.keyPrefix));
  let result: Snapshot | null = null;
  let scanning = true;
  const run = async (): Promise<Snapshot> => {
    const scans = await Promise.all(
      clients.map((client, i) =>
        scanNode(client, i + 1, {
          ...options,
          pattern,
          metaShare: options.metaShare ?? { index: i, of: clients.length },
          sink: grouper.sinkFor(i),
        }),
      ),
    ).finally(() => {
      scanning = false;
    });
    if (withMeta) {
      await fillMissingMeta(clients, grouper, {
        readable: scans.map((s) => s.ok),
        timeoutMs: options.batchTimeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs,
        signal: options.signal,
      });
    }
    // PTTLs are aged from when each batch was sent to now: every view is as of the snapshot's end.
    const quorumOptions = {
      configuredNodes,
      driftFactor: options.driftFactor,
      expiringThresholdMs: options.expiringThresholdMs,
      maxTtlMs: options.maxTtlMs,
    };
    // This grouper is not changed again: the list reads its columns without a copy.
    const { list, stateCounts, flagCounts } = grouper.viewList(scans, quorumOptions, performance.now(), false, false);
    result = {
      readAt,
      durationMs: elapsedMs(started),
      pattern,
      configuredNodes,
      quorum: quorumSize(configuredNodes),
      nodes: scans.map((s) => ({
        node: s.node,
        ok: s.ok,
        error: s.error,
        keys: grouper.counts[s.node - 1] ?? 0,
        nonString: s.nonString,
        nonStringCount: s.nonStringCount,
        truncated: s.truncated,
        batches: s.batches,
        durationMs: s.durationMs,
      })),
      lockList: list,
      get locks() {
        return list.toArray();
      },
      stateCounts,
      flagCounts,
    };
    return result;
  };
  return {
    readAt,
    pattern,
    done: run(),
    finished: () => result,
    elapsedMs: () => elapsedMs(started),
    scanning: () => scanning,
    keysPerNode: () => grouper.counts.slice(),
    found: () => grouper.size,
    firstKeys: (limit, accept) => grouper.firstKeys(limit, accept),
  };
}

/** Scan every node and group the keys into quorum views: startSnapshot(), awaited to the end. */
export function snapshot(clients: readonly Redis[], options: SnapshotOptions): Promise<Snapshot> {
  try {
    return startSnapshot(clients, options).done;
  } catch (err) {
    return Promise.reject(err as Error);
  }
}
