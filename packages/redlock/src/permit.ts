import { Lock, type LockController, type LockState } from './lock';
import type { Vote } from './votes';

/**
 * A semaphore permit: the grant of one or more of the semaphore's slots, each a mutex
 * (semaphore.ts). It is a Lock over those slots (its `resources` are the slots' names,
 * `sem:<resource>:<slot>`), so extend, release, `using` and 'lock-lost' are the mutex's.
 */
export class Permit extends Lock {
  /** The semaphore's name. */
  readonly resource: string;
  /** The number of permits (slots) of the semaphore, as this caller gave it. */
  readonly limit: number;
  /** The slots this permit holds (indices in [0, limit)), ascending. */
  readonly slots: readonly number[];

  constructor(
    controller: LockController,
    names: readonly string[],
    token: string,
    fence: number | null,
    votes: readonly Vote[],
    keys: readonly string[],
    state: LockState,
    semaphore: { resource: string; limit: number; slots: readonly number[] },
  ) {
    super(controller, names, token, fence, votes, keys, state);
    this.resource = semaphore.resource;
    this.limit = semaphore.limit;
    this.slots = semaphore.slots;
  }

  /**
   * The slot a permit of one slot holds (the first of several). `fence` is strictly increasing
   * across the grants of each slot, not across slots: a fenced store keeps one mark per slot.
   */
  get slot(): number {
    return this.slots[0]!;
  }

  /** Lock.extend(), typed as a Permit (the same object). */
  override async extend(ttlMs: number): Promise<Permit> {
    await super.extend(ttlMs);
    return this;
  }

  override toJSON(): {
    resources: readonly string[];
    resource: string;
    limit: number;
    slots: readonly number[];
    fence: number | null;
    expiresAt: number;
    validityMs: number;
  } {
    return { ...super.toJSON(), resource: this.resource, limit: this.limit, slots: this.slots };
  }
}
