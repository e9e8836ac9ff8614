import type { LiveEvent } from '../../api/events';

type LockEventType = Extract<LiveEvent['type'], `lock.${string}`>;

interface Group {
  event: LiveEvent;
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
 * hundreds of streams) used to start a second event for the same change (issue 18: 1,451 grants
 * reported for 1,441). So after emission the change lingers for `lingerMs`: a copy from a node not
 * yet listed is absorbed, unless the resource had another change emitted in between (a release
 * after a grant: the next grant is a new change, not a late copy). A copy from a node already
 * listed is a new change on that node (a node notifies each change once), so it starts a new event.
 */
export class EventGrouping {
  private readonly groups = new Map<string, Group>();
  /** Per resource, the type of the change that started last (a change of another type ends lingering copies). */
  private readonly lastType = new Map<string, LockEventType>();
  private lastPrune = 0;
  /**
   * Groups in the order their windows close (one window length for all: creation order), flushed
   * by ONE timer set for the first still due. A timer per group was two timers per lock taken and
   * released, each an async resource (issue 18: the events' per-change cost under load).
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
    const id = `${type}\0${resource}`;
    // Windows, lingering and pruning on the monotonic clock (a wall clock stepped back must not
    // hold events or memory); the wall clock only for the event's own time.
    const t = performance.now();
    const group = this.groups.get(id);
    if (group && !group.event.nodes!.includes(node)) {
      if (group.due !== null) {
        group.event.nodes!.push(node);
        return;
      }
      // Emitted already: a late copy of the same change, while nothing else happened to the resource.
      if (t <= group.lingerUntil && this.lastType.get(resource) === type) return;
    }
    // The same node again within the window: flush the first change, this one is new.
    if (group && group.due !== null) {
      this.flush(group);
      if (this.stopped) return;
    }
    const event: LiveEvent = { type, at: this.now(), resource, nodes: [node], source: 'notifications' };
    const created: Group = { event, lingerUntil: 0, due: t + this.groupMs };
    this.groups.set(id, created);
    this.queue.push(created);
    this.timer ??= setTimeout(this.flushDue, this.groupMs);
    // From now on a copy of an earlier change of another type is not a late copy (a release still
    // in its window counts: the grant after it is a new one).
    this.lastType.set(resource, type);
    this.prune(t);
  }

  /** Stop: pending events are dropped, later changes ignored (also when called from inside an emit). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    this.head = 0;
    this.groups.clear();
    this.lastType.clear();
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
    group.event.nodes!.sort((a, b) => a - b);
    this.emit(group.event);
  }

  /** Forget groups whose linger ended (bounded memory with many resources), at most once a second. */
  private prune(t: number): void {
    if (this.groups.size < 1_024 || t - this.lastPrune < 1_000) return;
    this.lastPrune = t;
    for (const [id, group] of this.groups) {
      if (group.due === null && group.lingerUntil < t) {
        this.groups.delete(id);
        if (this.lastType.get(group.event.resource!) === group.event.type) this.lastType.delete(group.event.resource!);
      }
    }
  }
}
