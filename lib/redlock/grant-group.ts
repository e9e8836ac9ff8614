/**
 * The grants that go to one node in one batch (one tick of the event loop: at concurrency 64 a
 * node's batch holds dozens of them) share their reads: one `TIME` before them while the node may
 * be quarantined, and one probe (scripts/probe.lua: the sentinel and the fence register) after the
 * last of them, where each grant used to bring its own reads.
 *
 * Why sharing keeps the guarantees grant.ts argues for one grant (commands on one connection run
 * in the order written, and the reads go out in the same write as the grants):
 * - Probe (sentinel and fence register). Read after the batch's last grant, it is read after each
 *   member's SET, which is all the arguments need: a node that lost its data or restarted before a
 *   member's SET has no sentinel, a quarantine, or a sentinel of another process at the read, and
 *   registers only grow. Other clients' commands may run between a SET and the reads, as they
 *   always could. A probe that needs a check (grant-verdict.ts needsCheck) is followed by one, on
 *   the same connection, before any member is judged: still after every SET.
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
import { explainNodeError, judgeGrant, needsCheck, parseProbe, recordProbe, type Probe } from './grant-verdict';
import type { BatchGroup, LockNode, Reply } from './node';
import { deliver } from './outbound';

export class GrantGroup implements BatchGroup {
  private readonly plans: GrantPlan[] = [];
  private readonly replies: Reply[] = [];
  /** Each member's grant reply, or the Error it failed with. */
  private readonly grants: unknown[] = [];
  /** The first member whose SET was written after TIME; −1 while no TIME was sent. */
  private timeFrom = -1;
  private probeWanted = false;
  /** Some member judges the sentinel (not only reads the register). */
  private judging = false;
  private time: unknown = null;
  private probe: unknown = null;
  /** Replies still to come (the members' and the reads'). */
  private waiting = 0;
  private sealed = false;
  private decided = false;

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
    const newProbe = (plan.quarantine || plan.fenced) && !this.probeWanted;
    // The reads it is the first to need are reserved with it, so maxPendingPerNode holds exactly.
    if (!node.reserve(1 + Number(wantTime) + Number(newProbe), reply)) return;
    if (newProbe) this.probeWanted = true;
    if (plan.quarantine) this.judging = true;
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

  /** The batch is being written: the shared probe goes last (a check when one is due). */
  seal(): void {
    this.sealed = true;
    if (!this.probeWanted) return;
    const checking = this.judging && this.node.checkDue(this.probes.checkIntervalMs);
    this.waiting++;
    this.node.sendReserved(checking ? this.probes.check().evalshaPayload() : this.probes.fast, (err, value) => {
      if (err && err.message.startsWith('NOSCRIPT')) {
        // The process has not run a check of ours (a restart, a SCRIPT FLUSH): check it now. Its
        // EVAL fall back is a check too, so this loads the probe only together with a check.
        this.node.runCheck(this.probes, true).then((checked) => this.arrive((this.probe = checked)), (e: Error) => this.arrive((this.probe = e)));
        return;
      }
      this.arrive((this.probe = err ?? value));
    });
  }

  private arrive(_: unknown): void {
    if (--this.waiting === 0 && this.sealed) this.settle();
  }

  /** Every reply is in: check the node first when the probe asks for it, then judge. */
  private settle(): void {
    if (this.probe instanceof Error || this.probe === null) {
      this.decide(null);
      return;
    }
    let probe: Probe;
    try {
      probe = parseProbe(this.probe);
    } catch (err) {
      this.probe = err as Error;
      this.decide(null);
      return;
    }
    if (this.judging && needsCheck(this.node, this.probes, probe)) {
      this.node.runCheck(this.probes).then((checked) => this.decide(parseProbe(checked)), (e: Error) => {
        this.probe = e;
        this.decide(null);
      }).catch((e: unknown) => {
        // parseProbe refused the check's reply: every member needing it fails with that error.
        this.probe = e instanceof Error ? e : new Error(String(e));
        this.decide(null);
      });
      return;
    }
    this.decide(probe);
  }

  /** Judge the members in write order (see the header); each member is answered exactly once. */
  private decide(probe: Probe | null): void {
    if (this.decided) return;
    this.decided = true;
    if (probe !== null) recordProbe(this.node, this.probes, probe);
    const probeFailed = failure(this.probe);
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      const timed = this.timeFrom >= 0 && i >= this.timeFrom;
      const needsProbe = plan.quarantine || plan.fenced;
      const failed = failure(this.grants[i]) ?? (needsProbe ? probeFailed : null) ?? (plan.quarantine && timed ? failure(this.time) : null);
      if (failed) {
        deliver(this.replies[i]!, explainNodeError(failed), undefined);
        continue;
      }
      deliver(this.replies[i]!, null, judgeGrant(this.node, plan, this.grants[i], probe, timed ? this.time : null));
    }
  }
}

function failure(reply: unknown): Error | null {
  return reply instanceof Error ? reply : null;
}
