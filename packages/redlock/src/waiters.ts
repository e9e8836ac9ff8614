import type { RedlockSubscription } from './client';
import type { LockNode } from './node';

/**
 * Wakes acquires that wait for a held lock as soon as a node publishes the release of one of
 * their resources on `<prefix>released`, instead of letting them sleep out retryDelayMs: the
 * handoff from a release to the next grant costs about one round trip.
 *
 * One subscriber connection per node, opened when the first waiter registers and closed
 * `lingerMs` after the last one leaves. None on a proxy-safe node (node.ts proxySafe: twemproxy
 * closes the socket on ioredis's ready check, INFO, and on SUBSCRIBE): a release there is published
 * into the void, and its waiters are woken by the other nodes' copies of the message (a release
 * deletes on every node that holds the key) or by their retry delay. Only the wake-up is lost,
 * never safety: an acquire decides on the votes alone.
 *
 * Herding. A release is published by every node that deleted a key (up to N messages), and many
 * local waiters may wait for the same resource, of which only one can win. So a message wakes
 * one waiter of the resource, the one waiting longest, and only if none of them is already about
 * to try or trying: a message that arrives while one is trying marks it to try once more at once
 * if it fails (the release may have come after it asked some node). A woken waiter starts its
 * attempt on the next turn of the event loop, so the other nodes' copies of the same message,
 * read in the same turn, are absorbed. Misjudging costs an extra attempt or, at worst, one
 * retryDelayMs of sleep, never safety.
 *
 * A semaphore's waiter (`perName`) waits for any of its slots, and each slot's release is a place
 * of its own: a message wakes the longest sleeper unless this waiter or another already took a
 * message of that same slot (a copy from another node), so slots freed one after the other wake as
 * many waiters; one trying is marked to try again at once, and a sleeper is still woken (the trying
 * one may win another slot).
 */
export class ReleaseWaiters {
  /** Messages received so far (any resource): lets an acquire notice a release it could have missed. */
  seq = 0;
  private readonly byResource = new Map<string, Set<Waiter>>();
  private count = 0;
  private subscribers: RedlockSubscription[] | null = null;
  private subscribed = false;
  private lingerTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly nodes: readonly LockNode[],
    private readonly channel: string,
    private readonly lingerMs: number,
    private readonly onError: (node: LockNode, err: Error) => void,
  ) {}

  /** Waiters registered now. */
  get size(): number {
    return this.count;
  }

  /** Open subscriber connections (0 when nobody waits). */
  get connections(): number {
    return this.subscribers?.length ?? 0;
  }

  /**
   * Register a waiter for `resources` after its first attempt failed. `seenSeq` is `seq` as read
   * before that attempt: if a release message arrived since, the waiter tries again at once. If
   * the subscriptions are not up yet, every waiter is woken once they are (a release between the
   * failed attempt and the SUBSCRIBE would otherwise be missed).
   */
  register(resources: readonly string[], seenSeq: number, perName = false): Waiter {
    const waiter = new Waiter(resources, this, perName);
    for (const resource of resources) {
      let set = this.byResource.get(resource);
      if (!set) this.byResource.set(resource, (set = new Set()));
      set.add(waiter);
    }
    this.count++;
    if (this.lingerTimer) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = null;
    }
    if (!this.subscribers) this.open();
    else if (this.subscribed && this.seq !== seenSeq) waiter.again = true;
    return waiter;
  }

  /** @internal */
  unregister(waiter: Waiter): void {
    for (const resource of waiter.resources) {
      const set = this.byResource.get(resource);
      if (!set?.delete(waiter)) continue;
      if (set.size === 0) this.byResource.delete(resource);
    }
    if (--this.count === 0 && this.subscribers) {
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = null;
        if (this.count === 0) this.closeSubscribers();
      }, this.lingerMs);
      this.lingerTimer.unref();
    }
  }

  /** Wake every sleeping waiter now (quit(): they settle instead of sleeping out their delays). */
  wakeAll(): void {
    for (const waiters of this.byResource.values()) for (const waiter of waiters) waiter.wake();
  }

  /** Close the subscriber connections now. */
  close(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    this.closeSubscribers();
  }

  private onMessage(resource: string): void {
    this.seq++;
    const waiters = this.byResource.get(resource);
    if (!waiters) return;
    let longest: Waiter | null = null;
    for (const waiter of waiters) {
      if (waiter.perName) {
        // A copy of a message it already took (the release of one slot, published by each node),
        // or a new release of that slot: either way no other waiter is woken for it. While woken
        // (the same turn as the first copy) it is absorbed. Once the woken waiter is trying, it
        // may be a second release of the slot (freed, taken by another client, freed again while
        // the attempt ran: the attempt saw it held), so the waiter tries once more at once, as a
        // mutex's waiter does; absorbing it left the slot free while the waiter slept out its
        // whole retry delay. At worst an extra attempt for a late copy; never safety: when to try
        // again changes no grant (each is decided by its votes alone), nor any fence.
        if (waiter.wokenBy === resource || waiter.againBy === resource) {
          if (waiter.state === 'trying') markAgain(waiter, resource);
          return;
        }
        if (waiter.state === 'sleeping') longest ??= waiter;
        else if (waiter.state === 'trying') markAgain(waiter, resource);
        continue;
      }
      if (waiter.state === 'woken') return;
      if (waiter.state === 'trying') {
        waiter.again = true;
        waiter.released = true;
        return;
      }
      // A Set iterates in insertion order: the first sleeper has waited longest.
      longest ??= waiter;
    }
    if (longest) longest.released = true;
    longest?.wake(resource);
  }

  private open(): void {
    const subscribers: RedlockSubscription[] = [];
    this.subscribed = false;
    for (const node of this.nodes) {
      // Whether a node is proxy-safe is known once its first connection attempt settled.
      if (node.connecting) {
        void node.whenBooted().then(() => {
          if (this.subscribers === subscribers && !node.proxySafe) this.subscribe(node, subscribers);
        });
      } else if (!node.proxySafe) {
        this.subscribe(node, subscribers);
      }
    }
    this.subscribers = subscribers;
  }

  /**
   * Open `node`'s subscriber, one of `subscribers` (through the node's client: node-wire.ts subscribe).
   * It subscribes again after each reconnection; releases missed meanwhile are covered by the
   * waiters' delays. Each time it is (again) in place, every waiter is woken once.
   */
  private subscribe(node: LockNode, subscribers: RedlockSubscription[]): void {
    const sub = node.subscribe(this.channel, {
      message: (resource) => this.onMessage(resource),
      subscribed: () => {
        if (this.subscribers !== subscribers || this.subscribed) return;
        this.subscribed = true;
        for (const set of this.byResource.values()) for (const waiter of set) waiter.wake();
      },
      error: (err) => this.onError(node, err),
    });
    subscribers.push(sub);
  }

  private closeSubscribers(): void {
    const subscribers = this.subscribers;
    this.subscribers = null;
    this.subscribed = false;
    if (subscribers) for (const sub of subscribers) sub.close();
  }
}

/** A perName waiter trying: try again at once if its attempt fails (the first message that asks it, per attempt). */
function markAgain(waiter: Waiter, resource: string): void {
  if (waiter.again) return;
  waiter.again = true;
  waiter.againBy = resource;
  waiter.released = true;
}

/**
 * One waiting acquire: `trying` (an attempt in flight), `sleeping` (between attempts), or
 * `woken` (a release arrived; the next attempt starts on the next turn of the event loop).
 */
export class Waiter {
  state: 'trying' | 'sleeping' | 'woken' = 'trying';
  /** A release arrived while trying (or before registering): try again at once if the attempt fails. */
  again = false;
  /** A release of its resource was published since the last takeReleased() (not a subscription's catch-up wake). */
  released = false;
  /** perName: the name whose message woke it from its last sleep (null: none, or a catch-up wake). */
  wokenBy: string | null = null;
  /** perName: the name whose message marked `again` (null: none, or a catch-up). */
  againBy: string | null = null;
  private wakeSleep: (() => void) | null = null;

  constructor(
    readonly resources: readonly string[],
    private readonly registry: ReleaseWaiters,
    /** Each name's release is a place of its own (a semaphore's slots): see ReleaseWaiters. */
    readonly perName = false,
  ) {}

  /** `by`: the name whose release woke it (null: a catch-up, or quit()). */
  wake(by: string | null = null): void {
    if (this.state === 'trying') {
      this.again = true;
      return;
    }
    if (this.state === 'woken') return;
    this.state = 'woken';
    this.wokenBy = by;
    const wakeSleep = this.wakeSleep;
    this.wakeSleep = null;
    if (wakeSleep) setImmediate(wakeSleep);
  }

  /**
   * Sleep up to `ms`, or until woken. Resolves true when woken early, false when the time ran out;
   * rejects with `signal.reason` when the signal aborts. Either way the waiter is `trying` after.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      this.state = 'sleeping';
      this.wokenBy = null;
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wakeSleep = null;
        this.state = 'trying';
        resolve(woken);
      };
      const onAbort = () => {
        clearTimeout(timer);
        this.wakeSleep = null;
        this.state = 'trying';
        reject(signal!.reason);
      };
      const timer = setTimeout(finish, ms, false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.wakeSleep = () => finish(true);
    });
  }

  /** Consume the `released` mark. */
  takeReleased(): boolean {
    const released = this.released;
    this.released = false;
    return released;
  }

  /** Consume the `again` mark. */
  takeAgain(): boolean {
    const again = this.again;
    this.again = false;
    this.againBy = null;
    return again;
  }

  unregister(): void {
    this.wakeSleep = null;
    this.registry.unregister(this);
  }
}
