/**
 * How one node's answers to a grant become its vote: the probe (scripts/probe.lua) read after the
 * SET, the node's TIME read before it, then the grant itself (see grant.ts for why the reads are
 * sound).
 */
import type { QuarantineCause } from './epoch';
import { mayStartQuarantine, type GrantPlan, type NodeProbes } from './grant-plan';
import type { LockNode } from './node';
import { isZero } from './resp';
import { metaTextOf, tokenOf } from './value';
import { timeReplyMs } from './clock-check';
import { noteRegister } from './fence-ahead';

/**
 * A node's answer, in one shape for every kind of grant:
 * [1, register] granted (register 0 unless fenced) | [0, i, holder, meta] held: lock key i
 * (1-based) by token `holder`, whose value carries the metadata text `meta` (null: none) |
 * [2, quarantineUntil, cause, discovered] quarantined (discovered: this grant's check started it) |
 * [3] no sentinel, and no quarantine could be started yet (see ClusterView) |
 * [4, reason, detail, recordedMaxTtlMs] against for a reason of the node's configuration |
 * [5, createdAt] against: the register is being reseeded after a quarantine (reseed.ts).
 */
export type GrantReply =
  | [1, number]
  | [0, number, string, string | null]
  | [2, number, QuarantineCause | null, boolean]
  | [3]
  | [4, 'unsafe-eviction' | 'ceiling-mismatch' | 'error', string, number]
  /** Its quarantine is over but its fence register still owes a reseed (reseed.ts): the sentinel's createdAt. */
  | [5, number];

/** The reply of scripts/probe.lua, fast or check. */
export interface Probe {
  readonly createdAt: string | null;
  readonly until: string | null;
  readonly runId: string | null;
  readonly maxTtlMs: string | null;
  readonly fence: string | null;
  /** Check mode only: the running process, its eviction policy, whether this call started a quarantine, why. */
  readonly check: { runIdNow: string; policy: string; started: boolean; cause: string } | null;
  /** The node's TIME when the probe ran (ms, µs precision), for the clock check; null when not read. */
  readonly timeMs: number | null;
  /**
   * A fast read only: why it cannot be judged without a check ('anchor', 'evicted', 'resetstat',
   * 'replacing': scripts/probe.lua; 'unwatched', 'proof': grant-group.ts), or null.
   */
  readonly suspect: string | null;
  /** The sentinel says the register owes a reseed from the other nodes (reseed.ts). */
  readonly reseed: boolean;
}

/**
 * A script of ours failed because the node lacks a command it calls: say which ones it needs.
 * (rename-command TIME "" or an ACL without INFO make every check fail.)
 */
export function explainNodeError(err: Error): Error {
  if (!/unknown (redis )?command|NOPERM/i.test(err.message)) return err;
  return new Error(
    `the node refuses a command the lock core needs (TIME, INFO, HMGET, HSET: renamed, disabled or not allowed to this ` +
      `user?); its votes cannot count: ${err.message}`,
  );
}

/** A reply that is not the probe's shape (a proxy answering out of order, another script under its SHA). */
export class ProbeReplyError extends Error {
  override readonly name = 'ProbeReplyError' as const;
}

/** A check's reply (13 entries) or the probe script's fast read (9): scripts/probe.lua says what each holds. */
export function parseProbe(reply: unknown): Probe {
  if (!Array.isArray(reply) || (reply.length !== 9 && reply.length !== 13)) {
    throw new ProbeReplyError(`unexpected reply to the probe: ${JSON.stringify(reply)?.slice(0, 80)}`);
  }
  const r = reply as (string | number | null)[];
  const isCheck = r.length === 13;
  return {
    createdAt: text(r[0]),
    until: text(r[1]),
    runId: text(r[2]),
    maxTtlMs: text(r[3]),
    fence: text(r[4]),
    check: isCheck ? { runIdNow: String(r[5]), policy: String(r[6]), started: Number(r[7]) === 1, cause: String(r[8] ?? '') } : null,
    timeMs: isCheck ? timeReplyMs(r[9], r[10]) : timeReplyMs(r[6], r[7]),
    suspect: isCheck || !r[5] ? null : String(r[5]),
    reseed: String(isCheck ? r[12] : r[8]) === '1',
  };
}

/** The fast transaction's sentinel read (FAST_READ_FIELDS) and the TIME beside it, as a Probe. */
export function fastProbe(read: readonly unknown[], time: unknown, suspect: string | null): Probe {
  const t = Array.isArray(time) ? timeReplyMs(time[0], time[1]) : null;
  return {
    createdAt: text(read[0] as string | null),
    until: text(read[1] as string | null),
    runId: text(read[2] as string | null),
    maxTtlMs: text(read[3] as string | null),
    fence: text(read[4] as string | null),
    check: null,
    timeMs: t,
    suspect,
    reseed: String(read[7]) === '1',
  };
}

function text(v: string | number | null | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}

/**
 * Must this probe be followed by a check before it can be judged? A fast probe proves that the
 * sentinel was reconciled with the process it ran in (probe.lua), but not that this is the process
 * this client checked: a sentinel of another process, none at all, or no check of ours yet on this
 * node each need one.
 */
export function needsCheck(node: LockNode, probes: NodeProbes, probe: Probe): boolean {
  if (probe.check !== null) return false;
  // No sentinel: a check starts its quarantine, when this client may (see ClusterView); not more
  // than once per check interval while it may not, or every grant would bring a check. (The vote
  // is against either way: a node without a sentinel never votes for.)
  if (probe.createdAt === null) return mayStartQuarantine(probes.cluster) || node.checkDue(probes.checkIntervalMs);
  // The read cannot vouch for itself: the anchor, evictions, a RESETSTAT or a data-replacing command
  // since the last check (scripts/probe.lua fast mode), or no armed WATCH before it (grant-group.ts).
  if (probe.suspect !== null) return true;
  return node.checks.runId === null || probe.runId !== node.checks.runId;
}

/** Remember what a check found, and what it tells about the cluster's ceiling. */
export function recordProbe(node: LockNode, probes: NodeProbes, probe: Probe): void {
  const cluster = probes.cluster;
  if (probe.check !== null) {
    const runId = probe.check.runIdNow;
    if (node.checks.runId !== null && cluster.runIds.get(node.checks.runId) === node.index) cluster.runIds.delete(node.checks.runId);
    node.checks.runId = runId;
    node.checks.policy = probe.check.policy;
    node.checks.checkedAt = performance.now();
    // Two nodes of the list on one redis-server (localhost and 127.0.0.1, two dbs) are not two
    // independent masters: the later one votes against.
    // The first node checked on this server keeps its vote; any other node of the list found on it
    // votes against from its own check on, so at most one vote per server is ever counted (votes
    // count only after a check). Which one keeps it depends on who answers first, not on the list.
    const first = cluster.runIds.get(runId);
    if (first !== undefined && first !== node.index) {
      node.checks.duplicateOf = first;
    } else {
      cluster.runIds.set(runId, node.index);
      node.checks.duplicateOf = null;
    }
  }
  // Written only when they change: this runs for every probe.
  if (probe.createdAt === null) {
    cluster.withoutSentinel.add(node.index);
  } else {
    if (cluster.withoutSentinel.size > 0) cluster.withoutSentinel.delete(node.index);
    if (Number(probe.maxTtlMs) === probes.maxTtlMs) {
      if (!cluster.ceilingAgreed) cluster.ceilingAgreed = true;
    } else if (!cluster.ceilingConflict) {
      cluster.ceilingConflict = true;
    }
  }
  // The base of this client's next fence proposal (fence-ahead.ts): only a guess, which the grant
  // checks against the registers its own voters read, so any register read may raise it.
  const register = Number(probe.fence);
  if (register > cluster.fenceHigh) noteRegister(cluster, register);
}

/** null: the node may vote; its quarantineUntil: quarantined; 'lost': no sentinel. */
export type EpochVerdict = number | 'lost' | null;

/**
 * The quarantine verdict from the sentinel's createdAt and quarantineUntil, read after the SET, and
 * the node's TIME read before it (null: not asked). A sentinel with quarantineUntil > createdAt
 * records a quarantine, over or not: the node's TIME decides, and a quarantine seen to be over is
 * remembered per node, so TIME is only sent while a node may be quarantined. Without a TIME reply
 * such a node counts as quarantined for this attempt (against: always safe) and the next attempt
 * asks for the time.
 *
 * Remembering is sound because the verdicts of one connection are reached in the order its
 * commands ran: a quarantine remembered as over was over at a TIME that ran before every SET
 * judged after it.
 */
export function epochVerdict(node: LockNode, createdAt: string | null, until: string | null, time: unknown): EpochVerdict {
  const q = node.quarantine;
  if (createdAt === null) {
    q.wantTime = true;
    return 'lost';
  }
  // A quarantine is told apart by its sentinel (createdAt and until), not by until alone.
  if (until === null || (createdAt === q.overCreatedAt && until === q.overUntil) || Number(until) <= Number(createdAt)) {
    q.wantTime = false;
    return null;
  }
  const now = time as [string, string] | null;
  if (now !== null && Number(now[0]) * 1000 + Math.floor(Number(now[1]) / 1000) >= Number(until)) {
    q.overCreatedAt = createdAt;
    q.overUntil = until;
    q.wantTime = false;
    return null;
  }
  q.wantTime = true;
  return Number(until);
}

/**
 * The vote of one grant, from its probe (already checked where needsCheck() asked for it) and the
 * TIME read before its SET (null: not asked). In this order: no sentinel, a ceiling other than
 * ours, an evicting node, a quarantine, then the grant's own reply.
 */
export function judgeGrant(node: LockNode, plan: GrantPlan, grant: unknown, probe: Probe | null, time: unknown): GrantReply {
  if (node.checks.duplicateOf !== null) {
    return [4, 'error', `the same redis-server as node ${node.checks.duplicateOf + 1} (one run_id): not an independent master`, 0];
  }
  if (plan.quarantine && probe !== null) {
    const { probes } = plan;
    const verdict = epochVerdict(node, probe.createdAt, probe.until, time);
    if (verdict === 'lost') return [3];
    const recorded = Number(probe.maxTtlMs);
    if (recorded !== probes.maxTtlMs) {
      return [
        4,
        'ceiling-mismatch',
        `the node records maxTtlMs ${probe.maxTtlMs ?? 'none'}, this client uses ${probes.maxTtlMs}`,
        recorded,
      ];
    }
    if (probes.detect === '2' && node.checks.policy !== 'noeviction') {
      return [
        4,
        'unsafe-eviction',
        `maxmemory-policy is ${node.checks.policy ?? 'unknown'}: it can evict lock keys or the sentinel`,
        recorded,
      ];
    }
    if (verdict !== null) {
      const cause = probe.check?.cause || null;
      return [2, verdict, cause as QuarantineCause | null, probe.check?.started ?? false];
    }
    if (probe.reseed) return [5, Number(probe.createdAt)];
  }
  if (plan.scriptCall === null) {
    if (grant !== null) return held(1, String(grant));
  } else if (!isZero(grant)) {
    const [i, holder] = grant as [number, string];
    return held(Number(i), String(holder));
  }
  return [1, plan.fenced ? Number(probe?.fence ?? 0) : 0];
}

function held(i: number, value: string): GrantReply {
  return [0, i, tokenOf(value), metaTextOf(value)];
}
