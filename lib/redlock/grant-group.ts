/**
 * The grants that go to one node in one batch (one tick of the event loop: at concurrency 64 a
 * node's batch holds dozens of them) share their reads: one `TIME` before them while the node may
 * be quarantined, and one `HMGET <epoch>` and one `GET <fence>` after the last of them, where
 * each grant used to bring its own. At concurrency 64 that is a third of the commands of a grant
 * and of the replies to parse, on both sides.
 *
 * Why sharing keeps the guarantees grant.ts argues for one grant (commands on one connection run
 * in the order written, and the reads go out in the same write as the grants):
 * - Epoch and fence register. Read after the batch's last grant, they are read after each
 *   member's SET, which is all the arguments need: a node that lost its data before a member's SET
 *   has no sentinel (or a quarantine) at the read, and registers only grow. Other clients'
 *   commands may run between a SET and the reads, as they always could.
 * - TIME. It is written when the first member that wants it joins, so it runs before that
 *   member's SET and every later one, never before the earlier members': those are judged as if
 *   no TIME was read (a possible quarantine counts as not over: they vote against, which is safe).
 *   The members are judged in write order, the ones before TIME first, so a quarantine that the
 *   TIME finds over (and that the node then remembers as over) never lets a SET that ran before
 *   that TIME vote for.
 * - A failed read fails every member that needs it (each votes `error`), as a failed command of
 *   its own batch did.
 */
import type { GrantPlan, NodeProbes } from './grant-plan';
import { epochVerdict, grantReply, type EpochVerdict } from './grant-verdict';
import type { BatchGroup, LockNode, Reply } from './node';
import { deliver } from './outbound';

export class GrantGroup implements BatchGroup {
  private readonly plans: GrantPlan[] = [];
  private readonly replies: Reply[] = [];
  /** Each member's grant reply, or the Error it failed with. */
  private readonly grants: unknown[] = [];
  /** The first member whose SET was written after TIME; −1 while no TIME was sent. */
  private timeFrom = -1;
  private epochWanted = false;
  private fenceWanted = false;
  private time: unknown = null;
  private epoch: unknown = null;
  private fence: unknown = null;
  /** Replies still to come (the members' and the reads'). */
  private waiting = 0;
  private sealed = false;

  constructor(private readonly node: LockNode, private readonly probes: NodeProbes) {}

  /** The group of the batch `node` is collecting for grants with these probes. */
  static of(node: LockNode, probes: NodeProbes): GrantGroup {
    return node.groupOf(probes, () => new GrantGroup(node, probes));
  }

  /**
   * Add a grant: its command now, the shared reads when the batch is written. `reply` gets the
   * member's GrantReply, or the error its grant or a read it needs failed with (or NodeBacklogError
   * when the node has too many commands in flight to take it).
   */
  add(plan: GrantPlan, reply: Reply): void {
    const node = this.node;
    const wantTime = plan.quarantine && this.timeFrom < 0 && node.quarantine.wantTime;
    const newEpoch = plan.quarantine && !this.epochWanted;
    const newFence = plan.fenced && !this.fenceWanted;
    // The reads it is the first to need are reserved with it, so maxPendingPerNode holds exactly.
    if (!node.reserve(1 + Number(wantTime) + Number(newEpoch) + Number(newFence), reply)) return;
    if (newEpoch) this.epochWanted = true;
    if (newFence) this.fenceWanted = true;
    if (wantTime) {
      this.timeFrom = this.plans.length;
      this.waiting++;
      node.sendReserved(this.probes.time, (err, value) => this.arrive((this.time = err ?? value)));
    }
    const at = this.plans.length;
    this.plans.push(plan);
    this.replies.push(reply);
    this.grants.push(undefined);
    this.waiting++;
    node.sendReserved(plan.grant, (err, value) => this.arrive((this.grants[at] = err ?? value)));
  }

  /** The batch is being written: the shared reads go last. */
  seal(): void {
    this.sealed = true;
    if (this.epochWanted) {
      this.waiting++;
      this.node.sendReserved(this.probes.epoch, (err, value) => this.arrive((this.epoch = err ?? value)));
    }
    if (this.fenceWanted) {
      this.waiting++;
      this.node.sendReserved(this.probes.fence, (err, value) => this.arrive((this.fence = err ?? value)));
    }
  }

  private arrive(_: unknown): void {
    if (--this.waiting === 0 && this.sealed) this.decide();
  }

  /** Every reply is in: judge the members in write order (see the header). */
  private decide(): void {
    // Each verdict is reached once, the one without TIME first (every member before TIME precedes
    // every member after it).
    let beforeTime: EpochVerdict | typeof UNJUDGED = UNJUDGED;
    let afterTime: EpochVerdict | typeof UNJUDGED = UNJUDGED;
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      const timed = this.timeFrom >= 0 && i >= this.timeFrom;
      const failed = failure(this.grants[i]) ?? (plan.quarantine ? failure(this.epoch) ?? (timed ? failure(this.time) : null) : null) ??
        (plan.fenced ? failure(this.fence) : null);
      if (failed) {
        deliver(this.replies[i]!, failed, undefined);
        continue;
      }
      let verdict: EpochVerdict = null;
      if (plan.quarantine) {
        if (timed) verdict = afterTime === UNJUDGED ? (afterTime = epochVerdict(this.node, this.epoch, this.time)) : afterTime;
        else verdict = beforeTime === UNJUDGED ? (beforeTime = epochVerdict(this.node, this.epoch, null)) : beforeTime;
      }
      deliver(this.replies[i]!, null, grantReply(plan, this.grants[i], verdict, this.fence));
    }
  }
}

const UNJUDGED = Symbol('unjudged');

function failure(reply: unknown): Error | null {
  return reply instanceof Error ? reply : null;
}
