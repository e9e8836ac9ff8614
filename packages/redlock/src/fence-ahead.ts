/**
 * A fence proposed ahead: a fenced acquire in the grant's own round trip, where it took two.
 *
 * The fence round (fence-round.ts) reads the registers of the voters after their SETs, then
 * raises them to max + 1 while the keys are there: a second round trip after the grant. A client
 * can instead propose a fence `p` it expects to be above them (below: how it guesses) with the
 * grant, and have each node raise its register to p in the same batch, after the probe that reads it
 * (grant-group.ts sends the raise last, as fence-many.lua with no metadata rewrite: register =
 * max(register, p) when every lock key of the attempt holds its token, reply 1; else 0, nothing
 * written). The grant's value carries `"fence":"p"` in its metadata already.
 *
 * When p stands (aheadFence): let S be the nodes that voted for at the early decision, whose
 * raise answered 1 and whose register as judged (read after our SET: the probe's, a check's or a
 * reseed's) is below p. p is the fence when S is a quorum. Why fences still strictly increase in
 * grant order (fence-round.ts's argument, with S for the voters V and for the confirmations C):
 * - Above every earlier grant A of the resource. A's fence F was confirmed on a quorum C_A while
 *   A's key was there. S is a quorum, so it shares a node x with C_A; our SET on x ran when A's key
 *   was gone, so after A's confirmation there, and the register read after our SET is ≥ F. x is
 *   in S, so p > that read ≥ F. A read taken after our own raise is ≥ p and keeps x out of S, so
 *   only a read from before the raise can admit a node.
 * - Below every later grant B. Each node of S raised its register to ≥ p while our key was there
 *   (the raise checks it in the same script), and S is a quorum: exactly what C must be for B's
 *   argument. Registers never decrease (a node whose register may have gone back is quarantined
 *   and reseeded before its votes count again: grant.ts, reseed.ts), so B's read on the node it
 *   shares with S is ≥ p, and B's fence is above it.
 * Otherwise the fence round runs as before, its fence max(read registers of the voters) + 1 (or
 * p when larger): the raises already made only grew registers, which every argument allows. The
 * fence round rewrites the metadata on the nodes it asks; the other nodes our key may be on (a late
 * voter, a quarantined one) get the same confirmation without waiting for it (rewriteElsewhere),
 * so that no key keeps a proposal that may be another grant's fence (for a moment it may: the
 * metadata is shown, never trusted). Mutual exclusion is untouched: the raise writes only the
 * register, and only where our key is (it never creates, deletes or extends a lock key).
 *
 * A raise reaching a node that lost its data before our SET writes the register into a sentinel
 * hash that has no createdAt: that is still "no sentinel" to every reader (parseEpoch, probe.lua),
 * so the node is quarantined as before, and its register starts at p, not below.
 *
 * p = max(the highest register or fence this client has seen, moved on by the µs elapsed on its
 * monotonic clock since it saw it, + 1; the nodes' time now in µs), and above the last proposal,
 * so that the attempts of one client batched on a node rise in the order they were written. The
 * nodes' time is the (lower) median, over the nodes, of the TIME each last answered in a probe
 * (clock-check.ts keeps it against our monotonic clock; a node whose jump is not yet quarantined is
 * left out), moved on by our monotonic clock: no client's own wall clock is read. The registers
 * follow the same clock (a mark-clean and a quarantine's check floor a register at the node's now
 * in µs: mark-clean.lua, probe.lua; the fences proposed ahead are readings of it too), so every
 * client proposes from one shared clock, above the fences the others were granted before, without
 * having read them: a client whose host clock is a minute off proposes what the others do (it used
 * to raise the registers a minute ahead, after which the others fell back to the fence round about
 * every other time). The median keeps a minority of nodes with wrong clocks out of it. With fewer
 * than a quorum of nodes read since they connected (a client's first acquire) no proposal is made:
 * the fence round runs. A register ahead of that clock all the same (an older client, a register set
 * by hand) is adopted from the first read of it and moved on at our clock's rate. The clock only
 * makes the guess good; whether it stands is decided by the registers alone (above), so a wrong
 * guess costs a fence round, and one far ahead makes the fences larger. Above 2^52 no proposal is
 * made (a fence must stay an exact integer in Lua's doubles and JavaScript's
 * numbers). ClusterView.fenceHigh is raised by every probe (grant-verdict.ts recordProbe, through
 * noteRegister) and every fence issued.
 */
import { FenceCall, mergeFences } from './fence-group';
import type { ClusterView } from './grant-plan';
import type { LockNode } from './node';
import { ignoreReply, type Reply } from './node-wire';
import type { Round } from './round';
import type { Vote } from './votes';

/** One attempt's fence proposed ahead: the raise each node gets, and which nodes confirmed it. */
export class FenceAhead {
  readonly call: FenceCall;
  /** Per node index: its raise answered 1 (every lock key held our token when the register was raised). */
  readonly confirmed: boolean[] = [];

  constructor(
    readonly fence: number,
    epochKey: string,
    lockKeys: readonly string[],
    token: string,
  ) {
    this.call = new FenceCall(epochKey, lockKeys, token, fence, '');
  }
}

/** The highest fence proposed ahead: 2^52, well inside the integers a double holds exactly. */
const MAX_PROPOSAL = 2 ** 52;

/** The highest register seen, moved on by the µs since it was seen (`monoMs`: performance.now()). */
function projected(cluster: Pick<ClusterView, 'fenceHigh' | 'fenceHighAt'>, monoMs: number): number {
  return cluster.fenceHigh + Math.max(0, Math.floor((monoMs - cluster.fenceHighAt) * 1000));
}

/** A register read or a fence issued: the base of the next proposal when it is above the projection. */
export function noteRegister(cluster: Pick<ClusterView, 'fenceHigh' | 'fenceHighAt'>, value: number, monoMs = performance.now()): void {
  if (value > projected(cluster, monoMs)) {
    cluster.fenceHigh = value;
    cluster.fenceHighAt = monoMs;
  }
}

/**
 * The nodes' wall clock now, as an offset (ms) from our monotonic clock: the lower median over the
 * nodes of the middle of their last TIME reading's interval (clock-check.ts: off by at most half
 * that probe's round trip), or null when fewer than `quorum` nodes have a reading (header).
 */
export function nodesClockOffset(nodes: readonly Pick<LockNode, 'clock'>[], quorum: number): number | null {
  const offsets: number[] = [];
  for (const node of nodes) {
    const last = node.clock.last;
    if (last !== null && !node.clock.jumpPending) offsets.push((last.lo + last.hi) / 2);
  }
  if (offsets.length < quorum) return null;
  offsets.sort((a, b) => a - b);
  return offsets[(offsets.length - 1) >> 1]!;
}

/** The fence to propose for the next attempt (and reserve it), or null (header): `offsetMs` from nodesClockOffset. */
export function proposeFence(
  cluster: Pick<ClusterView, 'fenceHigh' | 'fenceHighAt'>,
  offsetMs: number | null,
  monoMs = performance.now(),
): number | null {
  if (offsetMs === null) return null;
  // The nodes' clock in µs (the registers' unit): two grants a fraction of a millisecond apart still rise.
  const proposal = Math.max(projected(cluster, monoMs) + 1, Math.floor((monoMs + offsetMs) * 1000));
  if (!(proposal <= MAX_PROPOSAL)) return null;
  cluster.fenceHigh = proposal;
  cluster.fenceHighAt = monoMs;
  return proposal;
}

/**
 * The fence of a grant decided with a quorum for: the proposal when it stands (header), else null
 * (the fence round must run).
 */
export function aheadFence(round: Round, ahead: FenceAhead | null, quorum: number): number | null {
  if (ahead === null) return null;
  let standing = 0;
  for (let i = 0; i < round.votes.length; i++) {
    if (round.votes[i]!.vote === 'for' && ahead.confirmed[i] === true && round.values[i]! < ahead.fence) standing++;
  }
  return standing >= quorum ? ahead.fence : null;
}

/**
 * Raise the fences proposed ahead by the members of one grant batch, in one fence-many.lua call
 * (a command reserved with the first of them: grant-group.ts sends it right after the probe).
 */
export function sendRaises(node: LockNode, calls: readonly FenceCall[], reply: Reply): void {
  if (calls.length === 0) return;
  const call = mergeFences(calls);
  node.sendReserved(call.evalshaPayload(), (err, value) => {
    // A process without the script (a restart, SCRIPT FLUSH): these raises count as unconfirmed
    // (the fence round runs), and the same call goes again with its EVAL fall back, not waited for,
    // so that the script is there for the next grants (a fence round of one confirmation per node
    // sends fence.lua, never this one). Run later, it only grows registers where the keys still
    // hold their tokens, as any confirmation does.
    if (err && err.message.startsWith('NOSCRIPT')) node.call(call, ignoreReply);
    reply(err, value);
  });
}

/**
 * After a proposal that did not stand and a fence round that confirmed `call`'s fence: the nodes
 * the round did not confirm, where our key may be (all but those held by another), get the same
 * confirmation, not waited for. It writes only where every key still holds our token (fence-many.lua):
 * the metadata's fence, and the register raised to it, as any confirmation does.
 */
export function rewriteElsewhere(nodes: readonly LockNode[], grant: readonly Vote[], fenceRound: readonly Vote[], call: FenceCall): void {
  for (let i = 0; i < nodes.length; i++) {
    if (fenceRound[i]!.vote === 'for' || grant[i]!.reason === 'contended') continue;
    nodes[i]!.callMerged(call.epochKey, mergeFences, call, ignoreReply);
  }
}
