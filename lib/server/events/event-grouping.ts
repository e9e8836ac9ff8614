import type { LiveEvent } from '../../api/events';

type LockEventType = Extract<LiveEvent['type'], `lock.${string}`>;

interface Group {
  event: LiveEvent;
  /** Until when (Date.now() ms) a late node's copy of this change is absorbed, once emitted. */
  lingerUntil: number;
  timer: NodeJS.Timeout | null;
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

  constructor(
    private readonly emit: (event: LiveEvent) => void,
    private readonly groupMs = 40,
    private readonly lingerMs = 2_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** `node` (1-based) reported a change of `type` on `resource`. */
  add(node: number, type: LockEventType, resource: string): void {
    const id = `${type}\0${resource}`;
    const at = this.now();
    const group = this.groups.get(id);
    if (group && !group.event.nodes!.includes(node)) {
      if (group.timer !== null) {
        group.event.nodes!.push(node);
        return;
      }
      // Emitted already: a late copy of the same change, while nothing else happened to the resource.
      if (at <= group.lingerUntil && this.lastType.get(resource) === type) return;
    }
    if (group?.timer) {
      // The same node again within the window: flush the first change, this one is new.
      clearTimeout(group.timer);
      this.flush(id, group);
    }
    const event: LiveEvent = { type, at, resource, nodes: [node], source: 'notifications' };
    const created: Group = { event, lingerUntil: 0, timer: null };
    created.timer = setTimeout(() => this.flush(id, created), this.groupMs);
    this.groups.set(id, created);
    // From now on a copy of an earlier change of another type is not a late copy (a release still
    // in its window counts: the grant after it is a new one).
    this.lastType.set(resource, type);
    this.prune(at);
  }

  /** Stop: pending events are dropped. */
  stop(): void {
    for (const group of this.groups.values()) if (group.timer) clearTimeout(group.timer);
    this.groups.clear();
    this.lastType.clear();
  }

  private flush(id: string, group: Group): void {
    group.timer = null;
    group.lingerUntil = this.now() + this.lingerMs;
    group.event.nodes!.sort((a, b) => a - b);
    this.emit(group.event);
  }

  /** Forget groups whose linger ended (bounded memory with many resources), at most once a second. */
  private prune(at: number): void {
    if (this.groups.size < 1_024 || at - this.lastPrune < 1_000) return;
    this.lastPrune = at;
    for (const [id, group] of this.groups) {
      if (group.timer === null && group.lingerUntil < at) {
        this.groups.delete(id);
        if (this.lastType.get(group.event.resource!) === group.event.type) this.lastType.delete(group.event.resource!);
      }
    }
  }
}
