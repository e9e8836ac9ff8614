/**
 * The two storages the clients write to while they believe they hold a lock: a plain register
 * that takes every write, and a fenced register that takes a write only if its fence is at least
 * the highest fence it has seen (what a storage service does with Redlock's fencing tokens).
 */

export interface WriteAttempt {
  t: number;
  client: string;
  resource: string;
  /** The fencing token of the lock the client believes it holds; null for an unfenced lock. */
  fence: number | null;
  value: string;
}

export interface WriteOutcome {
  accepted: boolean;
  reason: string;
}

/** Accepts everything: the last writer wins, stale or not. */
export class PlainRegister {
  value: string | null = null;
  accepted = 0;

  write(attempt: WriteAttempt): WriteOutcome {
    this.value = attempt.value;
    this.accepted++;
    return { accepted: true, reason: 'a plain register accepts every write' };
  }
}

/** Accepts a write only if fence ≥ the highest fence seen so far. */
export class FencedRegister {
  value: string | null = null;
  highest: number | null = null;
  accepted = 0;
  rejected = 0;

  write(attempt: WriteAttempt): WriteOutcome {
    if (attempt.fence === null) {
      this.rejected++;
      return { accepted: false, reason: 'no fencing token' };
    }
    if (this.highest !== null && attempt.fence < this.highest) {
      this.rejected++;
      return { accepted: false, reason: `fence ${attempt.fence} < highest seen ${this.highest}` };
    }
    this.highest = attempt.fence;
    this.value = attempt.value;
    this.accepted++;
    return { accepted: true, reason: this.accepted === 1 ? 'first fence seen' : `fence ${attempt.fence} ≥ highest seen` };
  }
}
