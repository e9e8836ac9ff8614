import { Lock, type LockController, type LockState } from './lock';
import type { Vote } from './votes';

/** A read-write lock is held for reading (one reader slot, shared with other readers) or writing (every slot). */
export type RwMode = 'read' | 'write';

/**
 * A read or write lock of a read-write lock (rwlock.ts): the grant of one reader slot (read) or of
 * every reader slot at once (write), each slot a mutex. It is a Lock over those slots (its
 * `resources` are the slots' names, `rw:<resource>:<slot>`), so extend, release, `using` and
 * 'lock-lost' are the mutex's.
 */
export class RwLock extends Lock {
  /** The read-write lock's name. */
  readonly resource: string;
  readonly mode: RwMode;
  /** The reader slots of the lock, as this caller gave them (every client of a lock must agree). */
  readonly maxReaders: number;
  /** The slots held, ascending: one for a reader, 0 … maxReaders − 1 for the writer. */
  readonly slots: readonly number[];

  constructor(
    controller: LockController,
    names: readonly string[],
    token: string,
    fence: number | null,
    votes: readonly Vote[],
    keys: readonly string[],
    state: LockState,
    rw: { resource: string; mode: RwMode; maxReaders: number; slots: readonly number[] },
  ) {
    super(controller, names, token, fence, votes, keys, state);
    this.resource = rw.resource;
    this.mode = rw.mode;
    this.maxReaders = rw.maxReaders;
    this.slots = rw.slots;
  }

  /** Lock.extend(), typed as an RwLock (the same object). */
  override async extend(ttlMs: number): Promise<RwLock> {
    await super.extend(ttlMs);
    return this;
  }

  override toJSON(): {
    resources: readonly string[];
    resource: string;
    mode: RwMode;
    maxReaders: number;
    slots: readonly number[];
    fence: number | null;
    expiresAt: number;
    validityMs: number;
  } {
    return { ...super.toJSON(), resource: this.resource, mode: this.mode, maxReaders: this.maxReaders, slots: this.slots };
  }
}
