/**
 * The grants that go to one node in one batch (one tick of the event loop: at concurrency 64 a
 * node's batch holds dozens of them) share their reads: one `TIME` before them while the node may
 * be quarantined, and one probe (the sentinel, with the fence register in it) after the last of
 * them, where each grant used to bring its own reads.
 *
 * The probe, when no check is due, is one transaction of two plain commands: `MULTI`, `SCRIPT EXISTS
 * <sha of this client's check script>`, `HMGET <prefix>epoch …`, `EXEC` (a Lua call costs about
 * twice the server CPU of the whole transaction). The proof is what a fast read needs to be
 * trusted (see grant.ts): the script is in a process's cache only after a check of exactly this
 * client's kind ran in that process (it is loaded by nothing but a check's EVAL, see
 * scripts/probe.lua), so `1` says a check ran in the process before the read, and the read is
 * that process's sentinel as reconciled by that check (a restart from an old snapshot found by it
 * has already written the new process's runId and its quarantine). One transaction, because the
 * proof and the read must be about the same process at the same moment, as the script's own
 * fast read was: two separate commands let a proxy that keeps our socket across an upstream
 * restart answer the proof from the old process and the read from the new one (an old snapshot
 * whose sentinel names the old process: a stale register, a lower fence), and in the other order
 * another client's check between them can prove a stale read. A transaction runs whole in one
 * process or not at all (EXEC without its MULTI fails). `0` (a restart, SCRIPT FLUSH) is followed
 * by a check, as NOSCRIPT was; a node that refuses the transaction or SCRIPT (a proxy) gets the
 * probe script's own fast read (EVALSHA, atomic too) from then on.
 *
 * Why sharing keeps the guarantees grant.ts argues for one grant (commands on one connection run
 * in the order written, and the reads go out in the same write as the grants):
 * - Probe (proof, sentinel and fence register). Read after the batch's last grant, it is read after each
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
import { isOne } from './resp';

/** The most commands a probe takes (the fast one: MULTI, proof, read, EXEC); seal() returns the rest. */
const FAST_PROBE_COMMANDS = 4;

export class GrantGroup implements BatchGroup {
  private readonly plans: GrantPlan[] = [];
  private readonly replies: Reply[] = [];
  /** Each member's grant reply, or the Error it failed with. */
  private readonly grants: unknown[] = [];
  /** The first member whose SET was written after TIME; −1 while no TIME was sent. */
  private timeFrom = -1;
  private probeWanted = false;
  /** The fast probe's replies (MULTI, proof, read, EXEC) until settle() makes them the probe. */
  private parts: unknown[] | null = null;
  /** Some member judges the sentinel (not only reads the register). */
  private judging = false;
  private time: unknown = null;
  private probe: unknown = null;
  /** Replies still to come (the members' and the reads'). */
  private waiting = 0;
  private sealed = false;
  private decided = false;

  constructor(
    private readonly node: LockNode,
    private readonly probes: NodeProbes,
  ) {}

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
    if (!node.reserve(1 + Number(wantTime) + (newProbe ? FAST_PROBE_COMMANDS : 0), reply)) return;
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
    const node = this.node;
    const probes = this.probes;
    const checking = this.judging && node.checkDue(probes.checkIntervalMs);
    if (checking || !node.probeByProof) {
      // One command: the check, or the script's own fast read on a node that refuses SCRIPT EXISTS.
      node.unreserve(FAST_PROBE_COMMANDS - 1);
      this.waiting++;
      node.sendReserved(checking ? probes.check().evalshaPayload() : probes.fast, (err, value) => {
        if (err && err.message.startsWith('NOSCRIPT')) {
          // The process has not run a check of ours (a restart, a SCRIPT FLUSH): check it now. Its
          // EVAL fall back is a check too, so this loads the probe only together with a check.
          this.checkNow();
          this.arrive(undefined);
          return;
        }
        this.arrive((this.probe = err ?? value));
      });
      return;
    }
    // The fast probe: the proof and the read in one transaction (the header says why).
    const parts: unknown[] = [undefined, undefined, undefined, undefined];
    this.parts = parts;
    this.waiting += FAST_PROBE_COMMANDS;
    node.sendReserved(probes.multi, (err, value) => this.arrive((parts[0] = err ?? value)));
    node.sendReserved(probes.proof, (err, value) => this.arrive((parts[1] = err ?? value)));
    node.sendReserved(probes.read, (err, value) => this.arrive((parts[2] = err ?? value)));
    node.sendReserved(probes.exec, (err, value) => this.arrive((parts[3] = err ?? value)));
  }

  /** A check, sent now (after every command of the group), standing in for the probe. */
  private checkNow(): void {
    this.waiting++;
    this.node.runCheck(this.probes, true).then(
      (checked) => this.arrive((this.probe = checked)),
      (e: Error) => this.arrive((this.probe = e)),
    );
  }

  private arrive(_: unknown): void {
    if (--this.waiting === 0 && this.sealed) this.settle();
  }

  /** Every reply is in: check the node first when the probe asks for it, then judge. */
  private settle(): void {
    const parts = this.parts;
    if (parts !== null) {
      this.parts = null;
      const [multi, proof, read, executed] = parts;
      if (parts.every((part) => part instanceof Error)) {
        // The connection failed them all.
        this.probe = executed;
      } else if (multi instanceof Error || proof instanceof Error) {
        // The node (a proxy before it) refuses transactions or SCRIPT: from now on its fast probe
        // is the script's own; a check decides now.
        this.node.probeByProof = false;
        this.checkNow();
        return;
      } else if (read instanceof Error) {
        // The read itself failed (LOADING, an ACL without HMGET): every member that needs it fails.
        this.probe = read;
      } else if (
        Array.isArray(executed) &&
        executed.length === 2 &&
        Array.isArray(executed[0]) &&
        isOne(executed[0][0]) &&
        Array.isArray(executed[1])
      ) {
        this.probe = executed[1];
      } else {
        // Not proved: no check of ours ran in this process (a restart, a SCRIPT FLUSH: the proof
        // answered 0), or the transaction did not run whole in one process (EXEC without its
        // MULTI: our upstream changed in between). A check now decides.
        this.checkNow();
        return;
      }
    }
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
      this.node
        .runCheck(this.probes)
        .then(
          (checked) => this.decide(parseProbe(checked)),
          (e: Error) => {
            this.probe = e;
            this.decide(null);
          },
        )
        .catch((e: unknown) => {
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
