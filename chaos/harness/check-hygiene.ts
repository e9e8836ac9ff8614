import { attemptOf, type LeakedKey, type LiveKey, type NemesisEvent } from './history';
import type { AcquireFailure, LockRecord } from './locks';

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
  /**
   * Keys left where nothing may remain, read while they would still be live: a rejected acquire's
   * on a node that answered it (not in its cleanupPending), read right after the rejection or at
   * quiescence; a released lock's on a node that granted it and answered its release.
   */
  leftovers: number;
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
export function checkHygiene(
  locks: Iterable<LockRecord>,
  nemesis: readonly NemesisEvent[],
  leaked: readonly LeakedKey[],
  toleranceMs: number,
  failures: readonly AcquireFailure[] = [],
  live: readonly LiveKey[] = [],
): HygieneResult {
  const result: HygieneResult = {
    leakedKeys: leaked.length,
    foreignDeletes: 0,
    expiredGrants: 0,
    lateExtends: 0,
    leftovers: 0,
    minValidityAtReturnMs: null,
    examples: [],
  };
  const note = (line: string) => {
    if (result.examples.length < MAX_EXAMPLES) result.examples.push(line);
  };
  for (const key of leaked.slice(0, 3)) note(`leaked key ${key.key} on node ${key.node + 1} (pttl ${key.pttlMs})`);
  // Keys at quiescence, by the acquire that wrote them.
  const liveByAttempt = new Map<string, number[]>();
  for (const k of live) {
    const attempt = attemptOf(k.value);
    if (attempt !== null) liveByAttempt.set(attempt, [...(liveByAttempt.get(attempt) ?? []), k.node]);
  }
  for (const f of failures) {
    const atQuiescence = (liveByAttempt.get(f.lock) ?? []).filter((n) => f.pending !== null && !f.pending.includes(n));
    const nodes = [...new Set([...f.leftovers, ...atQuiescence])].sort((a, b) => a - b);
    if (nodes.length === 0) continue;
    result.leftovers++;
    note(
      `${f.lock} on ${f.resource} was rejected (${f.error}) and left its key on node(s) ${nodes.map((n) => n + 1).join(',')}, which answered it` +
        (f.leftovers.length ? '' : ' (found at quiescence)'),
    );
  }
  const losses = nemesis.filter((n): n is Extract<NemesisEvent, { kind: 'data-loss' }> => n.kind === 'data-loss');
  // A loss at an instant counts inside [from, to]; a loss over a window, if the windows meet.
  const lostData = (node: number, from: number, to: number) => losses.some((l) => l.node === node && l.t >= from && (l.since ?? l.t) <= to);

  const stops = clientStops(nemesis);
  for (const rec of locks) {
    // Validity at return in the client process's own running time after the core's decision: the
    // time the runner kept the process stopped between the decision (the core's 'acquire' event,
    // logged by the client) and the return is not counted. Such a stop lands at a moment of the
    // runner's choosing (a grant decided with 300 ms left and returned after an 800 ms stop is not a
    // grant without validity). A stop before the decision counts: the core's clock runs through it,
    // and a core that grants after it with no validity left is what this check is for. Without a
    // logged decision nothing is forgiven.
    const stoppedMs = rec.decided === null ? 0 : stoppedDuring(stops, rec.client, rec.decided, rec.ok) / NS_PER_MS;
    const validity = rec.validityAtReturnMs + stoppedMs;
    if (result.minValidityAtReturnMs === null || validity < result.minValidityAtReturnMs) {
      result.minValidityAtReturnMs = validity;
    }
    if (validity <= -toleranceMs) {
      result.expiredGrants++;
      note(
        `${rec.lock} on ${rec.resource} was returned with validity ${validity.toFixed(0)} ms` +
          (stoppedMs > 0 ? ` in its own running time (${rec.validityAtReturnMs} ms on the clock, ${stoppedMs.toFixed(0)} ms stopped)` : ''),
      );
    }
    for (const late of rec.lateExtends) {
      // Both times are the client's monotonic clock, and the validity end it logs is never before
      // the core's (chaos/workers/lock-loop.ts reads the validity left before the clock): a small
      // fixed tolerance, not the grants' (which compare two clocks).
      if (late.lateByNs < LATE_EXTEND_TOLERANCE_MS * NS_PER_MS) continue;
      result.lateExtends++;
      note(
        `${rec.lock} on ${rec.resource} was extended by a call made ${(late.lateByNs / NS_PER_MS).toFixed(1)} ms after its validity ended`,
      );
    }
    const votes = rec.releaseVotes;
    if (votes === null || rec.releaseOk === null) continue;
    // Released: its key must be gone from every node that granted it and answered the release
    // (deleted it, or found nothing of ours); one run of commands, in order, on that node.
    const kept = (liveByAttempt.get(rec.lock) ?? []).filter((n) => rec.grantVotes[n] === 'f' && (votes[n] === 'f' || votes[n] === 'n'));
    if (kept.length) {
      result.leftovers++;
      note(
        `${rec.lock} on ${rec.resource} was released, yet its key was still on node(s) ${kept.map((n) => n + 1).join(',')} at quiescence`,
      );
    }
    for (let node = 0; node < votes.length; node++) {
      const granted = rec.grantVotes[node];
      const released = votes[node];
      // Our SET was refused there (the key was held by another token), so a key deleted there
      // was not ours. (A quarantined vote proves nothing here: the grant batch's SET NX runs
      // before the quarantine check and may have set our key, which our release then deletes;
      // see packages/redlock/src/grant.ts.)
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

/** Per client, the [stop, resume) intervals of the runner's stops (a stop never resumed runs on). */
function clientStops(nemesis: readonly NemesisEvent[]): Map<number, Array<[number, number]>> {
  const stops = new Map<number, Array<[number, number]>>();
  const open = new Map<number, number>();
  for (const ev of nemesis) {
    if (ev.kind === 'client-stop') open.set(ev.client, ev.t);
    if (ev.kind === 'client-resume' && open.has(ev.client)) {
      const list = stops.get(ev.client) ?? [];
      list.push([open.get(ev.client)!, ev.t]);
      stops.set(ev.client, list);
      open.delete(ev.client);
    }
  }
  for (const [client, t] of open) stops.set(client, [...(stops.get(client) ?? []), [t, Number.MAX_SAFE_INTEGER]]);
  return stops;
}

/** How long (ns) `client` was stopped by the runner within [from, to]. */
function stoppedDuring(stops: Map<number, Array<[number, number]>>, client: number, from: number, to: number): number {
  let total = 0;
  for (const [a, b] of stops.get(client) ?? []) total += Math.max(0, Math.min(b, to) - Math.max(a, from));
  return total;
}
