import type { Redis } from 'ioredis';
import { elapsedMs, ensureReady, errorMessage, withTimeout } from './connection';
import { nodeFingerprint } from './fingerprint';
import { LockGrouper } from './grouping';
import { NodeKeyWatch } from './key-watch';
import { parseMeta } from './meta';
import { fillMissingMeta } from './meta-fill';
import { ensureNotifications, hasNotifyFlags, notifyFlags } from './notifications';
import { quorumSize, type QuorumOptions } from './quorum-view';
import { READ_KEYS } from './read-keys';
import { lockKeyPrefix, lockPattern, scanNode, SCAN_DEFAULTS, type NonStringKey } from './scan';
import { readLua } from './script';
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
 *   keys replaced wholesale: the notification connection dropped (a restart, a network fault;
 *   also when it drops during a snapshot's barrier or re-read), too many keys changed between two
 *   snapshots (`maxDirtyPerNode`), notifications were turned off, or its fingerprint moved
 *   (restart, resync, FLUSHALL/FLUSHDB/SWAPDB/DEBUG, CONFIG SET, evictions, the epoch sentinel:
 *   fingerprint.ts).
 * - A full scan starts only once the subscription is live (a barrier behind it): a key created in
 *   a part of the keyspace the scan has already passed is then heard as an event. The fingerprint
 *   is read before the scan's first batch.
 * - A key whose TTL has run out by the snapshot counts as absent (Redis no longer serves it), even
 *   before its `expired` event arrives; TTLs are aged from when the read was sent, so a key may
 *   leave one round trip early, never late.
 * - A node without notifications (not enabled, and not ours to configure), a replica, or a node
 *   still loading its data is scanned in full on every snapshot: slower, never wrong.
 * - The list of non-string keys matching the pattern is the last full scan's (their events are in
 *   classes the index does not ask for).
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

/**
 * Why the index scanned a node in full instead of re-reading what changed:
 * - `first-build`: it had no copy of the node yet;
 * - `events-lost`: the notification connection dropped (a restart, a network fault), or more keys
 *   changed between two snapshots than it keeps track of;
 * - `notifications-off`: the node stopped publishing them (turned off, or a restart dropped the setting);
 * - `keys-replaced`: the node's fingerprint moved (restart, FLUSHALL, SWAPDB, evictions, resync…);
 * - `no-notifications`: the node does not publish them and is not ours to configure: a full scan each time;
 * - `not-indexable`: a replica, or a node still loading its data;
 * - `subscribe-failed`: its notifications could not be subscribed to or caught up with (slow or unreachable).
 * A node that could not be read at all (ok: false) says why it was about to be scanned, if it was.
 */
export type RescanReason =
  'first-build' | 'events-lost' | 'notifications-off' | 'keys-replaced' | 'no-notifications' | 'not-indexable' | 'subscribe-failed';

/** A snapshot node, and how the index read it. */
export interface IndexedSnapshotNode extends SnapshotNode {
  /** True when the node's keys came from the index (plus a re-read of the changed ones), false for a full scan. */
  indexed: boolean;
  /** Keys read again because their node reported a change. */
  reread: number;
  /** Why the node was scanned in full (null when it was not). */
  rescan: RescanReason | null;
}

/** Keys per re-read (one Lua call each). */
const REREAD_CHUNK = 1_000;

export class LockIndex {
  private store: LockGrouper;
  private readonly watches: NodeKeyWatch[];
  private readonly nonString: { sample: NonStringKey[]; count: number }[];
  private readonly lockPrefix: string;
  private readonly timeoutMs: number;
  /** The snapshot under way, until it has settled (resolved or rejected). */
  private running: SnapshotRun | null = null;
  /** Nodes being scanned in full right now. */
  private scanningNodes = 0;
  private stopped = false;

  constructor(
    private readonly clients: readonly Redis[],
    private readonly options: LockIndexOptions,
  ) {
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
   * one is running gets that one (aborted only by the signal it was started with). Rejects only
   * when `signal` aborts; every node's part has settled by then.
   */
  startSnapshot(signal?: AbortSignal): SnapshotRun {
    if (this.stopped) throw new Error('the lock index is stopped');
    if (this.running) return this.running;
    const readAt = Date.now();
    const started = performance.now();
    let result: Snapshot | null = null;
    let run: SnapshotRun | null = null;
    // Settled before anyone awaiting `done` resumes: a call from there starts a new snapshot.
    const settle = () => {
      if (this.running === run) this.running = null;
    };
    const done = this.refresh(readAt, started, signal).then(
      (snap) => {
        result = snap;
        settle();
        return snap;
      },
      (err: unknown) => {
        settle();
        throw err;
      },
    );
    done.catch(() => undefined);
    run = {
      readAt,
      pattern: this.pattern,
      done,
      finished: () => result,
      elapsedMs: () => elapsedMs(started),
      scanning: () => this.running === run && this.scanningNodes > 0,
      keysPerNode: () => this.store.counts.slice(),
      found: () => this.store.size - this.store.emptyGroups,
      firstKeys: (limit, accept) => this.store.firstKeys(limit, accept),
    };
    this.running = run;
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
    // Every node's part settles before the snapshot does, even when one rejects (an abort): the
    // next snapshot must not overlap a node refresh still writing to the store.
    const settled = await Promise.allSettled(this.clients.map((_, i) => this.refreshNode(i, signal)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const nodes = settled.map((s) => (s as PromiseFulfilledResult<IndexedSnapshotNode>).value);
    await fillMissingMeta(this.clients, this.store, { readable: nodes.map((n) => n.ok), timeoutMs: this.timeoutMs, signal });
    const configuredNodes = this.options.configuredNodes ?? this.clients.length;
    const { list, stateCounts, flagCounts, shownPerReading } = this.store.viewList(
      nodes,
      {
        configuredNodes,
        driftFactor: this.options.driftFactor,
        expiringThresholdMs: this.options.expiringThresholdMs,
        maxTtlMs: this.options.maxTtlMs,
      },
      performance.now(),
      true,
    );
    // Keys held nowhere any more leave empty groups behind: drop them once they are the many.
    if (this.store.emptyGroups > 10_000 && this.store.emptyGroups * 2 > this.store.size) this.store = this.store.compacted();
    // Keys per node as the views show them (a key past its TTL is gone even before its event).
    nodes.forEach((n, i) => (n.keys = n.ok ? shownPerReading[i]! : (this.store.counts[i] ?? 0)));
    return {
      readAt,
      durationMs: elapsedMs(started),
      pattern: this.pattern,
      configuredNodes,
      quorum: quorumSize(configuredNodes),
      nodes,
      stateCounts,
      flagCounts,
      lockList: list,
      get locks() {
        return list.toArray();
      },
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
    let rescan: RescanReason | null = null;
    let scanning = false;
    const result = (ok: boolean, error: string | null, truncated = false): IndexedSnapshotNode => ({
      node,
      ok,
      error,
      keys: 0,
      nonString: this.nonString[i]!.sample,
      nonStringCount: this.nonString[i]!.count,
      truncated,
      batches,
      durationMs: elapsedMs(t0),
      indexed,
      reread,
      rescan,
    });
    try {
      await ensureReady(client, this.timeoutMs, signal);
      let reason: RescanReason = watch.fingerprint === null ? 'first-build' : 'events-lost';
      if (watch.intact) {
        // The index holds this node: catch up with its events (the barrier), check that nothing
        // replaced its keys wholesale, then read again only what changed. Events lost meanwhile
        // (the generation moved) send it to a full scan instead.
        const generation = watch.generation;
        const [, fp, flags] = await withTimeout(
          Promise.all([watch.barrier(this.timeoutMs), nodeFingerprint(client, this.options.keyPrefix), notifyFlags(client)]),
          this.timeoutMs,
          `catching up with node ${node}`,
          signal,
        );
        if (!hasNotifyFlags(flags)) reason = 'notifications-off';
        else if (!fp.indexable) reason = 'not-indexable';
        else if (fp.value !== watch.fingerprint) reason = 'keys-replaced';
        else if (watch.generation === generation) {
          reread = await this.reread(i, signal, () => batches++);
          if (watch.generation === generation) return result(true, null);
        }
        watch.lose(); // notifications off or lost, or the keys replaced: scan it
      }
      // Scan in full: the first time, after events may have been lost, or on every snapshot when
      // the node has no notifications. Subscribed first: a key created in a part of the keyspace the
      // scan has passed is only ever seen as an event. The fingerprint is read before the scan's
      // first batch: anything that replaces keys without events later changes it.
      indexed = false;
      rescan = reason;
      this.scanningNodes++;
      scanning = true;
      const live = await this.catchUp(i);
      const generation = typeof live === 'number' ? live : null;
      if (typeof live !== 'number') rescan = live; // why this is a plain scan
      const fp =
        generation === null
          ? null
          : await withTimeout(
              nodeFingerprint(client, this.options.keyPrefix),
              this.timeoutMs,
              `reading node ${node}'s fingerprint`,
              signal,
            );
      watch.dirty.clear();
      this.store.clearReading(i);
      const scan = await scanNode(client, node, {
        keyPrefix: this.options.keyPrefix,
        pattern: this.pattern,
        count: this.options.count,
        maxValueBytes: this.options.maxValueBytes,
        batchTimeoutMs: this.timeoutMs,
        signal,
        metaShare: { index: i, of: this.clients.length },
        sink: this.store.sinkFor(i),
      });
      batches = scan.batches;
      this.nonString[i] = { sample: scan.nonString, count: scan.nonStringCount };
      if (!scan.ok) return result(false, scan.error);
      if (generation === null || fp === null || !fp.indexable) {
        if (generation !== null) rescan = 'not-indexable';
        watch.dirty.clear(); // a plain scan: nothing to keep up with
        return result(true, null, scan.truncated);
      }
      if (!scan.truncated && watch.generation === generation) {
        watch.intact = true;
        watch.fingerprint = fp.value;
      }
      // Keys that changed while the scan ran may have been read before the change.
      reread = await this.reread(i, signal, () => batches++);
      return result(true, null, scan.truncated);
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      return result(false, errorMessage(err));
    } finally {
      if (scanning) this.scanningNodes--;
    }
  }

  /**
   * Make sure node `i` publishes keyevents and that we hear them: subscribed, notifications on
   * (turned on again where ours to manage), and a barrier behind both, after which every change
   * the node makes reaches the watch. Resolves with the watch's generation before the barrier (a
   * loss from then on moves it), or why the node gets a plain scan instead.
   */
  private async catchUp(i: number): Promise<number | 'no-notifications' | 'subscribe-failed'> {
    const client = this.clients[i]!;
    const watch = this.watches[i]!;
    const manage = this.options.manageConfig ?? false;
    try {
      const outcome = await watch.subscribe(manage, this.timeoutMs);
      if (outcome !== 'subscribed') return outcome === 'no-notifications' ? outcome : 'subscribe-failed';
      // Bounded like every other read of a node here: a node that stops answering between the
      // subscription and this read would otherwise hold the snapshot (and every request sharing it).
      const publishing = await withTimeout(
        (async () => hasNotifyFlags(await notifyFlags(client)) || (manage && (await ensureNotifications(client, true))))(),
        this.timeoutMs,
        `reading node ${i + 1}'s notification settings`,
      );
      if (!publishing) return 'no-notifications';
      // The PING is answered after the subscription was (re)confirmed and the flags were set.
      const generation = watch.generation;
      await watch.barrier(this.timeoutMs);
      return generation;
    } catch {
      return 'subscribe-failed';
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
      const reply = await withTimeout(
        readLua(this.clients[i]!, READ_KEYS, chunk, args),
        this.timeoutMs,
        `re-reading keys on node ${i + 1}`,
        signal,
      );
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
