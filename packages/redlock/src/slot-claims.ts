/** What is recorded of a grant of slots: a semaphore's permit, or a read-write lock's read lock (rwlock.ts keeps claims of its own). */
export interface SlotHolder {
  readonly resource: string;
  readonly slots: readonly number[];
  /** 0 once released or past validity: the record is dropped then. */
  readonly validityMs: number;
}

/** Recorded semaphores each claim() looks at (SlotClaims.cursor). */
const SWEEP_STEPS = 2;

/** What is recorded of one semaphore: its slots being asked for (how many attempts ask each), its permits. */
interface Entry {
  trying: Map<number, number>;
  held: Set<SlotHolder>;
}

/**
 * The slots one Redlock is asking for or holding, per semaphore: its own acquires then ask for
 * other slots first, instead of colliding with each other at random (two waiters woken by two
 * freed slots would otherwise pick the same one half the time, and the loser sleep out its delay).
 * Only a preference among the slots an attempt may ask for: nothing here bears on safety, which the
 * slots' grants decide (semaphore.ts).
 */
export class SlotClaims {
  private readonly bySemaphore = new Map<string, Entry>();
  /**
   * Where the sweep stands in bySemaphore. A permit left to expire unreleased (a rate limiter's
   * use) is dropped when its own semaphore is next asked for (busy()); one that never is, by this
   * sweep: each claim() looks at SWEEP_STEPS recorded semaphores, in turn, dropping their permits
   * past validity and the semaphores left with nothing. A claim adds at most one semaphore and looks
   * at two, so the sweep laps the map faster than it grows: a semaphore with nothing left goes
   * within one lap, at O(1) per claim, where the map kept every name ever used. Dropping a record
   * changes only which slots this Redlock prefers to ask for, never what a grant needs (above).
   */
  private cursor: Iterator<[string, Entry]> | null = null;

  /** The slots of `semaphore` this Redlock is asking for or holds (a permit still valid). */
  busy(semaphore: string): Set<number> {
    const entry = this.bySemaphore.get(semaphore);
    const busy = new Set<number>();
    if (!entry) return busy;
    for (const slot of entry.trying.keys()) busy.add(slot);
    for (const permit of entry.held) {
      if (permit.validityMs > 0) for (const slot of permit.slots) busy.add(slot);
      else entry.held.delete(permit);
    }
    this.dropIfEmpty(semaphore);
    return busy;
  }

  /** An attempt asks for `slots`. */
  claim(semaphore: string, slots: readonly number[]): void {
    let entry = this.bySemaphore.get(semaphore);
    if (!entry) this.bySemaphore.set(semaphore, (entry = { trying: new Map(), held: new Set() }));
    for (const slot of slots) entry.trying.set(slot, (entry.trying.get(slot) ?? 0) + 1);
    this.sweep();
  }

  /** Look at the next SWEEP_STEPS semaphores (the one just claimed stays: it has a slot asked for). */
  private sweep(): void {
    for (let step = 0; step < SWEEP_STEPS; step++) {
      this.cursor ??= this.bySemaphore.entries();
      const next = this.cursor.next();
      if (next.done) {
        this.cursor = null;
        continue;
      }
      const [semaphore, entry] = next.value;
      for (const permit of entry.held) if (permit.validityMs <= 0) entry.held.delete(permit);
      this.dropIfEmpty(semaphore);
    }
  }

  /** The attempt that asked for `slots` ended: granted as `permit`, or refused (null). */
  settle(semaphore: string, slots: readonly number[], permit: SlotHolder | null): void {
    const entry = this.bySemaphore.get(semaphore);
    if (!entry) return;
    for (const slot of slots) {
      const count = (entry.trying.get(slot) ?? 0) - 1;
      if (count > 0) entry.trying.set(slot, count);
      else entry.trying.delete(slot);
    }
    if (permit) entry.held.add(permit);
    this.dropIfEmpty(semaphore);
  }

  /** `permit` was released. */
  released(permit: SlotHolder): void {
    const entry = this.bySemaphore.get(permit.resource);
    if (entry?.held.delete(permit)) this.dropIfEmpty(permit.resource);
  }

  private dropIfEmpty(semaphore: string): void {
    const entry = this.bySemaphore.get(semaphore);
    if (entry && entry.trying.size === 0 && entry.held.size === 0) this.bySemaphore.delete(semaphore);
  }
}
