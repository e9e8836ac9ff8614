/**
 * How one node's answers to a grant become its vote: the quarantine verdict from the epoch
 * sentinel (and the node's TIME), then the grant itself (see grant.ts for why the reads are sound).
 */
import type { GrantPlan } from './grant-plan';
import type { LockNode } from './node';
import { metaTextOf, tokenOf } from './value';

/**
 * A node's answer, in one shape for every kind of grant:
 * [1, register] granted (register 0 unless fenced) | [0, i, holder, meta] held: lock key i
 * (1-based) by token `holder`, whose value carries the metadata text `meta` (null: none) | [2, quarantineUntil] quarantined | [3] no sentinel: the node lost its data
 * (it votes quarantined at once; startQuarantine() records the quarantine).
 */
export type GrantReply = [1, number] | [0, number, string, string | null] | [2, number] | [3];

/** null: the node may vote; its quarantineUntil: quarantined; 'lost': no sentinel. */
export type EpochVerdict = number | 'lost' | null;

/**
 * The quarantine verdict from `HMGET <epoch> createdAt quarantineUntil`, read after the SET, and
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
export function epochVerdict(node: LockNode, epoch: unknown, time: unknown): EpochVerdict {
  const [createdAt, until] = epoch as [string | null, string | null];
  const q = node.quarantine;
  if (createdAt === null) {
    q.wantTime = true;
    return 'lost';
  }
  // A quarantine is told apart by its sentinel (createdAt and until), not by until alone.
  const id = `${createdAt}|${until}`;
  if (until === null || Number(until) <= Number(createdAt) || id === q.over) {
    q.wantTime = false;
    return null;
  }
  const now = time as [string, string] | null;
  if (now !== null && Number(now[0]) * 1000 + Math.floor(Number(now[1]) / 1000) >= Number(until)) {
    q.over = id;
    q.wantTime = false;
    return null;
  }
  q.wantTime = true;
  return Number(until);
}

/** The vote of one grant: its quarantine verdict first, then the grant's own reply. */
export function grantReply(plan: GrantPlan, grant: unknown, verdict: EpochVerdict, fence: unknown): GrantReply {
  if (verdict === 'lost') return [3];
  if (verdict !== null) return [2, verdict];
  if (plan.scriptCall === null) {
    if (grant !== null) return held(1, String(grant));
  } else if (grant !== 0) {
    const [i, holder] = grant as [number, string];
    return held(Number(i), String(holder));
  }
  return [1, plan.fenced ? Number(fence ?? 0) : 0];
}

function held(i: number, value: string): GrantReply {
  return [0, i, tokenOf(value), metaTextOf(value)];
}
