import { classify, LOCK_STATES, type LockCell, type LockState, type QuorumOptions, type QuorumView } from './quorum-view';

/**
 * The locks of a snapshot in view order (resource, then key), read by position. A snapshot of the
 * live index holds 100,000 locks or more, and building all their views (a view, its cells array
 * and a cell per node: seven objects per lock) was most of a snapshot's time while a page shows
 * 100 of them. So a list answers the questions that pick a page (resource, key and state at a
 * position) without making a view, and makes a view only when asked for it (`at`), once.
 */
export interface LockList {
  readonly length: number;
  resourceAt(index: number): string;
  keyAt(index: number): string;
  stateAt(index: number): LockState;
  /** The view at `index` (the same object every time). */
  at(index: number): QuorumView;
  /** Every view, in order (made once, on the first call). */
  toArray(): QuorumView[];
  /** The holder metadata the view at `index` shows, read without making (or keeping) that view. */
  metaAt?(index: number): Record<string, string> | null;
}

/** A LockList over views already made (a scan's, an early page's, a test's). */
export function arrayLockList(views: readonly QuorumView[]): LockList {
  return {
    length: views.length,
    resourceAt: (i) => views[i]!.resource,
    keyAt: (i) => views[i]!.key,
    stateAt: (i) => views[i]!.state,
    at: (i) => views[i]!,
    toArray: () => views as QuorumView[],
  };
}

/**
 * What a view is made of, as at the snapshot's moment: the grouper's columns (cell
 * `group × readings + reading`), the readings, and the cells every view shares (absent, unknown).
 * The grouper keeps changing (the live index re-reads keys into it) but copies its columns before
 * it writes to a cell a list reads (LockGrouper.viewList), so a view made later is the one an
 * eager snapshot would have made then.
 */
export interface FrozenColumns {
  readonly readingCount: number;
  readonly keys: readonly string[];
  readonly resources: readonly string[];
  readonly tokens: readonly (string | undefined)[];
  readonly expiries: readonly number[];
  readonly metas: readonly (Record<string, string> | null | undefined)[];
  readonly nodes: readonly number[];
  readonly ok: readonly boolean[];
  /** Cell shown where a reading has nothing (absent) or could not read (unknown), per reading. */
  readonly blank: readonly LockCell[];
  /** Are `nodes` in ascending order (so cells need no sort)? */
  readonly ordered: boolean;
  readonly now: number;
  readonly dropExpired: boolean;
  readonly options: QuorumOptions;
}

/** A LockList made from frozen columns; LockGrouper.viewList decides the order and the states. */
export class FrozenLockList implements LockList {
  private readonly views: (QuorumView | undefined)[];
  private all: QuorumView[] | null = null;

  /**
   * @param columns the grouper's columns as at the snapshot
   * @param order the groups shown, in view order
   * @param states their states (stateCode()), judged when the order was
   */
  constructor(
    private readonly columns: FrozenColumns,
    private readonly order: readonly number[],
    private readonly states: Uint8Array,
  ) {
    this.views = new Array<QuorumView | undefined>(order.length);
  }

  get length(): number {
    return this.order.length;
  }

  resourceAt(index: number): string {
    return this.columns.resources[this.order[index]!]!;
  }

  keyAt(index: number): string {
    return this.columns.keys[this.order[index]!]!;
  }

  stateAt(index: number): LockState {
    return LOCK_STATES[this.states[index]!]!;
  }

  at(index: number): QuorumView {
    const kept = this.views[index];
    if (kept !== undefined) return kept;
    const view = makeView(this.columns, this.order[index]!, false);
    // The order holds only groups with a cell to show, judged on these same columns.
    if (view === null) throw new Error(`lock ${this.keyAt(index)} has no cell to show`);
    this.views[index] = view;
    return view;
  }

  metaAt(index: number): Record<string, string> | null {
    const kept = this.views[index];
    if (kept !== undefined) return kept.meta;
    // A scratch view (shared cells, overwritten by the next call): its metadata is all we keep.
    return makeView(this.columns, this.order[index]!, true)?.meta ?? null;
  }

  toArray(): QuorumView[] {
    if (this.all === null) {
      const all = new Array<QuorumView>(this.order.length);
      for (let i = 0; i < all.length; i++) all[i] = this.at(i);
      this.all = all;
    }
    return this.all;
  }
}

const CODE_OF = Object.fromEntries(LOCK_STATES.map((state, code) => [state, code])) as Readonly<Record<LockState, number>>;

/** The code of `state` for FrozenLockList: its position in LOCK_STATES. */
export function stateCode(state: LockState): number {
  return CODE_OF[state];
}

/**
 * Does cell `at` (of reading `reading`) show the key as present: the reading could be read, it
 * holds the key, and (with dropExpired) the key's TTL had not run out by `now`?
 */
function cellShown(columns: FrozenColumns, at: number, reading: number): boolean {
  if (!columns.ok[reading] || columns.tokens[at] === undefined) return false;
  const expiry = columns.expiries[at]!;
  return !(columns.dropExpired && expiry >= 0 && expiry <= columns.now);
}

/** Scratch cells for `makeView(…, scratch = true)`: one per reading, overwritten per group. */
const SCRATCH: {
  node: number;
  known: boolean;
  present: boolean;
  token: string | null;
  pttlMs: number | null;
  meta: Record<string, string> | null;
}[] = [];
const SCRATCH_CELLS: LockCell[] = [];

/**
 * The view of `group`, or null when no readable reading holds it (nothing to show). With
 * `scratch`, the cells are shared scratch objects overwritten by the next call: for reading the
 * view's verdict at once (its state), never for keeping it. `shown` (per reading) counts the
 * readings that show the key.
 */
export function makeView(columns: FrozenColumns, group: number, scratch: boolean, shown?: number[]): QuorumView | null {
  const { readingCount: n, tokens, expiries, metas, nodes, blank, now } = columns;
  const base = group * n;
  let present = false;
  const cells = scratch ? SCRATCH_CELLS : new Array<LockCell>(n);
  if (scratch && SCRATCH_CELLS.length !== n) SCRATCH_CELLS.length = n;
  for (let i = 0; i < n; i++) {
    if (!cellShown(columns, base + i, i)) {
      cells[i] = blank[i]!;
      continue;
    }
    const token = tokens[base + i]!;
    const expiry = expiries[base + i]!;
    present = true;
    if (shown) shown[i]!++;
    const pttlMs = expiry < 0 ? expiry : Math.max(0, Math.round(expiry - now));
    const meta = metas[base + i] ?? null;
    if (scratch) {
      const cell = (SCRATCH[i] ??= { node: 0, known: true, present: true, token: null, pttlMs: null, meta: null });
      cell.node = nodes[i]!;
      cell.token = token;
      cell.pttlMs = pttlMs;
      cell.meta = meta;
      cells[i] = cell;
    } else {
      cells[i] = { node: nodes[i]!, known: true, present: true, token, pttlMs, meta };
    }
  }
  if (!present) return null;
  if (!columns.ordered) cells.sort((a, b) => a.node - b.node);
  return classify(columns.resources[group]!, columns.keys[group]!, cells, columns.options);
}
