/**
 * The first round of an acquire on one node: the grant, then the probe (scripts/probe.lua: the
 * sentinel, the fence register and, when due, a check of the process), sent back to back as one
 * batch on the node's connection.
 *
 * - One resource: `SET <lock> '<token> <metadata>' NX GET PX <ttl>` grants the lock exactly when
 *   no key was there (atomically, like a script's GET-then-SET) and otherwise answers the holder's
 *   value (its token and metadata, see value.ts). No Lua for the grant: it is the hot path.
 * - Several resources: scripts/acquire.lua grants them all or none.
 * - Then, read after the grant: the probe. While the node may be quarantined, `TIME` goes first,
 *   before the grant, so that "the quarantine was over" is a statement about the moment our SET
 *   ran (grant-group.ts argues the order).
 *
 * Why reading the sentinel and the register after the grant, outside the grant, keeps the
 * guarantees (see protocol.ts for the rest):
 * - Quarantine. A node votes for only if the sentinel read after our SET is there, speaks for the
 *   redis-server process this client checked (a fast probe is trusted only with its proof that a
 *   check ran in that process, grant-group.ts, and the client compares the runId with the one its
 *   own check found), its
 *   quarantine is over, its ceiling is ours and its eviction policy (as of the last check) is
 *   noeviction. A node that lost its data or restarted before our SET fails one of these at that
 *   read: a missing sentinel, a sentinel of another process, or a failed proof, each followed by a check
 *   (on the same connection, so still after our SET) that starts the quarantine. A loss after the
 *   read is the case the quarantine exists for, found by the next acquire: its quarantine runs
 *   until every lock the node held has expired (until = loss found + maxTtl, or process start +
 *   maxTtl for a restart: every lost lock was set before the process started). Our key may stay
 *   on a node that voted against: that only makes others' SET NX fail there (liveness), and our
 *   release or its ttl removes it.
 * - Fences. The argument in fence-round.ts needs the register read on a node after our
 *   SET there: the probe runs after the SET on the same connection, and registers only grow (a
 *   node found restarted or without data gets the floor now × 1000, see probe.lua).
 * The metadata travels inside the lock key's value, so a SET that loses writes nothing at all.
 *
 * The grants of one batch on a node share these reads (grant-group.ts argues why that keeps the
 * above). A grant sent while the node is still connecting for the first time, or again after a
 * NOSCRIPT of the acquire script, goes as a batch of its own: [TIME], grant, then a check.
 */
import { GrantGroup } from './grant-group';
import type { GrantPlan } from './grant-plan';
import { explainNodeError, judgeGrant, parseProbe, recordProbe, type Probe } from './grant-verdict';
import { timeRead, type BatchReplies, type LockNode, type Reply } from './node';
import { clockCountsOut, clockJumpRecorded, timeReplyMs } from './clock-check';

/** Send the plan to one node; `reply` gets its GrantReply, or the error the node failed with. */
export function sendGrant(node: LockNode, plan: GrantPlan, reply: Reply): void {
  if (node.connecting) {
    sendAlone(node, plan, plan.grant, reply);
    return;
  }
  GrantGroup.of(node, plan.probes).add(
    plan,
    plan.scriptCall === null
      ? reply
      : (err, value) => {
          if (err && isNoScript(err)) {
            // The node lost its script cache: the grant again with the script's source, with reads of
            // its own. The group holds this reply until its check answers, so a command we sent after
            // the first try (a cleanup's release, which falls back to EVAL at once) may run before the
            // second: the node is recorded, and a failed attempt names it in cleanupPending.
            replayed(plan, node);
            sendAlone(node, plan, plan.scriptCall!.evalPayload(), reply);
            return;
          }
          reply(err, value);
        },
  );
}

function replayed(plan: GrantPlan, node: LockNode): void {
  (plan.replayedOn ??= new Array<boolean>(node.index + 1).fill(false))[node.index] = true;
}

function isNoScript(err: Error): boolean {
  return err.message.startsWith('NOSCRIPT');
}

/** One grant as a batch of its own: [TIME], grant, then (when needed) a check, in this order. */
function sendAlone(node: LockNode, plan: GrantPlan, grant: Buffer, reply: Reply): void {
  // Ask for the node's TIME only while it may be quarantined (decided once per send).
  const withTime = plan.quarantine && node.quarantine.wantTime;
  const grantAt = withTime ? 1 : 0;
  let batch: BatchReplies | Error | null = null;
  let probe: unknown = plan.quarantine || plan.fenced ? undefined : null;
  let retried = false;
  const settle = (): void => {
    if (batch === null || probe === undefined || retried) return;
    if (batch instanceof Error) {
      reply(batch, undefined);
      return;
    }
    for (const one of batch) {
      if (one instanceof Error) {
        reply(explainNodeError(one), undefined);
        return;
      }
    }
    if (probe instanceof Error) {
      reply(explainNodeError(probe), undefined);
      return;
    }
    let parsed: Probe | null = null;
    try {
      parsed = probe === null ? null : parseProbe(probe);
    } catch (err) {
      reply(err as Error, undefined);
      return;
    }
    if (parsed !== null) recordProbe(node, plan.probes, parsed);
    reply(null, judgeGrant(node, plan, batch[grantAt], parsed, withTime ? batch[0] : null));
  };
  // TIME first (inside Lua on a proxy-safe node: still one command before the grant, node.ts timeRead).
  node.callBatch(withTime ? [timeRead(node, plan.probes), grant] : [grant], (err, value) => {
    const replies = value as BatchReplies;
    const granted = err ? null : replies[grantAt];
    if (plan.scriptCall && grant === plan.grant && granted instanceof Error && isNoScript(granted)) {
      retried = true;
      replayed(plan, node);
      sendAlone(node, plan, plan.scriptCall.evalPayload(), reply);
      return;
    }
    batch = err ?? replies;
    settle();
  });
  // Sent after the grant on the same connection (commands go out in the order they are issued).
  if (probe === undefined) {
    // A node met for the first time (or after NOSCRIPT) has never run our probe: send its source.
    node.runCheck(plan.probes, true).then(
      (checked) => {
        probe = checked.reply;
        // The first reading of this connection's clock check (clock-check.ts): its baseline. A jump
        // against an earlier reading (a grant sent again after NOSCRIPT) counts the node out now,
        // and starts its clock-jump quarantine here, as GrantGroup.force does on the fast path: the
        // check takes the jumped reading for its baseline when it reports a jump, so a later check
        // would see nothing. Safety: a clock that ran ahead may have expired a holder's key early
        // on this node; quarantined, the node gives no vote for a maxTtl, longer
        // than any lease granted before the jump, so no such key's absence elects a second holder.
        // The quarantine only takes votes away, so fence order is the mutex's (its end reseeds the
        // register, reseed.ts). The vote waits for the check that starts it, as force()'s does.
        const t = Array.isArray(checked.reply) && checked.reply.length === 13 ? timeReplyMs(checked.reply[9], checked.reply[10]) : null;
        if (plan.probes.detect === '2' && clockCountsOut(node, t, checked.sentAt, checked.readAt, plan.probes)) {
          node.checks.runId = null;
          node.quarantine.wantTime = true;
          const jumped = new Error("the node's clock jumped beyond the drift allowance");
          void node
            .runCheck(plan.probes, false, plan.probes.checkForced('clock-jump'))
            .then((forced) => {
              // A reply of another shape throws: the quarantine is not known to be there.
              const recorded = parseProbe(forced.reply);
              clockJumpRecorded(node, { nodeMs: recorded.timeMs, sentAt: forced.sentAt, readAt: forced.readAt }, plan.probes);
            })
            .catch(() => undefined)
            .then(() => {
              probe = jumped;
              settle();
            });
          return;
        }
        settle();
      },
      (err: Error) => {
        probe = err;
        settle();
      },
    );
  }
}
