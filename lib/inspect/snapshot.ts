import type { Redis } from 'ioredis';
import { elapsedMs } from './connection';
import { fillMissingMeta } from './meta-fill';
import { LockGrouper } from './grouping';
import { LOCK_STATES, quorumSize, type LockState, type QuorumOptions, type QuorumView } from './quorum-view';
import { lockKeyPrefix, lockPattern, metaKeyPrefix, scanNode, SCAN_DEFAULTS, type NonStringKey, type ScanOptions } from './scan';

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
  /** One view per key found on any readable node, sorted by resource (then key). */
  locks: QuorumView[];
  /** How many locks are in each state. */
  stateCounts: Record<LockState, number>;
}

/**
 * Scan every node in parallel and group the keys into quorum views. Holder metadata is read on one
 * node per key (then fetched for the keys that node did not hold). A node that fails or times
 * out is reported in `nodes` (ok: false) and its cells are unknown; the snapshot itself only
 * rejects when `options.signal` aborts. Node ids are positions in `clients` plus one.
 */
export async function snapshot(clients: readonly Redis[], options: SnapshotOptions): Promise<Snapshot> {
  options.signal?.throwIfAborted();
  const readAt = Date.now();
  const started = performance.now();
  const pattern = options.pattern ?? lockPattern(options.keyPrefix);
  const configuredNodes = options.configuredNodes ?? clients.length;
  const withMeta = options.withMeta ?? SCAN_DEFAULTS.withMeta;
  // Metadata is the same on every holder: each node reads it for its share of the keys only.
  // Keys are grouped batch by batch as they arrive, so the grouping overlaps the nodes' work.
  const grouper = new LockGrouper(clients.length, lockKeyPrefix(options.keyPrefix));
  const scans = await Promise.all(clients.map((client, i) => scanNode(client, i + 1, {
    ...options, pattern, metaShare: options.metaShare ?? { index: i, of: clients.length }, sink: grouper.sinkFor(i),
  })));
  if (withMeta) {
    await fillMissingMeta(clients, grouper, {
      readable: scans.map((s) => s.ok),
      metaPrefix: metaKeyPrefix(options.keyPrefix),
      timeoutMs: options.batchTimeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs,
      signal: options.signal,
    });
  }
  // PTTLs are aged from when each batch was sent to now: every view is as of the snapshot's end.
  const quorumOptions = { configuredNodes, driftFactor: options.driftFactor, expiringThresholdMs: options.expiringThresholdMs };
  const locks = grouper.views(scans, quorumOptions, performance.now());
  const stateCounts = Object.fromEntries(LOCK_STATES.map((s) => [s, 0])) as Record<LockState, number>;
  for (const lock of locks) stateCounts[lock.state]++;
  return {
    readAt,
    durationMs: elapsedMs(started),
    pattern,
    configuredNodes,
    quorum: quorumSize(configuredNodes),
    nodes: scans.map((s) => ({
      node: s.node, ok: s.ok, error: s.error, keys: grouper.counts[s.node - 1] ?? 0, nonString: s.nonString, nonStringCount: s.nonStringCount,
      truncated: s.truncated, batches: s.batches, durationMs: s.durationMs,
    })),
    locks,
    stateCounts,
  };
}
