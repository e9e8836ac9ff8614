import type { LeakedKey, NemesisEvent } from './history';
import type { LockRecord } from './locks';

export interface HygieneResult {
  /** Lock keys left on a node after quiescence + ttl. */
  leakedKeys: number;
  /**
   * Keys of other clients deleted: a release that deleted a key on a node where this lock's SET
   * was refused as contended (so the key was someone else's), or a release inside the validity that found a
   * lock's own key gone from a node that had granted it and lost no data.
   */
  foreignDeletes: number;
  /** Locks returned with no validity left (validity at return ≤ −tolerance). */
  expiredGrants: number;
  /** Extends accepted although invoked after the validity they extended had ended (by ≥ tolerance). */
  lateExtends: number;
  /** The lowest validity at return seen, ms (how close grants came to the edge). */
  minValidityAtReturnMs: number | null;
  examples: string[];
}

const MAX_EXAMPLES = 10;
const NS_PER_MS = 1_000_000;
/** An extend invoked at least this long after the validity it extended had ended must have been refused. */
const LATE_EXTEND_TOLERANCE_MS = 1;

/**
 * Checker 3, hygiene. `toleranceMs` is the slack for the time between the core's decision and the
 * client reading lock.expiresAt (a scheduler can preempt a process in between); a lock observed
 * with validity ≤ −toleranceMs was certainly granted with none.
 */
export function checkHygiene(locks: Iterable<LockRecord>, nemesis: readonly NemesisEvent[], leaked: readonly LeakedKey[],
  toleranceMs: number): HygieneResult {
  const result: HygieneResult = { leakedKeys: leaked.length, foreignDeletes: 0, expiredGrants: 0, lateExtends: 0, minValidityAtReturnMs: null, examples: [] };
  const note = (line: string) => {
    if (result.examples.length < MAX_EXAMPLES) result.examples.push(line);
  };
  for (const key of leaked.slice(0, 3)) note(`leaked key ${key.key} on node ${key.node + 1} (pttl ${key.pttlMs})`);
  const losses = nemesis.filter((n): n is Extract<NemesisEvent, { kind: 'data-loss' }> => n.kind === 'data-loss');
  // A loss at an instant counts inside [from, to]; a loss over a window, if the windows meet.
  const lostData = (node: number, from: number, to: number) => losses.some((l) => l.node === node && l.t >= from && (l.since ?? l.t) <= to);

  for (const rec of locks) {
    if (result.minValidityAtReturnMs === null || rec.validityAtReturnMs < result.minValidityAtReturnMs) {
      result.minValidityAtReturnMs = rec.validityAtReturnMs;
    }
    if (rec.validityAtReturnMs <= -toleranceMs) {
      result.expiredGrants++;
      note(`${rec.lock} on ${rec.resource} was returned with validity ${rec.validityAtReturnMs} ms`);
    }
    for (const late of rec.lateExtends) {
      // Both times are the client's monotonic clock, and the validity end it logs is never before
      // the core's (scripts/chaos/lock-loop.ts reads the validity left before the clock): a small
      // fixed tolerance, not the grants' (which compare two clocks).
      if (late.lateByNs < LATE_EXTEND_TOLERANCE_MS * NS_PER_MS) continue;
      result.lateExtends++;
      note(`${rec.lock} on ${rec.resource} was extended by a call made ${(late.lateByNs / NS_PER_MS).toFixed(1)} ms after its validity ended`);
    }
    const votes = rec.releaseVotes;
    if (votes === null || rec.releaseOk === null) continue;
    for (let node = 0; node < votes.length; node++) {
      const granted = rec.grantVotes[node];
      const released = votes[node];
      // Our SET was refused there (the key was held by another token), so a key deleted there
      // was not ours. (A quarantined vote proves nothing here: the grant batch's SET NX runs
      // before the quarantine check and may have set our key, which our release then deletes;
      // see lib/redlock/grant.ts.)
      if (released === 'f' && granted === 'c') {
        result.foreignDeletes++;
        note(`${rec.lock} deleted a key on node ${node + 1} that refused its SET (${granted})`);
      }
      // Our key must still be there before the grant's validity ends, unless the node lost its data.
      if (released === 'n' && granted === 'f' && rec.releaseOk < rec.grantValidUntil && !lostData(node, rec.invoke, rec.releaseOk)) {
        result.foreignDeletes++;
        note(`${rec.lock} found its key gone from node ${node + 1} inside its validity`);
      }
    }
  }
  return result;
}
