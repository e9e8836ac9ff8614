/**
 * The fence round of a fenced acquire (protocol.ts runs the grant round before it).
 *
 * Fence round. fence = max(fence registers of the nodes that voted for) + 1; then on those nodes,
 * atomically: if every lock key still holds our token, register = max(register, fence). A quorum
 * must confirm.
 *
 * Why fences strictly increase in grant order (for each resource): let lock A get fence F with
 * confirmations on a quorum C, and lock B be granted after A. B's voters V form a quorum, so they
 * share a node x with C. On x, A's confirmation ran while A's key was there, and B's SET NX ran
 * when no key was there; A's key cannot come back (tokens are set once), so B's SET ran after A's
 * confirmation, when x's register was already ≥ F. Registers never decrease, hence B's fence ≥
 * register(x) + 1 > F. (If B's SET on x had run before A's SET there, B's key on x would have been
 * gone before A was even granted, so B's lease, which ends before any of its keys expires, would
 * have ended before A's: B would precede A.) Using only the registers of the voters counted at the
 * early decision is enough: they alone form a quorum.
 *
 * Who confirms: every node whose grant may have landed, i.e. the early voters and, when they may
 * not be enough, the nodes still pending at the early decision (a late voter's SET may be there; one
 * node stalling between the two rounds must not fail a grant the others can confirm). The early
 * voters are asked at once; the pending ones as soon as an early voter refuses or fails, or when
 * the early voters have not all confirmed within the hedge delay (FENCE_HEDGE_FACTOR times the grant
 * round, at least FENCE_HEDGE_MIN_MS, at most half the round's deadline), and not at all when the early voters confirm first: a fenced grant sends
 * quorum, not N, fence scripts when nothing fails. A late voter's confirmation counts only once its
 * own grant vote is known to be for (the vote arrives first on its connection, or after a check
 * that follows it). The argument above needs of C only that it is a quorum of nodes where A's key
 * was there when the register was raised: the fence script checks the key, so this holds for late
 * voters as for early ones, whenever their confirmation is sent.
 *
 * What breaks this is a register that goes back: a node that lost its data, or restarted from an
 * older snapshot, or had its data replaced in place (its register is as old as the copy). The check
 * (scripts/probe.lua) floors the register of such a node at now(ms) × 1000 when it finds the loss,
 * and no vote of that process counts before that check ran (grant.ts); then, once its quarantine
 * is over and before it votes again, a client raises it to the highest register of
 * N − quorum + 1 other nodes (reseed.ts argues why that is ≥ every fence issued): no clock is
 * trusted for fence order. The floor alone stands only with a single node (README: assumptions).
 */
import type { ProtocolContext, AcquireRequest } from './protocol';
import { isOne } from './resp';
import { FenceCall, mergeFences } from './fence-group';
import { Round } from './round';
import type { Vote } from './votes';

/**
 * The hedge delay of a fence round: this many times the grant round's duration (the fence round
 * normally takes about as long), at least FENCE_HEDGE_MIN_MS.
 */
const FENCE_HEDGE_FACTOR = 3;
const FENCE_HEDGE_MIN_MS = 5;

export type FenceOutcome = { ok: true; fence: number; votes: readonly Vote[] } | { ok: false; expired: boolean; votes: readonly Vote[] };

/**
 * Confirm `fence` on a quorum. `voted`: the grant round (decided with a quorum for); `grantMs`: how
 * long it took; `remainingMs`: the validity horizon left; `floor`: a fence proposed ahead that did
 * not stand (fence-ahead.ts), taken when above max + 1 (any fence above the voters' registers keeps
 * the argument above; this one keeps the metadata the grant wrote true).
 */
export async function confirmFence(
  ctx: ProtocolContext,
  req: AcquireRequest,
  token: string,
  metaHead: string,
  voted: Round,
  remainingMs: number,
  grantMs: number,
  floor = 0,
): Promise<FenceOutcome> {
  const { nodes, settings } = ctx;
  let max = 0;
  for (let i = 0; i < nodes.length; i++) if (voted.votes[i]!.vote === 'for' && voted.values[i]! > max) max = voted.values[i]!;
  const fence = Math.max(max + 1, floor);
  if (remainingMs <= 0) return { ok: false, expired: true, votes: voted.votes };
  // A register at 2^53 or beyond (written by hand, or floored by a clock centuries ahead): max + 1
  // is no longer an exact integer above it, and a fence must never repeat. Refused, saying why.
  if (!Number.isSafeInteger(fence)) return { ok: false, expired: false, votes: voted.votes.map(beyondExact) };
  const call = new FenceCall(req.probes.epochKey, req.lockKeys, token, fence, `${metaHead},"fence":"${fence}"}`);
  const timeout = Math.min(settings.nodeTimeoutMs, remainingMs);
  // No hedge when no node is pending (the deadline alone); never later than half the deadline, so
  // that the pending nodes have time to answer.
  const anyPending = voted.forCount + voted.againstCount < nodes.length;
  const hedgeMs = anyPending ? Math.min(timeout / 2, Math.max(FENCE_HEDGE_MIN_MS, FENCE_HEDGE_FACTOR * grantMs)) : Infinity;
  const round = new FenceRound(ctx, voted, call, timeout, hedgeMs, anyPending);
  for (let i = 0; i < nodes.length; i++) {
    const first = voted.votes[i]!;
    if (first.vote === 'for') sendFence(round, i);
    else if (first.reason !== 'pending') round.skip(i);
  }
  await round.done;
  voted.onLate = null;
  if (round.forCount >= ctx.quorum) return { ok: true, fence, votes: round.votes };
  return { ok: false, expired: round.timedOut && remainingMs <= settings.nodeTimeoutMs, votes: round.votes };
}

/**
 * A fence round: early voters' answers count at once; a pending node's (asked by askPending) once
 * its grant's own vote is known to be for, `confirmed` keeping its answer until then. Functions at
 * module level, not closures: this runs for every fenced grant.
 */
class FenceRound extends Round {
  confirmed: unknown[] | null = null;

  constructor(
    ctx: ProtocolContext,
    readonly voted: Round,
    readonly call: FenceCall,
    timeoutMs: number,
    hedgeMs: number,
    anyPending: boolean,
  ) {
    super(ctx.nodes, ctx.quorum, false, timeoutMs, onFenceReply, ctx.onNodeError, false, hedgeMs, anyPending ? askPending : null);
  }
}

function onFenceReply(r: Round, i: number, reply: unknown): void {
  const round = r as FenceRound;
  if (round.voted.votes[i]!.vote === 'for') {
    if (isOne(reply)) {
      round.accept(i);
      return;
    }
    round.reject(i, 'lost');
    round.hedge();
    return;
  }
  round.confirmed![i] = reply;
  settlePending(round, i);
}

function settlePending(round: FenceRound, i: number): void {
  const answer = round.confirmed?.[i];
  const first = round.voted.lateVotes?.[i];
  if (answer === undefined || first === undefined) return; // its answer or its grant's vote is not in yet
  if (first.vote !== 'for') round.reject(i, first.reason, first.detail);
  else if (isOne(answer)) round.accept(i);
  else round.reject(i, 'lost');
}

/** The hedge: ask the nodes still pending at the grant's early decision (those whose grant may have landed). */
function askPending(r: Round): void {
  const round = r as FenceRound;
  const { voted, nodes } = round;
  voted.onLate = (i) => settlePending(round, i);
  for (let i = 0; i < nodes.length; i++) {
    if (voted.votes[i]!.reason !== 'pending') continue;
    if (voted.lateVotes?.[i]?.vote === 'against') {
      round.skip(i);
      continue;
    }
    round.confirmed ??= new Array<unknown>(nodes.length);
    sendFence(round, i);
  }
}

/**
 * A confirmation, merged with the others the node's batch carries (fence-group.ts): one group per
 * sentinel key, since a merged call raises one register.
 */
function sendFence(round: FenceRound, i: number): void {
  round.nodes[i]!.callMerged(round.call.epochKey, mergeFences, round.call, round.reply(i));
}

/** A voter's vote when its register leaves no exact fence above it (the others' stay as they were). */
function beyondExact(vote: Vote): Vote {
  if (vote.vote !== 'for') return vote;
  return { ...vote, vote: 'against', reason: 'error', detail: 'fence register at 2^53 or beyond: no exact integer fence above it' };
}
