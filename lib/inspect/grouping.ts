import {
  inNodeOrder,
  LOCK_STATES,
  type LockCell,
  type LockState,
  type QuorumOptions,
  type QuorumView,
  type ScannedLock,
} from './quorum-view';
import { FrozenLockList, makeView, stateCode, type FrozenColumns } from './view-list';
import type { FlagCounts } from './quorum-view';

/**
 * Grouping per-node scans by key. Pure (no I/O). A full snapshot groups 5 × 100,000 keys, so the
 * store is columnar: a Map from key to a group number and flat arrays of tokens, PTTLs and
 * metadata (group × reading), fed key by key as the scan batches arrive. No object is made per
 * key and node, which keeps the garbage collector out of the way; objects are made once, for
 * the quorum views.
 */

/** One node's scan, as the grouping needs it: unreadable nodes give unknown cells. */
export interface NodeReading {
  node: number;
  ok: boolean;
  keys: readonly ScannedLock[];
}

/**
 * Receives one node's keys, one call per key. `readAt` is when the batch was read
 * (`performance.now()`), so a PTTL can be aged to the moment the views are made.
 */
export interface LockSink {
  add(key: string, token: string, pttlMs: number, meta: Record<string, string> | null, metaRead: boolean, readAt: number): void;
}

/**
 * Groups keys by key as they arrive. A key seen twice on one node keeps its last reading. A
 * grouper made for one scan is filled once; the live index (lock-index.ts) keeps one for good and
 * also removes cells (`remove`, `clearReading`), so it keeps the sort order of its groups between
 * views and drops the groups left empty (`compacted`).
 */
export class LockGrouper {
  private readonly groupOf = new Map<string, number>();
  private readonly keys: string[] = [];
  private readonly resources: string[] = [];
  /** Column per reading: entry g × readingCount + reading. */
  private tokens: (string | undefined)[] = [];
  /** When the key expires (readAt + PTTL, on the readAt clock), or −1 for a key without TTL. */
  private expiries: number[] = [];
  /** The metadata read there; null: read, there is none; undefined: not read there. */
  private metas: (Record<string, string> | null | undefined)[] = [];
  /**
   * The three columns above are shared with a list viewList() handed out: the next write to a
   * cell copies them first (appending a group does not touch a cell a list reads). Snapshots of
   * the live index with nothing changed between them then copy nothing.
   */
  private shared = false;
  /** Present cells per group (a group whose cells were all removed is empty: see `compacted`). */
  private readonly live: number[] = [];
  /** Groups with no present cell. */
  private empty = 0;
  /** Groups in view order (resource, then key), as of the last sortGroups(); later groups are merged in by the next. */
  private order: number[] = [];
  /** Distinct keys present per reading. */
  readonly counts: number[];
  /**
   * What metaWanted() must look at next time. Its answer for a group depends only on that group's
   * cells and on which readings are readable, so after one call with the same readable readings it
   * is enough to look again at the groups changed since (`metaDirty`) and at those it named then
   * (their metadata may not have been found). `metaAll`: every group (nothing checked yet, or a
   * whole reading was cleared); `metaReadable`: the readable readings of the last call.
   */
  private metaAll = true;
  private metaReadable = '';
  private readonly metaDirty = new Set<number>();
  private metaPending: number[] = [];

  /**
   * @param readingCount how many readings (nodes) there are
   * @param lockPrefix `<prefix>lock:`: a key's resource is the key without it (else the key itself)
   */
  constructor(
    readonly readingCount: number,
    private readonly lockPrefix = '',
  ) {
    this.counts = new Array<number>(readingCount).fill(0);
  }

  /** Distinct keys (groups), empty ones included. */
  get size(): number {
    return this.keys.length;
  }

  /** Groups whose cells were all removed since they were added. */
  get emptyGroups(): number {
    return this.empty;
  }

  /** The sink for reading `index` (0-based). */
  sinkFor(index: number): LockSink {
    return { add: (key, token, pttlMs, meta, metaRead, readAt) => this.add(index, key, token, pttlMs, meta, metaRead, readAt) };
  }

  /** Add one key as reading `index` found it; `readAt` as in LockSink (0: PTTLs are not aged). */
  add(
    index: number,
    key: string,
    token: string,
    pttlMs: number,
    meta: Record<string, string> | null,
    metaRead: boolean,
    readAt = 0,
    resource?: string,
  ): void {
    const n = this.readingCount;
    let group = this.groupOf.get(key);
    const added = group === undefined;
    if (group === undefined) {
      group = this.keys.length;
      this.groupOf.set(key, group);
      this.keys.push(key);
      const prefix = this.lockPrefix;
      this.resources.push(resource ?? (prefix !== '' && key.startsWith(prefix) ? key.slice(prefix.length) : key));
      this.live.push(0);
      for (let i = 0; i < n; i++) {
        this.tokens.push(undefined);
        this.expiries.push(0);
        this.metas.push(undefined);
      }
    }
    if (!this.metaAll) this.metaDirty.add(group);
    if (this.shared) this.own();
    const base = group * n;
    const at = base + index;
    if (this.tokens[at] === undefined) {
      this.counts[index]!++;
      if (this.live[group]!++ === 0 && !added) this.empty--;
    }
    // Keep one string per distinct token: the copies die young, which is what makes this cheap.
    let kept = token;
    for (let i = 0; i < n; i++) {
      const other = this.tokens[base + i];
      if (other !== undefined && other === token) {
        kept = other;
        break;
      }
    }
    this.tokens[at] = kept;
    this.expiries[at] = pttlMs < 0 ? pttlMs : readAt + pttlMs;
    this.metas[at] = metaRead ? meta : undefined;
  }

  /**
   * Keys in `lockPrefix` whose most common token (ties: the smallest, as the quorum view decides)
   * has no metadata read on any readable reading holding it, each with the first such reading and
   * that token: the metadata is in the lock key's value (`<token> <metadata JSON>`) on that
   * reading's node. (A reading holding another token read that token's metadata, not this one's.)
   */
  metaWanted(readable: readonly boolean[]): { group: number; key: string; reading: number; token: string }[] {
    const signature = readable.map((r) => (r ? '1' : '0')).join('');
    const wanted: { group: number; key: string; reading: number; token: string }[] = [];
    const check = (group: number) => {
      const want = this.metaWantedIn(group, readable);
      if (want) wanted.push(want);
    };
    if (this.metaAll || signature !== this.metaReadable) {
      for (let group = 0; group < this.keys.length; group++) check(group);
    } else {
      for (const group of this.metaPending) this.metaDirty.add(group);
      for (const group of [...this.metaDirty].sort((a, b) => a - b)) check(group);
    }
    this.metaAll = false;
    this.metaReadable = signature;
    this.metaDirty.clear();
    this.metaPending = wanted.map((w) => w.group);
    return wanted;
  }

  /** metaWanted() for one group: what to fetch, or null. */
  private metaWantedIn(group: number, readable: readonly boolean[]): { group: number; key: string; reading: number; token: string } | null {
    const { tokens, metas, readingCount: n } = this;
    const key = this.keys[group]!;
    if (this.lockPrefix === '' || !key.startsWith(this.lockPrefix)) return null;
    const base = group * n;
    let best = -1;
    let bestCount = 0;
    for (let i = 0; i < n; i++) {
      const token = tokens[base + i];
      if (token === undefined || !readable[i]) continue;
      let count = 0;
      for (let j = 0; j < n; j++) if (readable[j] && tokens[base + j] === token) count++;
      if (count > bestCount || (count === bestCount && token < tokens[base + best]!)) {
        bestCount = count;
        best = i;
      }
    }
    if (best < 0) return null;
    const token = tokens[base + best]!;
    for (let i = 0; i < n; i++) if (readable[i] && tokens[base + i] === token && metas[base + i] !== undefined) return null;
    return { group, key, reading: best, token };
  }

  /** Copy the cell columns a list shares before writing to one (see `shared`). */
  private own(): void {
    this.tokens = this.tokens.slice();
    this.expiries = this.expiries.slice();
    this.metas = this.metas.slice();
    this.shared = false;
  }

  /**
   * The first `limit` keys in view order (resource, then key) among those `accept` takes, and how
   * many it took. One pass with a small sorted buffer, never a sort of everything: an early page
   * picks its rows from a scan still under way this way.
   */
  firstKeys(
    limit: number,
    accept: (resource: string, key: string) => boolean,
  ): { keys: { resource: string; key: string }[]; accepted: number } {
    const { keys, resources } = this;
    const best: number[] = [];
    if (limit < 1) return { keys: [], accepted: 0 };
    const before = (a: number, b: number) => resources[a]! < resources[b]! || (resources[a] === resources[b] && keys[a]! < keys[b]!);
    let accepted = 0;
    for (let group = 0; group < keys.length; group++) {
      if (this.live[group] === 0 || !accept(resources[group]!, keys[group]!)) continue;
      accepted++;
      if (best.length >= limit && !before(group, best[best.length - 1]!)) continue;
      let lo = 0;
      let hi = best.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (before(best[mid]!, group)) lo = mid + 1;
        else hi = mid;
      }
      best.splice(lo, 0, group);
      if (best.length > limit) best.pop();
    }
    return { keys: best.map((g) => ({ resource: resources[g]!, key: keys[g]! })), accepted };
  }

  /** Reading `index` no longer holds `key` (a no-op when it did not). */
  remove(index: number, key: string): void {
    const group = this.groupOf.get(key);
    if (group !== undefined) this.removeCell(group, index);
  }

  /** Remove every cell of reading `index`: its node is about to be read again from scratch. */
  clearReading(index: number): void {
    this.metaAll = true;
    for (let group = 0; group < this.keys.length; group++) this.removeCell(group, index);
  }

  private removeCell(group: number, index: number): void {
    const at = group * this.readingCount + index;
    if (this.tokens[at] === undefined) return;
    if (this.shared) this.own();
    if (!this.metaAll) this.metaDirty.add(group);
    this.tokens[at] = undefined;
    this.metas[at] = undefined;
    this.counts[index]!--;
    if (--this.live[group]! === 0) this.empty++;
  }

  /** A copy without the empty groups (their keys are held nowhere any more), in view order. */
  compacted(): LockGrouper {
    const copy = new LockGrouper(this.readingCount, this.lockPrefix);
    const n = this.readingCount;
    this.sortGroups();
    for (const group of this.order) {
      if (this.live[group] === 0) continue;
      const key = this.keys[group]!;
      const fresh = copy.keys.length;
      copy.groupOf.set(key, fresh);
      copy.keys.push(key);
      copy.resources.push(this.resources[group]!);
      copy.live.push(this.live[group]!);
      for (let i = 0; i < n; i++) {
        copy.tokens.push(this.tokens[group * n + i]);
        copy.expiries.push(this.expiries[group * n + i]!);
        copy.metas.push(this.metas[group * n + i]);
      }
      copy.order.push(fresh);
    }
    for (let i = 0; i < n; i++) copy.counts[i] = this.counts[i]!;
    return copy;
  }

  /** Bring `order` up to date: sort the groups added since, then merge them in. */
  private sortGroups(): void {
    const { keys, resources, order } = this;
    if (order.length === keys.length) return;
    const before = (a: number, b: number) => {
      const ra = resources[a]!;
      const rb = resources[b]!;
      if (ra !== rb) return ra < rb ? -1 : 1;
      const ka = keys[a]!;
      const kb = keys[b]!;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    };
    const added = Array.from({ length: keys.length - order.length }, (_, i) => order.length + i).sort(before);
    if (order.length === 0) {
      this.order = added;
      return;
    }
    const merged = new Array<number>(keys.length);
    let a = 0;
    let b = 0;
    for (let i = 0; i < merged.length; i++) {
      merged[i] = b >= added.length || (a < order.length && before(order[a]!, added[b]!) <= 0) ? order[a++]! : added[b++]!;
    }
    this.order = merged;
  }

  /** Record metadata read for `group` on `reading` (null: read, there is none). */
  setMeta(group: number, reading: number, meta: Record<string, string> | null): void {
    if (this.shared) this.own();
    this.metas[group * this.readingCount + reading] = meta;
  }

  /**
   * The quorum views, sorted by resource (then key): one cell per reading, present, absent (read,
   * not there) or unknown (the reading failed). Keys no readable node holds are left out. PTTLs
   * are as of `now` (on the readAt clock; 0 when keys were added with readAt 0), at least 0.
   * `dropExpired`: a key whose TTL has run out by `now` counts as absent (the live index keeps
   * keys between reads, and Redis no longer serves a key past its TTL); a scan shows it at 0.
   */
  views(readings: readonly Pick<NodeReading, 'node' | 'ok'>[], options: QuorumOptions, now = 0, dropExpired = false): QuorumView[] {
    // Every view is made here, before anything can change the grouper: no copy of the columns.
    return this.viewList(readings, options, now, dropExpired, false).list.toArray();
  }

  /**
   * views(), as a list that makes a view only when asked for it (view-list.ts), with each state's
   * count and the keys shown per reading. Each lock's state is judged here, by the same classify()
   * a view is made with, on scratch cells. The list reads the columns as they are now and does
   * not follow later changes: the grouper copies them before its next write to a cell (`copy`:
   * false when this grouper will not change again, so it never copies).
   */
  viewList(
    readings: readonly Pick<NodeReading, 'node' | 'ok'>[],
    options: QuorumOptions,
    now = 0,
    dropExpired = false,
    copy = true,
  ): { list: FrozenLockList; stateCounts: Record<LockState, number>; flagCounts: FlagCounts; shownPerReading: number[] } {
    const n = this.readingCount;
    this.sortGroups();
    // Cells that say "not there" or "could not read" are the same for every key: made once, shared.
    const nodes = readings.map((r) => r.node);
    const ok = readings.map((r) => r.ok);
    const blank = nodes.map((node, i): LockCell =>
      Object.freeze({ node, known: ok[i]!, present: false, token: null, pttlMs: null, meta: null }),
    );
    const columns: FrozenColumns = {
      readingCount: n,
      keys: this.keys,
      resources: this.resources,
      tokens: this.tokens,
      expiries: this.expiries,
      metas: this.metas,
      nodes,
      ok,
      blank,
      ordered: inNodeOrder(blank),
      now,
      dropExpired,
      options,
    };
    if (copy) this.shared = true;
    const order: number[] = [];
    const states = new Uint8Array(this.order.length);
    const stateCounts = Object.fromEntries(LOCK_STATES.map((state) => [state, 0])) as Record<LockState, number>;
    const shownPerReading = new Array<number>(n).fill(0);
    const flagCounts: FlagCounts = { noTtl: 0, overCeiling: 0 };
    for (const group of this.order) {
      if (this.live[group] === 0) continue;
      const view = makeView(columns, group, true, shownPerReading);
      if (view === null) continue;
      states[order.length] = stateCode(view.state);
      order.push(group);
      stateCounts[view.state]++;
      if (view.noTtlNodes.length) flagCounts.noTtl++;
      if (view.overCeilingNodes.length) flagCounts.overCeiling++;
    }
    return { list: new FrozenLockList(columns, order, states.subarray(0, order.length)), stateCounts, flagCounts, shownPerReading };
  }
}
