/**
 * The grants that go to one node in one batch (one tick of the event loop: at concurrency 64 a
 * node's batch holds dozens of them) share their reads: one `TIME` before them while the node may
 * be quarantined, and one probe (the sentinel, with the fence register in it) after the last of
 * them, where each grant used to bring its own reads.
 *
 * The probe, when no check is due, is one transaction of plain commands: `MULTI`, `SCRIPT EXISTS
 * <sha of this client's check script>`, `HMGET <prefix>epoch …`, `EXISTS <prefix>anchor`, `INFO
 * stats`, `TIME`, `EXEC`, then `WATCH <prefix>anchor` (a Lua call costs about twice the server
 * CPU of such a transaction, and INFO inside Lua far more). The proof is what a fast read needs to be
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
 * What the proof does not show is data that went back in time inside the process the check
 * reconciled: a sync from an older copy and back (REPLICAOF, REPLICAOF NO ONE), DEBUG RELOAD of an
 * older dump, SWAPDB, a FLUSHALL and a restore: the sentinel read is then an older sentinel of the
 * same process, and the script cache survives all of them. The rollback detector: after every
 * probe (this transaction, or a check) the connection WATCHes the anchor, a key a check creates and
 * nothing writes again; Redis marks a WATCH as touched when its key is written, deleted, evicted
 * or expired, and when its database is flushed, swapped or replaced by a load or a sync
 * (touchAllWatchedKeysInDb), which is exactly the class. So the next EXEC aborts (null) if any of
 * them happened since the previous probe; with the WATCH trusted (armed right after a probe that
 * found the anchor, node.ts), that abort is evidence only this connection has: the client starts
 * a `rollback` quarantine with a check (probe.lua ARGV[5]) and every member votes against. A
 * connection without a trusted WATCH (a new one, or the anchor missing) proves nothing by a
 * successful EXEC: its read is `unwatched` and a check decides, and the check sees the same class
 * through the process's count of data-replacing commands (probe.lua REPLACING) — which is also what
 * protects a client with no memory of the node. In the same transaction: `evicted_keys` against
 * the value the last check recorded (an eviction since then is seen by this grant, not the next
 * check) and the node's TIME for the clock check (clock-check.ts; a jump starts a `clock-jump`
 * quarantine the same way). The members are judged only after all this, still after every SET.
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
 * - Fences proposed ahead are raised last, in one call after the probe, so the probe reads the
 *   registers before they rise (fence-ahead.ts argues the rest).
 */
import type { GrantPlan, NodeProbes } from './grant-plan';
import { explainNodeError, fastProbe, judgeGrant, needsCheck, parseProbe, recordProbe, type Probe } from './grant-verdict';
import { clockCountsOut, clockJumpRecorded } from './clock-check';
import { reseedNode } from './reseed';
import { timeRead, type BatchGroup, type LockNode, type Reply, type TimedReply } from './node';
import { deliver } from './outbound';
import { isOne } from './resp';
import { evidenceVote, failure, suspectOf, type Evidence } from './grant-evidence';
import { sendRaises } from './fence-ahead';
import type { FenceCall } from './fence-group';

/** The most commands a probe takes (the fast one: MULTI, proof, read, anchor, stats, TIME, EXEC); seal() returns the rest. */
const FAST_PROBE_COMMANDS = 7;

export class GrantGroup implements BatchGroup {
  private readonly plans: GrantPlan[] = [];
  private readonly replies: Reply[] = [];
  /** Each member's grant reply, or the Error it failed with. */ // Stryker disable next-line ArrayDeclaration: decide() reads grants[i] only for i < plans.length, each written by member i's reply before settle()
  private readonly grants: unknown[] = [];
  /** The first member whose SET was written after TIME; −1 while no TIME was sent. */
  private timeFrom = -1;
  private probeWanted = false;
  /** The fast probe's replies (MULTI, proof, read, anchor, stats, TIME, EXEC) until settle() judges them. */
  private parts: unknown[] | null = null;
  /** Was the connection's WATCH armed on the anchor when the fast transaction's EXEC ran? */ // Stryker disable next-line BooleanLiteral: read only in takeTransaction(), after the EXEC's reply set it
  private watchedBefore = false;
  /** Did the fast transaction find the anchor (so the WATCH sent after it is trusted)? */ // Stryker disable next-line BooleanLiteral: read only by the WATCH's reply, which comes after the EXEC's reply that sets it
  private anchorSeen = false;
  /** Some member judges the sentinel (not only reads the register). */
  private judging = false;
  private time: unknown = null;
  /** The probe's raw reply, or the Error it (or a read it needs) failed with. */
  private probe: unknown = null;
  /** The probe as judged (the fast transaction's is assembled here, not parsed). */
  private parsed: Probe | null = null;
  /** When the probe was written and its reply read (performance.now()), for the clock check. */
  private sentAt = 0;
  private readAt = 0;
  /** Replies still to come (the members' and the reads'). */
  private waiting = 0; // Stryker disable next-line BooleanLiteral: no reply comes before seal(): flush() seals every group before it writes the batch
  private sealed = false;
  private decided = false;
  /** The members' fences proposed ahead, raised in one call after the probe (fence-ahead.ts), and its reply. */
  private readonly aheads: FenceCall[] = [];
  private raised: unknown = null;

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
    const newAhead = plan.ahead !== null && this.aheads.length === 0;
    // The reads it is the first to need are reserved with it, so maxPendingPerNode holds exactly.
    if (!node.reserve(1 + Number(wantTime) + (newProbe ? FAST_PROBE_COMMANDS : 0) + Number(newAhead), reply)) return;
    if (newProbe) this.probeWanted = true;
    if (plan.ahead !== null) this.aheads.push(plan.ahead.call);
    if (plan.quarantine) this.judging = true;
    if (wantTime) {
      this.timeFrom = this.plans.length;
      this.waiting++;
      // Plain TIME, or on a proxy-safe node TIME inside Lua: one command either way, written here,
      // before this member's SET on the same connection, so the order argued above holds (node.ts timeRead).
      node.sendReserved(timeRead(node, this.probes), (err, value) => this.arrive((this.time = err ?? value)));
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
    if (this.aheads.length > 0) this.waiting++;
    const node = this.node;
    const probes = this.probes;
    const checking = this.judging && node.checkDue(probes.checkIntervalMs);
    this.sentAt = performance.now();
    if (checking || !node.watching) {
      // One command: the check, or the script's own fast read on a node that cannot WATCH (a
      // client passed in, a proxy that refuses transactions): it carries its own evidence.
      node.unreserve(FAST_PROBE_COMMANDS - 1);
      this.waiting++;
      node.sendReserved(checking ? probes.check().evalshaPayload() : probes.fast, (err, value) => {
        this.readAt = performance.now();
        if (err && err.message.startsWith('NOSCRIPT')) {
          // The process has not run a check of ours (a restart, a SCRIPT FLUSH): check it now. Its
          // EVAL fall back is a check too, so this loads the probe only together with a check.
          this.checkNow();
          this.arrive(undefined);
          return;
        } // Stryker disable next-line LogicalOperator: a fast read noted (checking false) is never read (no armAfterCheck for it, which resets it first), an error notes false where null stood: only true is trusted
        if (checking && !err) node.noteCheckAnchor(value);
        this.arrive((this.probe = err ?? value));
      });
      if (checking) node.armAfterCheck(probes);
      sendRaises(node, this.aheads, (err, value) => this.arrive((this.raised = err ?? value)));
      return;
    }
    // The fast probe: the proof, the read and the evidence in one transaction (the header says why).
    const parts: unknown[] = new Array<unknown>(FAST_PROBE_COMMANDS).fill(undefined);
    this.parts = parts;
    this.waiting += FAST_PROBE_COMMANDS;
    const payloads = [probes.multi, probes.proof, probes.read, probes.anchorExists, probes.stats, probes.time, probes.exec];
    for (let k = 0; k < FAST_PROBE_COMMANDS - 1; k++)
      node.sendReserved(payloads[k]!, (err, value) => this.arrive((parts[k] = err ?? value)));
    node.sendReserved(probes.exec, (err, value) => {
      // Read in reply order: the connection's WATCH state is the one armed right before this EXEC.
      this.readAt = performance.now();
      this.watchedBefore = node.watch === 'armed';
      this.anchorSeen = !err && Array.isArray(value) && Number(value[2]) === 1;
      this.arrive((parts[FAST_PROBE_COMMANDS - 1] = err ?? value));
    });
    node.armAfterTransaction(probes, () => this.anchorSeen);
    sendRaises(node, this.aheads, (err, value) => this.arrive((this.raised = err ?? value)));
  }

  /** A check, sent now (after every command of the group), standing in for the probe. */
  private checkNow(forced: Evidence | null = null): void {
    this.waiting++;
    this.node.runCheck(this.probes, forced === null, forced === null ? undefined : this.probes.checkForced(forced)).then(
      (checked) => this.arrive(this.takeCheck(checked)),
      (e: Error) => this.arrive((this.probe = e)),
    );
  }

  private takeCheck(checked: TimedReply): unknown {
    this.sentAt = checked.sentAt;
    this.readAt = checked.readAt;
    this.parsed = null;
    return (this.probe = checked.reply);
  }

  private arrive(_: unknown): void {
    if (--this.waiting === 0 && this.sealed) this.settle();
  }

  /** Every reply is in: check the node first when the probe asks for it, then judge. */
  private settle(): void {
    const parts = this.parts;
    if (parts !== null) {
      this.parts = null;
      if (!this.takeTransaction(parts)) return;
    }
    if (this.probe instanceof Error || (this.probe === null && this.parsed === null)) {
      this.decide(null, null);
      return;
    }
    let probe: Probe;
    try {
      probe = this.parsed ?? parseProbe(this.probe);
    } catch (err) {
      this.probe = err as Error;
      this.decide(null, null);
      return;
    }
    this.judgeProbe(probe);
  }

  /**
   * The fast transaction's replies become the probe (false: a check was sent instead, and settle()
   * runs again when it answers). Evidence of a rollback starts a quarantine at once.
   */
  private takeTransaction(parts: unknown[]): boolean {
    const [multi, proof, read, , , , executed] = parts;
    if (parts.every((part) => part instanceof Error)) {
      // The connection failed them all.
      this.probe = executed;
      return true;
    }
    if (multi instanceof Error || proof instanceof Error) {
      // The node (a proxy before it) refuses transactions or SCRIPT: from now on its fast probe
      // is the script's own; a check decides now.
      this.node.probeByProof = false;
      this.checkNow();
      return false;
    }
    if (read instanceof Error) {
      // The read itself failed (LOADING, an ACL without HMGET): every member that needs it fails.
      this.probe = read;
      return true;
    }
    if (executed === null && this.watchedBefore && this.probes.detect === '2') {
      // The EXEC aborted: the anchor, which nothing writes, was touched since the WATCH armed on it
      // (a sync, DEBUG RELOAD, SWAPDB, FLUSHALL, a RESTORE or an eviction of it). The node's data
      // may have gone back in time under the same process: evidence only this connection has.
      this.force('rollback');
      return false;
    }
    if (!Array.isArray(executed) || executed.length !== FAST_PROBE_COMMANDS - 2) {
      // Aborted without an armed WATCH, or not run whole in one process (EXEC without its MULTI:
      // our upstream changed in between): a check decides.
      this.checkNow();
      return false;
    }
    const [proved, fields, anchor, stats, time] = executed as unknown[];
    for (const one of [fields, anchor, stats, time]) {
      if (one instanceof Error) {
        this.probe = one;
        return true;
      }
    }
    if (!Array.isArray(proved) || !isOne(proved[0]) || !Array.isArray(fields)) {
      // Not proved: no check of ours ran in this process (a restart, a SCRIPT FLUSH). A check decides.
      this.checkNow();
      return false;
    }
    this.parsed = fastProbe(fields, time, suspectOf(this.watchedBefore, fields, Number(anchor), String(stats)));
    this.probe = fields;
    return true;
  }

  /** Judge a probe: its clock first, then a check when it asks for one, then the members. */
  private judgeProbe(probe: Probe): void {
    if (this.judging && this.clockJumped(probe)) {
      this.force('clock-jump');
      return;
    }
    if (this.judging && needsCheck(this.node, this.probes, probe)) {
      this.node
        .runCheck(this.probes)
        .then((checked) => {
          this.takeCheck(checked);
          const parsed = parseProbe(checked.reply);
          if (this.clockJumped(parsed)) this.force('clock-jump');
          else this.reseedThenDecide(parsed);
        })
        .catch((e: unknown) => {
          // The check failed, or parseProbe refused its reply: every member needing it fails with that error.
          this.probe = e instanceof Error ? e : new Error(String(e));
          this.decide(null, null);
        });
      return;
    }
    this.reseedThenDecide(probe);
  }

  /**
   * A node whose quarantine is over by the TIME read in this probe (after every member's SET) but
   * whose register still owes its reseed (reseed.ts): the reseed runs now, its reads after that
   * TIME, and the members are judged with the register it leaves (read after their SETs too, on
   * the same connection). Without it every member would vote against and only a later grant could
   * use the node. A failed reseed (too few other nodes) leaves the flag: they vote against.
   */
  private reseedThenDecide(probe: Probe): void {
    const from = this.probes.cluster.reseedFrom;
    const over = probe.timeMs !== null && probe.until !== null && probe.timeMs >= Number(probe.until);
    if (!this.judging || !probe.reseed || !over || from === null || probe.createdAt === null) {
      this.decide(probe, null);
      return;
    }
    reseedNode(from, this.node, this.probes, Number(probe.createdAt)).then(
      (register) => this.decide({ ...probe, reseed: false, fence: String(Math.max(register, Number(probe.fence ?? 0))) }, null),
      (err: unknown) => {
        from.onNodeError(this.node, err instanceof Error ? err : new Error(String(err)));
        this.decide(probe, null);
      },
    );
  }

  /** Does this probe's TIME show the node's clock off our monotonic clock beyond the drift allowance (clock-check.ts)? */
  private clockJumped(probe: Probe): boolean {
    if (this.probes.detect !== '2') return false;
    return clockCountsOut(this.node, probe.timeMs, this.sentAt, this.readAt, this.probes);
  }

  /**
   * Evidence this client alone has: start the quarantine on the node (a check with that cause, so
   * every other client sees it) and vote against whatever it answers.
   */
  private force(evidence: Evidence): void {
    this.node.runCheck(this.probes, false, this.probes.checkForced(evidence)).then(
      (checked) => {
        this.takeCheck(checked);
        let parsed: Probe | null = null;
        try {
          parsed = parseProbe(checked.reply);
          // The quarantine is on the node now, counted from this check's TIME: the reference for later readings.
          if (evidence === 'clock-jump') clockJumpRecorded(this.node, { ...checked, nodeMs: parsed.timeMs }, this.probes);
        } catch (err) {
          this.probe = err as Error;
        }
        this.decide(parsed, evidence);
      },
      (e: Error) => {
        this.probe = e;
        this.decide(null, evidence);
      },
    );
  }

  /** Judge the members in write order (see the header); each member is answered exactly once. */
  private decide(probe: Probe | null, evidence: Evidence | null): void {
    if (this.decided) return;
    this.decided = true;
    if (probe !== null) recordProbe(this.node, this.probes, probe);
    // A quarantine just started on evidence: ask for the node's TIME from the next grant on, so
    // that its end is seen at once (grant-verdict.ts epochVerdict).
    if (evidence !== null) this.node.quarantine.wantTime = true;
    const probeFailed = failure(this.probe);
    // One reply per member with a fence ahead, in order (fence-many.lua); an error confirms none.
    const raised = Array.isArray(this.raised) ? (this.raised as unknown[]) : null;
    let k = 0;
    for (let i = 0; i < this.plans.length; i++) {
      const plan = this.plans[i]!;
      if (plan.ahead !== null && isOne(raised?.[k++])) plan.ahead.confirmed[this.node.index] = true;
      const timed = this.timeFrom >= 0 && i >= this.timeFrom;
      const needsProbe = plan.quarantine || plan.fenced;
      const failed = failure(this.grants[i]) ?? (needsProbe ? probeFailed : null) ?? (plan.quarantine && timed ? failure(this.time) : null);
      if (failed) {
        deliver(this.replies[i]!, explainNodeError(failed), undefined);
        continue;
      }
      if (evidence !== null && plan.quarantine) {
        deliver(this.replies[i]!, null, evidenceVote(probe, evidence));
        continue;
      }
      deliver(this.replies[i]!, null, judgeGrant(this.node, plan, this.grants[i], probe, timed ? this.time : null));
    }
  }
}
