/**
 * The two storages the clients write to while they believe they hold a lock: a plain register
 * that takes every write, and a fenced register that takes a write only if its fence is above the
 * highest fence it has seen, or equal to it and from the holder that wrote with that fence (what a
 * storage service does with the fencing tokens this library adds to Redlock).
 *
 * A fence that equals the highest seen but comes from another holder is a tie: two holders were
 * handed the same number, so the fence no longer names one holder. The register refuses that write
 * (it cannot tell which of the two is current) and reports the tie: fencing itself failed there.
 */

export interface WriteAttempt {
  t: number;
  client: string;
  resource: string;
  /** The fencing token of the lock the client believes it holds; null for an unfenced lock. */
  fence: number | null;
  value: string;
}

/** How a refused write's reason starts when the refusal was a tie (the console marks such writes). */
export const TIE_REASON_PREFIX = 'tie:';

/** Was this write refused for a tie between two holders? */
export const isTieReason = (reason: string): boolean => reason.startsWith(TIE_REASON_PREFIX);

export interface WriteOutcome {
  accepted: boolean;
  reason: string;
  /** Set when the write was refused for a tie: `with` wrote with the same fence before. */
  tie?: { fence: number; with: string };
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

/**
 * Accepts a write if fence > the highest fence seen so far, or fence = highest and the writer is
 * the holder that wrote with it; refuses a lower fence, and refuses and reports a tie between two holders.
 */
export class FencedRegister {
  value: string | null = null;
  highest: number | null = null;
  /** Who wrote with `highest`. */
  holder: string | null = null;
  accepted = 0;
  rejected = 0;
  /** Every tie seen: two holders writing with the same fence. */
  readonly ties: Array<{ t: number; fence: number; clients: [string, string] }> = [];

  write(attempt: WriteAttempt): WriteOutcome {
    const { fence, client } = attempt;
    if (fence === null) {
      this.rejected++;
      return { accepted: false, reason: 'no fencing token' };
    }
    if (this.highest !== null && fence < this.highest) {
      this.rejected++;
      return { accepted: false, reason: `fence ${fence} < highest seen ${this.highest}` };
    }
    if (this.highest !== null && fence === this.highest && client !== this.holder) {
      const first = this.holder ?? 'another holder';
      this.rejected++;
      this.ties.push({ t: attempt.t, fence, clients: [first, client] });
      return {
        accepted: false,
        reason: `${TIE_REASON_PREFIX} fence ${fence} = highest seen, but ${first} wrote with it: two holders, one fence`,
        tie: { fence, with: first },
      };
    }
    const same = this.highest !== null && fence === this.highest;
    this.highest = fence;
    this.holder = client;
    this.value = attempt.value;
    this.accepted++;
    return {
      accepted: true,
      reason:
        this.accepted === 1 ? 'first fence seen' : same ? `fence ${fence} = highest seen, same holder` : `fence ${fence} > highest seen`,
    };
  }
}
