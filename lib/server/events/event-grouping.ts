import type { LiveEvent } from '../../api/events';

type LockEventType = Extract<LiveEvent['type'], `lock.${string}`>;

interface Group {
  event: LiveEvent;
  /** The nodes in `event.nodes` as bits (node n: bit n), for nodes up to 30; 0 once past. */
  mask: number;
  /** Until when (performance.now()) a late node's copy of this change is absorbed, once emitted. */
  lingerUntil: number;
  /** When (performance.now(): a wall clock stepped back must not hold events) the window closes; null once emitted. */
  due: number | null;
}

/**
 * One lock change seen on several nodes is ONE live event. A grant reaches each node at its own
 * moment and each node notifies on its own connection: the copies of one change (type + resource)
 * within `groupMs` of the first are collected, then emitted as one event listing their nodes.
 *
 * A node whose notification comes later than that (a slow node, a console process busy with
 * hundreds of streams) used to start a second event for the same change (1,451 grants
 * reported for 1,441). So after emission the change lingers for `lingerMs`: a copy from a node not
 * yet listed is absorbed, unless the resource had another change emitted in between (a release
 * after a grant: the next grant is a new change, not a late copy). A copy from a node already
 * listed is a new change on that node (a node notifies each change once), so it starts a new event.
 */
/** One resource's groups, one per change type, and the type of the change that started last. */
interface ResourceGroups {
  /** A change of another type than this ends the lingering of earlier copies. */
  last: LockEventType;
  byType: Partial<Record<LockEventType, Group>>;
}

export class EventGrouping {
  /**
   * Per resource (one lookup per notification: a key made of type and resource was a new string
   * to build and hash for each of the five nodes' copies of each change, the most expensive step of
   * the events' intake under load).
   */
  private readonly resources = new Map<string, ResourceGroups>();
  private lastPrune = 0;
  /**
   * Groups in the order their windows close (one window length for all: creation order), flushed
   * by ONE timer set for the first still due. A timer per group was two timers per lock taken and
   * released, each an async resource (the events' per-change cost under load).
   */
  private queue: Group[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  /** stop() was called (possibly by a listener of an event being emitted): nothing more goes out. */
  private stopped = false;

  constructor(
    private readonly emit: (event: LiveEvent) => void,
    private readonly groupMs = 40,
    private readonly lingerMs = 2_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** `node` (1-based) reported a change of `type` on `resource`. */
  add(node: number, type: LockEventType, resource: string): void {
    if (this.stopped) return;
    // Windows, lingering and pruning on the monotonic clock (a wall clock stepped back must not
    // hold events or memory); the wall clock only for the event's own time.
    const t = performance.now();
    let state = this.resources.get(resource);
    const group = state?.byType[type];
    if (group && !hasNode(group, node)) {
      if (group.due !== null) {
        group.event.nodes!.push(node);
        if (group.mask !== 0) group.mask = node <= 30 ? group.mask | (1 << node) : 0;
        return;
      }
      // Emitted already: a late copy of the same change, while nothing else happened to the resource.
      if (t <= group.lingerUntil && state!.last === type) return;
    }
    // The same node again within the window: flush the first change, this one is new.
    if (group && group.due !== null) {
      this.flush(group);
      if (this.stopped) return;
    }
    const event: LiveEvent = { type, at: this.now(), resource, nodes: [node], source: 'notifications' };
    const created: Group = { event, mask: node <= 30 ? 1 << node : 0, lingerUntil: 0, due: t + this.groupMs };
    if (!state) {
      state = { last: type, byType: {} };
      this.resources.set(resource, state);
    }
    state.byType[type] = created;
    this.queue.push(created);
    this.timer ??= setTimeout(this.flushDue, this.groupMs);
    // From now on a copy of an earlier change of another type is not a late copy (a release still
    // in its window counts: the grant after it is a new one).
    state.last = type;
    this.prune(t);
  }

  /** Stop: pending events are dropped, later changes ignored (also when called from inside an emit). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    this.head = 0;
    this.resources.clear();
  }

  /** Emit every group whose window has closed, in order; the timer then waits for the next one. */
  private readonly flushDue = (): void => {
    this.timer = null;
    const now = performance.now();
    const queue = this.queue;
    while (this.head < queue.length) {
      const group = queue[this.head]!;
      if (group.due !== null && group.due > now) break;
      this.head++;
      if (group.due !== null) this.flush(group);
      // An emit's listener may stop this grouping (the hub stops its sources when its last
      // stream goes): stop() replaced the queue, and nothing more goes out.
      if (this.stopped || this.queue !== queue) return;
    }
    if (this.head === queue.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    if (this.head >= 1_024) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
    this.timer = setTimeout(this.flushDue, Math.max(1, this.queue[this.head]!.due! - now));
  };

  private flush(group: Group): void {
    group.due = null;
    group.lingerUntil = performance.now() + this.lingerMs;
    if (group.mask === 0) group.event.nodes!.sort((a, b) => a - b);
    else {
      // In order from the bits: no sort.
      const nodes: number[] = [];
      for (let n = 1, bits = group.mask >>> 1; bits !== 0; n++, bits >>>= 1) if (bits & 1) nodes.push(n);
      group.event.nodes = nodes;
    }
    this.emit(group.event);
  }

  /** Forget resources whose groups' linger all ended (bounded memory with many resources), at most once a second. */
  private prune(t: number): void {
    if (this.resources.size < 1_024 || t - this.lastPrune < 1_000) return;
    this.lastPrune = t;
    for (const [resource, state] of this.resources) {
      let live = false;
      for (const type in state.byType) {
        const group = state.byType[type as LockEventType]!;
        if (group.due !== null || group.lingerUntil >= t) live = true;
      }
      if (!live) this.resources.delete(resource);
    }
  }
}

/** Is `node` among the group's nodes (its bit; the list once a node past 30 joined)? */
function hasNode(group: Group, node: number): boolean {
  return group.mask !== 0 && node <= 30 ? (group.mask & (1 << node)) !== 0 : group.event.nodes!.includes(node);
}
