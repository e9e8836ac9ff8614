import type { Redis } from 'ioredis';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import { nodeFingerprint } from './fingerprint';
import { LockGrouper } from './grouping';
import { NodeKeyWatch } from './key-watch';
import { parseMeta } from './meta';
import { fillMissingMeta } from './meta-fill';
import { ensureNotifications, hasNotifyFlags, notifyFlags } from './notifications';
import { LOCK_STATES, quorumSize, type LockState, type QuorumOptions } from './quorum-view';
import { READ_KEYS } from './read-keys';
import { lockKeyPrefix, lockPattern, scanNode, SCAN_DEFAULTS, type NonStringKey } from './scan';
import { runLua } from './script';
import type { Snapshot, SnapshotNode, SnapshotRun } from './snapshot';

/** A snapshot made by the index: each node says whether it came from the index or a full scan. */
export interface IndexedSnapshot extends Snapshot {
  nodes: IndexedSnapshotNode[];
}

/**
 * A live index of every node's lock keys: a snapshot without rescanning the keyspace.
 *
 * The first snapshot scans every node in full (as snapshot.ts does) into a grouper that the index
 * keeps. From then on each node's keyspace notifications name the lock keys that changed
 * (key-watch.ts), and a snapshot re-reads only those, in Lua batches of 1,000, then makes the
 * quorum views from the kept copy. With 5 × 100,000 locks and nothing changing, that is a
 * fraction of the cost of a scan (bench workload 6).
 *
 * Why the copy stays true (a stale lock view in an incident is worse than a slow one):
 * - A snapshot first waits, per node, for a barrier on the notification connection: every change
 *   the node made before the snapshot began is then marked dirty, and is read again.
 * - A node is scanned again in full, instead of trusted, when events may have been lost or its
 *   keys replaced wholesale: the notification connection dropped (a restart, a network fault),
 *   too many keys changed between two snapshots (`maxDirtyPerNode`), notifications were turned
 *   off, or its fingerprint moved (restart, resync, FLUSHALL/FLUSHDB/SWAPDB/DEBUG: fingerprint.ts).
 * - A key whose TTL has run out by the snapshot counts as absent (Redis no longer serves it), even
 *   before its `expired` event arrives.
 * - A node without notifications (not enabled, and not ours to configure) is scanned in full on
 *   every snapshot: slower, never wrong.
 * Only our layout (`<prefix>lock:*`) is indexed; other patterns use snapshot().
 */
export interface LockIndexOptions extends Partial<QuorumOptions> {
  /** Our key prefix, e.g. `rl:`. */
  keyPrefix: string;
  /** May the index turn on keyspace notifications (CONFIG SET) on nodes that lack them? @default false */
  manageConfig?: boolean;
  /** Per Lua batch, per barrier, and the wait for a node that is not connected. @default 2000 */
  batchTimeoutMs?: number;
  /** SCAN COUNT per batch of a full scan. @default 2000 */
  count?: number;
  /** Changed keys kept per node between two snapshots before it is rescanned instead. @default 200,000 */
  maxDirtyPerNode?: number;
  /** Values (tokens) longer than this (bytes) are cut. @default 1024 */
  maxValueBytes?: number;
}

/** A snapshot node, and how the index read it. */
export interface IndexedSnapshotNode extends SnapshotNode {
  /** True when the node's keys came from the index (plus a re-read of the changed ones), false for a full scan. */
  indexed: boolean;
  /** Keys read again because their node reported a change. */
  reread: number;
}

/** Since when (local clock) every change on a node reaches its watch, and the watch's generation then. */
interface LiveSince {
  from: number;
  generation: number;
}

/** Keys per re-read (one Lua call each). */
const REREAD_CHUNK = 1_000;

export class LockIndex {
  private store: LockGrouper;
  private readonly watches: NodeKeyWatch[];
  private readonly nonString: { sample: NonStringKey[]; count: number }[];
  private readonly lockPrefix: string;
  private readonly timeoutMs: number;
  private running: SnapshotRun | null = null;
  private stopped = false;

  constructor(private readonly clients: readonly Redis[], private readonly options: LockIndexOptions) {
    this.lockPrefix = lockKeyPrefix(options.keyPrefix);
    this.timeoutMs = options.batchTimeoutMs ?? SCAN_DEFAULTS.batchTimeoutMs;
    this.store = new LockGrouper(clients.length, this.lockPrefix);
    this.watches = clients.map((client) => new NodeKeyWatch(client, this.lockPrefix, options.maxDirtyPerNode ?? 200_000));
    this.nonString = clients.map(() => ({ sample: [], count: 0 }));
  }

  /** The MATCH pattern the index covers. */
  get pattern(): string {
    return lockPattern(this.options.keyPrefix);
  }

  /**
   * Bring the index up to date and take a snapshot of it. Snapshots do not overlap: a call while
   * one is running gets that one. Rejects only when `signal` aborts.
   */
  startSnapshot(signal?: AbortSignal): SnapshotRun {
    if (this.stopped) throw new Error('the lock index is stopped');
    if (this.running && !this.running.finished()) return this.running;
    const readAt = Date.now();
    const started = performance.now();
    let result: Snapshot | null = null;
    const done = this.refresh(readAt, started, signal).then((snap) => (result = snap));
    const run: SnapshotRun = {
      readAt,
      pattern: this.pattern,
      done,
      finished: () => result,
      elapsedMs: () => elapsedMs(started),
      keysPerNode: () => this.store.counts.slice(),
      found: () => this.store.size - this.store.emptyGroups,
      firstKeys: (limit, accept) => this.store.firstKeys(limit, accept),
    };
    this.running = run;
    done.catch(() => undefined);
    return run;
  }

  /** startSnapshot(), awaited. */
  snapshot(signal?: AbortSignal): Promise<IndexedSnapshot> {
    return this.startSnapshot(signal).done as Promise<IndexedSnapshot>;
  }

  /** Unsubscribe from every node; the index cannot be used afterwards. */
  stop(): void {
    this.stopped = true;
    for (const watch of this.watches) watch.stop();
  }

  private async refresh(readAt: number, started: number, signal?: AbortSignal): Promise<IndexedSnapshot> {
    const nodes = await Promise.all(this.clients.map((_, i) => this.refreshNode(i, signal)));
    await fillMissingMeta(this.clients, this.store, { readable: nodes.map((n) => n.ok), timeoutMs: this.timeoutMs, signal });
    const configuredNodes = this.options.configuredNodes ?? this.clients.length;
    const locks = this.store.views(nodes, {
      configuredNodes, driftFactor: this.options.driftFactor, expiringThresholdMs: this.options.expiringThresholdMs,
    }, performance.now(), true);
    const stateCounts = Object.fromEntries(LOCK_STATES.map((s) => [s, 0])) as Record<LockState, number>;
    for (const lock of locks) stateCounts[lock.state]++;
    // Keys held nowhere any more leave empty groups behind: drop them once they are the many.
    if (this.store.emptyGroups > 10_000 && this.store.emptyGroups * 2 > this.store.size) this.store = this.store.compacted();
    // Keys per node as the views show them (a key past its TTL is gone even before its event).
    const present = nodes.map(() => 0);
    for (const lock of locks) lock.cells.forEach((c, i) => (present[i]! += c.present ? 1 : 0));
    nodes.forEach((n, i) => (n.keys = n.ok ? present[i]! : (this.store.counts[i] ?? 0)));
    return {
      readAt, durationMs: elapsedMs(started), pattern: this.pattern, configuredNodes, quorum: quorumSize(configuredNodes), nodes, locks, stateCounts,
    };
  }

  /** Bring node `i`'s part of the index up to date: a barrier and the re-read of what changed, or a full scan. */
  private async refreshNode(i: number, signal?: AbortSignal): Promise<IndexedSnapshotNode> {
    const node = i + 1;
    const client = this.clients[i]!;
    const watch = this.watches[i]!;
    const t0 = performance.now();
    let batches = 0;
    let indexed = true;
    let reread = 0;
    const result = (ok: boolean, error: string | null, truncated = false): IndexedSnapshotNode => ({
      node, ok, error, keys: 0, nonString: this.nonString[i]!.sample, nonStringCount: this.nonString[i]!.count,
      truncated, batches, durationMs: elapsedMs(t0), indexed, reread,
    });
    try {
      await ensureReady(client, this.timeoutMs, signal);
      if (watch.intact) {
        // The index holds this node: catch up with its events (the barrier) and check that
        // nothing replaced its keys wholesale, then read again only what changed.
        const [, fp, flags] = await withTimeout(Promise.all([watch.barrier(this.timeoutMs), nodeFingerprint(client), notifyFlags(client)]),
          this.timeoutMs, `catching up with node ${node}`, signal);
        if (hasNotifyFlags(flags) && fp === watch.fingerprint) {
          reread = await this.reread(i, signal, () => batches++);
          return result(true, null);
        }
        watch.lose(); // notifications turned off (or a restart dropped them), or the keys were replaced
      }
      // Scan in full: the first time, after events may have been lost, or on every snapshot when
      // the node has no notifications. The scan starts at once; the subscription is set up beside
      // it (see catchUp), and the keys read before it was live are read again afterwards.
      indexed = false;
      watch.dirty.clear();
      this.store.clearReading(i);
      // Sent before the scan's first batch on the same connection, so it runs first: a FLUSHALL
      // (no events) any time after that changes the fingerprint the next snapshot compares.
      const fingerprint = nodeFingerprint(client);
      fingerprint.catch(() => undefined);
      const live: { known: boolean; state: LiveSince | null } = { known: false, state: null };
      const readEarly: string[] = [];
      const sink = this.store.sinkFor(i);
      const subscription = this.catchUp(i).then((state) => {
        live.state = state;
        live.known = true;
      });
      const scan = await scanNode(client, node, {
        keyPrefix: this.options.keyPrefix, pattern: this.pattern, count: this.options.count, maxValueBytes: this.options.maxValueBytes,
        batchTimeoutMs: this.timeoutMs, signal, metaShare: { index: i, of: this.clients.length },
        sink: {
          add: (key, token, pttlMs, meta, metaRead, readAt) => {
            sink.add(key, token, pttlMs, meta, metaRead, readAt);
            // Read before events were sure to be published and heard: it may have changed unseen.
            if (!live.known || (live.state !== null && readAt < live.state.from)) readEarly.push(key);
          },
        },
      });
      await subscription;
      batches = scan.batches;
      this.nonString[i] = { sample: scan.nonString, count: scan.nonStringCount };
      if (!scan.ok) return result(false, scan.error);
      const state = live.state;
      if (state === null) return result(true, null, scan.truncated); // no notifications: a plain scan
      const fp = await withTimeout(fingerprint, this.timeoutMs, `reading node ${node}'s fingerprint`, signal);
      if (!scan.truncated && watch.generation === state.generation) {
        watch.intact = true;
        watch.fingerprint = fp;
      }
      // Keys read before the subscription was live, and keys that changed while the scan ran.
      for (const key of readEarly) if (!watch.dirty.has(key)) watch.dirty.set(key, watch.seq);
      reread = await this.reread(i, signal, () => batches++);
      return result(true, null, scan.truncated);
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      return result(false, errorMessage(err));
    }
  }

  /**
   * Make sure node `i` publishes keyevents and that we hear them: subscribed, notifications on
   * (turned on again where ours to manage), and a barrier behind both. Resolves with the local time
   * from which every change the node makes reaches `dirty`, and the watch's generation then
   * (a later loss moves it); null when the node does not publish them or cannot be reached.
   */
  private async catchUp(i: number): Promise<LiveSince | null> {
    const client = this.clients[i]!;
    const watch = this.watches[i]!;
    const manage = this.options.manageConfig ?? false;
    try {
      if (!(await watch.subscribe(manage, this.timeoutMs))) return null;
      if (!hasNotifyFlags(await notifyFlags(client)) && !(manage && (await ensureNotifications(client, true)))) return null;
      // The PING is answered after the subscription was (re)confirmed and the flags were set:
      // every change after its answer is heard. A loss from here on moves the generation.
      const generation = watch.generation;
      await watch.barrier(this.timeoutMs);
      return { from: performance.now(), generation };
    } catch {
      return null;
    }
  }

  /** Read node `i`'s dirty keys again and put what it says into the index. */
  private async reread(i: number, signal: AbortSignal | undefined, onBatch: () => void): Promise<number> {
    const watch = this.watches[i]!;
    if (watch.dirty.size === 0) return 0;
    const keys = [...watch.dirty.keys()];
    const sentAtSeq = watch.seq;
    const args = [this.lockPrefix, this.options.maxValueBytes ?? SCAN_DEFAULTS.maxValueBytes];
    for (let start = 0; start < keys.length; start += REREAD_CHUNK) {
      const chunk = keys.slice(start, start + REREAD_CHUNK);
      const sentAt = performance.now();
      const reply = await withTimeout(runLua(this.clients[i]!, READ_KEYS, chunk, args), this.timeoutMs, `re-reading keys on node ${i + 1}`, signal);
      onBatch();
      if (!Array.isArray(reply)) throw new Error(`node ${i + 1} sent an unexpected reply`);
      chunk.forEach((key, k) => {
        const value: unknown = reply[3 * k];
        if (typeof value === 'string') this.store.add(i, key, value, Number(reply[3 * k + 1]), parseMeta(reply[3 * k + 2]), true, sentAt);
        else this.store.remove(i, key);
        watch.settle(key, sentAtSeq);
      });
    }
    return keys.length;
  }
}
