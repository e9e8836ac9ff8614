/**
 * The clock check: each node's wall clock (its TIME, which is what expires its keys) held against
 * this client's monotonic clock.
 *
 * Why it matters: a key set with PX ttl lives until the node's wall clock has advanced by ttl. The
 * validity of a grant (quorum.ts) allows the node's clock to run faster than ours by driftFactor
 * (plus 2 ms). A node whose clock jumps forward by J (an NTP step, `date -s`, a VM restored from a
 * snapshot) expires every lock it holds J early: a second client can then be granted there while
 * the first still holds a quorum elsewhere, Kleppmann's counterexample in the seed post. A clock
 * that jumps back or runs slow lengthens leases (liveness only) but moves the hybrid-logical-clock
 * floor of the fence register (probe.lua) back, so it is refused too.
 *
 * How it is measured: every fast probe carries the node's TIME inside its transaction
 * (grant-group.ts), and every check returns it, so no command is added. TIME ran somewhere between
 * the moment the probe was written (sentAt) and the moment its reply was read (readAt), both on
 * performance.now(); so `nodeMs − local` lies in [T − readAt, T − sentAt]. Between two readings the
 * node's offset may move by at most driftFactor × elapsed + 2 ms (the validity's own allowance);
 * the check flags a jump only when even the most favourable ends of the two intervals are further
 * apart than that. A slow round trip widens the intervals: it can hide a jump smaller than itself,
 * never invent one (no false alarm from a loaded machine or a slow node). A client whose own
 * monotonic clock stops (a suspended VM or laptop) sees every node jump forward by the pause: that
 * breaks the assumption the check rests on (the README's), and it costs a clock-jump quarantine
 * written on each node it reads, for every client (maxTtlMs).
 *
 * Two references: the previous reading (a step between two probes) and one up to RATE_WINDOW_MS
 * old (a clock running fast or slow by more than driftFactor: over a minute at the default 1 % that
 * is 600 ms, which a step check between probes a second apart cannot add up). The step reference's
 * allowance stops growing at the lease ceiling, the rate reference's at the larger of the ceiling
 * and its window (allowedDriftMs).
 *
 * What it cannot see: a jump while this client has no reading of the node (a fresh client's first
 * reading is its baseline; see the README's assumptions; a reconnection keeps the readings, node.ts
 * connectionReady), and a jump smaller than the allowance plus the round trips of the two readings
 * compared. The quarantine it starts lasts the ceiling on the node's own clock, which after a
 * forward jump of J still covers every lock the node held (each ends by the jump's real time + ttl
 * ≤ node time + ceiling).
 */
import type { LockNode } from './node';

/** A reading of a node's offset (node wall ms − local monotonic ms) as an interval, and when. */
export interface ClockReading {
  readonly lo: number;
  readonly hi: number;
  /** performance.now() when the probe that read it was written. */
  readonly at: number;
}

/** How old the rate reference may get before the current reading replaces it. */
export const RATE_WINDOW_MS = 60_000;

/**
 * The drift a node's clock may show over `elapsedMs` (quorum.ts: ttl × driftFactor + 2 ms), the
 * elapsed time counted up to `ceilingMs` (the lease ceiling, maxTtlMs). Why the cap: a lease is
 * safe while its node's clock moves no more than driftFactor × ttl + 2 ms beyond ours within it, and
 * ttl ≤ the ceiling; uncapped, the allowance between two readings far apart (a client idle for
 * minutes) grew past any lease's budget, and a step inside one lease went unseen (150 s idle at the
 * default 1 %: a 1.25 s step expired a 1 s lease early; redlock-clock-steps). Capped, a step larger
 * than driftFactor × ceiling + 2 ms plus the widths of the two readings is seen by a client with a
 * reading of the node. That does not make every lease safe: a lease shorter than the ceiling has a
 * smaller budget, and a step between the two is still missed after a gap longer than the ceiling
 * (the README's assumptions). What the cap costs is liveness only: a clock drifting steadily, relative
 * to ours, by more than driftFactor × ceiling over a gap longer than the ceiling is counted out too
 * (at the defaults, 20 ppm over 9 hours without a reading): a quarantine, votes taken away, fences
 * untouched.
 */
export function allowedDriftMs(elapsedMs: number, driftFactor: number, ceilingMs = Infinity): number {
  return Math.min(elapsedMs, ceilingMs) * driftFactor + 2;
}

/** How far apart two readings surely are beyond their drift allowance (ms); ≤ 0 when they agree. */
export function clockExcessMs(ref: ClockReading, now: ClockReading, readAt: number, driftFactor: number, ceilingMs = Infinity): number {
  const allowed = allowedDriftMs(readAt - ref.at, driftFactor, ceilingMs);
  // Forward: even the lowest offset now is above the highest then; backward: the reverse.
  return Math.max(now.lo - ref.hi, ref.lo - now.hi) - allowed;
}

/** The node's TIME reply ([seconds, microseconds]) in ms, or null when it is not one. */
export function timeReplyMs(seconds: unknown, micros: unknown): number | null {
  const s = Number(seconds);
  const us = Number(micros);
  if (!Number.isFinite(s) || !Number.isFinite(us)) return null;
  return s * 1000 + us / 1000;
}

/**
 * Hold one reading of `node`'s TIME (ms) against the previous ones and remember it. Returns the
 * excess in ms when the node's clock jumped or drifted beyond the allowance (and takes this very
 * reading for both references: the node's clock as it is now is the baseline the quarantine's end
 * and any later step are measured against), else 0.
 *
 * A jump seen stays seen until a check that starts its quarantine has answered (`jumpPending`,
 * cleared by clockJumpRecorded): every reading before that counts the node out too. Without it,
 * a probe already on the wire when the jump was seen (another batch, another replay) came back
 * to references it agreed with (the jumped reading) and to a sentinel with no quarantine yet
 * (the check that writes it goes out after it, on the same connection), and voted for: a second
 * holder beside one whose key the jumped clock expired early (found in review). Commands on one
 * connection run in order, so every probe sent after that check reads the quarantine, and every
 * one sent before it is answered before it, while the mark stands.
 */
export function checkClock(node: LockNode, nodeMs: number, sentAt: number, readAt: number, allowance: Allowance): number {
  const clock = node.clock;
  if (clock.jumpPending) return PENDING_JUMP_MS;
  const { driftFactor, maxTtlMs } = allowance;
  const reading: ClockReading = { lo: nodeMs - readAt, hi: nodeMs - sentAt, at: sentAt };
  let excess = 0;
  if (clock.last !== null) excess = Math.max(excess, clockExcessMs(clock.last, reading, readAt, driftFactor, maxTtlMs));
  // The rate reference measures a steady drift over its window: capped no lower than the window, a
  // short ceiling does not turn a clock slewing well within driftFactor (NTP, 500 ppm) into jumps.
  if (clock.base !== null)
    excess = Math.max(excess, clockExcessMs(clock.base, reading, readAt, driftFactor, Math.max(maxTtlMs, RATE_WINDOW_MS)));
  if (excess > 0) {
    // The reading that shows the jump is the node's clock as it is now: the new baseline at once.
    // Forgetting the references here took the first reading after the quarantine was written for
    // the baseline, so a second step in between went unseen and the quarantine, counted on the
    // node's clock, ended early by that step (redlock-clock-steps: +20 s then +5 s; a restart on a
    // clock 10 s behind, then put right).
    clock.last = reading;
    clock.base = reading;
    clock.jumpPending = true;
    return excess;
  }
  remember(clock, reading, readAt, allowance);
  if (clock.base === null || readAt - clock.base.at > RATE_WINDOW_MS) clock.base = clock.last;
  return 0;
}

/**
 * Keep `reading` as the step reference unless the current one is sharper. A reading is only as
 * sharp as its round trip: one wider than the reference it would replace (a slow reply, a stalled
 * node), even once that reference is widened by the drift allowed since, would hide any step up to
 * its width from the next check.
 */
function remember(clock: LockNode['clock'], reading: ClockReading, readAt: number, allowance: Allowance): void {
  const last = clock.last;
  if (last === null || width(reading) <= width(last) + allowedDriftMs(readAt - last.at, allowance.driftFactor, allowance.maxTtlMs))
    clock.last = reading;
}

/** What the clock check allows a node's clock: the drift rate and the lease ceiling the elapsed time is capped at (allowedDriftMs). */
export interface Allowance {
  readonly driftFactor: number;
  readonly maxTtlMs: number;
}

const width = (r: ClockReading) => r.hi - r.lo;

/** What checkClock returns while a jump it saw has no quarantine on the node yet (any excess counts the node out). */
const PENDING_JUMP_MS = 1;

/**
 * Does this reading count the node out for its clock: a jump or drift seen now, or one seen before
 * whose quarantine is not on the node yet (checkClock). A reading without TIME (null) counts it out
 * only in the second case.
 */
export function clockCountsOut(node: LockNode, nodeMs: number | null, sentAt: number, readAt: number, allowance: Allowance): boolean {
  if (nodeMs === null) return node.clock.jumpPending;
  return checkClock(node, nodeMs, sentAt, readAt, allowance) > 0;
}

/**
 * A check that starts a clock-jump quarantine on `node` has answered: the quarantine is there now,
 * counted from that check's TIME (`at`: the node's ms, read between sentAt and readAt). That reading
 * becomes the reference when it is sharper than the one that showed the jump: a jump seen by a slow
 * probe (a reading seconds wide) left a reference that hid a second step up to its width, and the
 * quarantine, counted on the node's clock, ended early by it (two holders; redlock-clock-steps).
 */
export function clockJumpRecorded(
  node: LockNode,
  at?: { nodeMs: number | null; sentAt: number; readAt: number },
  allowance?: Allowance,
): void {
  node.clock.jumpPending = false;
  if (!at || at.nodeMs === null || !allowance) return;
  remember(node.clock, { lo: at.nodeMs - at.readAt, hi: at.nodeMs - at.sentAt, at: at.sentAt }, at.readAt, allowance);
  node.clock.base = node.clock.last;
}
