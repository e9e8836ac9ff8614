import type { NodeProbes } from './grant-plan';
import type { ScriptCall } from './resp';
import { mergeReleases, type ReleaseCall } from './release-group';
import type { ClockReading } from './clock-check';
import type { QuarantineCause } from './vocabulary';
import type { RedlockClient } from './client';
import type { RedlockSettings } from './settings';
import { ignoreReply, NodeStalledError, NodeWire, type Reply } from './node-wire';

export type { BatchReplies, Reply } from './outbound';
export { NodeBacklogError, NodeStalledError, type BatchGroup } from './node-wire';

/** A reply with the moments its command was written (about) and its reply read, on performance.now(). */
export interface TimedReply {
  readonly reply: unknown;
  readonly sentAt: number;
  readonly readAt: number;
}

/**
 * The node's TIME read just before a grant (grant.ts, grant-group.ts): plain `TIME`, or on a
 * proxy-safe node the same TIME from inside Lua (scripts/time.lua, EVAL keyed on the sentinel so
 * that a proxy routes it to the server the grant's SET goes to: one server per pool). The order
 * argument is unchanged: it is one command written on the same connection before the SET, so it
 * runs before it, and its reply is [seconds, microseconds] of the same server's clock as TIME's.
 * EVAL, never EVALSHA: a NOSCRIPT fall back would re-send it after the SET. Also while the node is
 * still connecting for the first time (a grant sent then, grant.ts sendAlone, is built before the
 * handshake tells whether the node is proxy-safe): the Lua TIME is served either way.
 */
export function timeRead(node: LockNode, probes: NodeProbes): Buffer {
  return node.proxySafe || node.connecting ? probes.timeInLua : probes.time;
}

/**
 * One Redis master as the lock core sees it: the wire to it (node-wire.ts) and what the protocol
 * keeps per node: what its checks found, its quarantine as this client knows it, the rollback
 * detector's WATCH, the clock check's references, and its releases.
 */
export class LockNode extends NodeWire {
  /**
   * What the grant knows of this node's quarantine (see grant.ts): whether to ask for the node's
   * TIME with the probe, and the last quarantine (its sentinel's createdAt and until) seen to be
   * over on the node's clock.
   */
  readonly quarantine: {
    wantTime: boolean;
    overCreatedAt: string | null;
    overUntil: string | null;
    /** The cause of the last quarantine this client saw start or was told of, by its end (words only: votes' detail). */
    cause: { until: number; cause: QuarantineCause } | null;
  } = {
    wantTime: true,
    overCreatedAt: null,
    overUntil: null,
    cause: null,
  };
  /**
   * What this client's last check of the node found (scripts/probe.lua check mode): the
   * redis-server process (run_id) its sentinel speaks for, its maxmemory-policy, and when (a
   * performance.now() time). runId null: check before the next vote (never checked, reconnected,
   * or a probe found something that needs one).
   */
  readonly checks: { runId: string | null; policy: string | null; checkedAt: number; starting: boolean; duplicateOf: number | null } = {
    runId: null,
    policy: null,
    checkedAt: -Infinity,
    starting: false,
    duplicateOf: null,
  };
  /**
   * The fast probe proves a check of ours ran in the process by `SCRIPT EXISTS` (grant-group.ts);
   * false once the node (a proxy before it) refused that command: the script's own fast read then.
   */
  probeByProof = this.connection !== null;
  /**
   * The rollback detector on this connection (grant-group.ts): 'armed' once a WATCH of the anchor
   * was sent right after a probe that found the anchor there (nothing can replace the dataset in
   * place from then on without aborting our next EXEC); 'untrusted' when the anchor was missing at
   * that moment (a WATCH of a missing key misses a reload); 'none' on a new connection.
   */
  watch: 'none' | 'armed' | 'untrusted' = 'none';
  /**
   * Only the core's own connection WATCHes: a client passed in may run the application's own
   * MULTI/EXEC, which would clear our WATCH (and ours could abort theirs). Such a node's fast probe
   * is the probe script's own read, which carries the same evidence (scripts/probe.lua fast mode).
   * Nor does a connection through a proxy that closes on WATCH, MULTI and SCRIPT (proxySafe): the
   * same read. A getter: proxySafe may be found on a reconnection, before its 'ready'.
   */
  get canWatch(): boolean {
    return this.connection !== null && !this.connection.proxySafe;
  }

  /**
   * Reached through a proxy that serves key commands and keyed scripts only (connection.ts
   * proxySafe): it is sent nothing else. What that changes, and why each keeps the guarantees:
   * - No WATCH, MULTI/EXEC or SCRIPT EXISTS (canWatch is false): the fast probe is the probe script's fast
   *   read (EVALSHA, atomic), whose success is itself the proof that a check ran in the process
   *   (NOSCRIPT is followed by a check), and whose `suspect` carries the evidence the WATCH would
   *   (the anchor gone, evicted_keys or the data-replacing commands moved, a RESETSTAT), as for a
   *   client passed in (grant-group.ts).
   * - No plain TIME: timeRead() reads it inside Lua, one command in the same place (grant.ts).
   * - No SCRIPT LOAD at connection: the first EVALSHA of each script falls back to EVAL (sendScript
   *   says what that fall back costs: liveness only).
   * - No subscriber (waiters.ts): releases there wake nobody; the other nodes' messages and the
   *   retry delays do.
   */
  get proxySafe(): boolean {
    return this.connection?.proxySafe === true;
  }

  /** The clock check's references for this node (clock-check.ts), kept across reconnections (connectionReady); a jump seen stays pending until its quarantine is written. */
  readonly clock: { last: ClockReading | null; base: ClockReading | null; jumpPending: boolean } = {
    last: null,
    base: null,
    jumpPending: false,
  };

  private readonly onConnectionError: (node: LockNode, err: Error) => void;

  constructor(
    index: number,
    target: string | RedlockClient,
    maxPending: number,
    onConnectionError: (node: LockNode, err: Error) => void,
    stallAfterMs = Infinity,
    writeCoalescing: RedlockSettings['writeCoalescing'] = 'tick',
  ) {
    super(index, target, maxPending, stallAfterMs, writeCoalescing);
    this.onConnectionError = onConnectionError;
  }

  protected override connectionError(err: Error): void {
    this.onConnectionError(this, err);
  }

  protected override connectionReady(): void {
    // A new connection may reach another process (a restart, a failover behind a proxy): check it
    // before its next vote. Detection does not rely on this (a proxy may keep our socket open while
    // its upstream restarts: the probe finds that, see grant-verdict.ts), it only makes it sooner.
    this.checks.runId = null;
    this.probeByProof = this.canWatch;
    this.watch = 'none';
    // The clock check's readings are kept (clock-check.ts). Each is the node's wall clock against
    // this process's monotonic clock, and neither moves with a TCP connection: dropping them here
    // took the first reading after any network blip for a new baseline, so a jump during the blip
    // (which expires a holder's key early on that node) went unseen and elected a second holder
    // (redlock-rollback.test.ts, "while B's connection to node 3 was down"). A new connection that
    // reaches another process (a restart, a failover behind a proxy) may read another clock: a
    // difference beyond the allowance then counts the node out and forces a check, which finds the
    // new process and quarantines it for that cause first (probe.lua: restart, replaced), so no vote
    // is gained and none is owed; the quarantine only takes votes away, and fences keep the mutex's
    // order (the forced check raises the register to its floor, as any quarantine does).
    super.connectionReady();
  }

  /** Is a check of this node due (never checked since connecting, or the last one is older than intervalMs)? */
  checkDue(intervalMs: number): boolean {
    return this.checks.runId === null || performance.now() - this.checks.checkedAt >= intervalMs;
  }

  /**
   * Run a check (scripts/probe.lua check mode; `call`, or the probes' own) now, behind whatever
   * this node was sent before, then re-arm the rollback detector's WATCH (see armAfterCheck). Not
   * shared between callers: a check judges only the grants that were sent before it. Resolves with
   * the reply and when it was sent and read (performance.now(), for the clock check).
   */
  runCheck(probes: NodeProbes, withSource = false, call?: ScriptCall): Promise<TimedReply> {
    const check = call ?? probes.check();
    return new Promise((resolve, reject) => {
      if (this.refuse(1, (err) => reject(err))) return;
      this.pending++;
      const send = () => {
        const sentAt = performance.now();
        const answer: Reply = (err, value) => {
          if (!err) this.noteCheckAnchor(value);
          if (err) reject(err);
          else resolve({ reply: value, sentAt, readAt: performance.now() });
        };
        if (withSource) {
          // The caller just got NOSCRIPT: send the source at once (EVAL loads it, as a check).
          this.command(check.evalPayload(), (err, value) => {
            this.pending--;
            this.settled++;
            answer(err, value);
          });
        } else {
          this.sendScript(check, answer);
        }
        this.armAfterCheck(probes);
      };
      // Still connecting: after the commands sent before it, like call() and callBatch().
      if (this.booting) void this.booting.then(send);
      else send();
    });
  }

  /** Does this node's fast probe run as a WATCHed transaction (see canWatch, probeByProof)? */
  get watching(): boolean {
    return this.canWatch && this.probeByProof;
  }

  /** Whether the anchor existed after the last check whose reply was read (null: not known). */
  private checkAnchor: boolean | null = null;

  /** Remember what a check's reply says of the anchor (scripts/probe.lua check reply, 12th). */
  noteCheckAnchor(reply: unknown): void {
    this.checkAnchor = Array.isArray(reply) && reply.length >= 13 ? Number(reply[11]) === 1 : false;
  }

  /**
   * After a check: `UNWATCH`, `WATCH <anchor>`. The UNWATCH drops whatever the old WATCH saw (a
   * check judges the process by its own evidence, the probe script's REPLACING calls; what only a WATCH
   * sees is a plain-command write of the anchor, README: assumptions), and a check may create the
   * anchor, which would fire a WATCH armed on it while it was missing. The WATCH is trusted
   * ('armed') only when the check read just before it found the anchor there: replies come in the
   * order sent, so the check's reply is read before the WATCH's (a check re-sent after NOSCRIPT
   * lands after it: untrusted, and the next probe is a check again).
   */
  armAfterCheck(probes: NodeProbes, markClean?: Promise<unknown>): void {
    if (!this.watching) return;
    this.checkAnchor = null;
    // A mark-clean (mark-clean.lua creates the anchor) stands in for the check: its success, when
    // known by the time the WATCH answers, trusts the WATCH (otherwise the next probe is a check).
    markClean?.then(
      (reply) => {
        if (Array.isArray(reply) && Number(reply[0]) === 1) this.checkAnchor = true;
      },
      () => undefined,
    );
    this.sendUntracked(probes.unwatch, ignoreReply);
    this.sendUntracked(probes.watch, (err) => {
      this.watch = !err && this.checkAnchor === true ? 'armed' : 'untrusted';
    });
  }

  /** The WATCH after a fast transaction: trusted when the transaction found the anchor (grant-group.ts). */
  armAfterTransaction(probes: NodeProbes, anchorSeen: () => boolean): void {
    this.sendUntracked(probes.watch, (err) => {
      this.watch = !err && anchorSeen() ? 'armed' : 'untrusted';
    });
  }

  /**
   * A compare-and-delete (release, cleanup). The releases of one tick go out as one script call
   * (release-group.ts argues why that keeps every guarantee). On a stalled node `reply` gets
   * NodeStalledError at once while the release is still sent (within maxPendingPerNode), nobody
   * waiting for its answer: it must follow, on the same connection, any grant of ours the node has
   * yet to run (e.g. held by a partition), so that nothing of ours is left there once it answers.
   * Safety: only the wait changes; what is sent, where and in which order is the same.
   */
  callRelease(release: ReleaseCall, reply: Reply): void {
    if (!this.stalled()) {
      this.callMerged(mergeReleases, mergeReleases, release, reply);
      return;
    }
    const sent = this.pending + 1 <= this.maxPending;
    const err = new NodeStalledError(
      `${this.label} has not answered for a whole round (nodeTimeoutMs): ${
        sent ? 'the release was sent, its answer is not awaited' : `the release was not sent (${this.pending} commands in flight)`
      }`,
    );
    queueMicrotask(() => reply(err, undefined));
    if (!sent) return;
    this.pending++;
    this.sendMerged(mergeReleases, mergeReleases, release, ignoreReply);
  }
}
