/**
 * The first round of an acquire on one node: the grant, the quarantine check and the fence
 * register read, sent back to back as one batch on the node's connection.
 *
 * - One resource: `SET <lock> '<token> <metadata>' NX GET PX <ttl>` grants the lock exactly when
 *   no key was there (atomically, like a script's GET-then-SET) and otherwise answers the holder's
 *   value (its token and metadata, see value.ts). No Lua: a script call costs Redis ~2 µs more
 *   than this one command, and the grant is the hot path.
 * - Several resources: scripts/acquire.lua grants them all or none.
 * - Then, read after the grant: `HMGET <epoch> createdAt quarantineUntil` and, for fenced locks,
 *   `GET <fence>`. While the node may be quarantined, `TIME` goes first, before the grant, so that
 *   "the quarantine was over" is a statement about the moment our SET ran (see commandsFor).
 *
 * Why reading the epoch and the register after the grant, outside any script, keeps the
 * guarantees (see protocol.ts for the rest):
 * - Quarantine. A node votes for only if the sentinel read after our SET is there and its
 *   quarantine is over. A node that lost its data before our SET has no sentinel at that read (only
 *   scripts/quarantine.lua writes one after a loss, and it writes a quarantine), so it cannot vote
 *   for; a loss after the read is the case the quarantine exists for, found by the next acquire —
 *   exactly as with the atomic script, whose atomicity never covered a loss after it ran either.
 *   Our key may stay on a node that voted against (quarantined): that only makes others' SET NX
 *   fail there (liveness), and our release or its ttl removes it.
 * - Fences. The argument in protocol.ts (confirmFence) needs the register read on a node after our
 *   SET there: the GET runs after the SET on the same connection, and registers only grow.
 * The metadata travels inside the lock key's value, so a SET that loses writes nothing at all.
 *
 * The grants of one batch on a node share these reads (grant-group.ts argues why that keeps the
 * above). A grant sent while the node is still connecting for the first time, or again after a
 * NOSCRIPT, goes as a batch of its own: [TIME], grant, [epoch], [fence].
 */
import { GrantGroup } from './grant-group';
import type { GrantPlan, NodeProbes } from './grant-plan';
import { epochVerdict, grantReply } from './grant-verdict';
import type { BatchReplies, LockNode, Reply } from './node';

/** Send the plan to one node; `reply` gets its GrantReply, or the error the node failed with. */
export function sendGrant(node: LockNode, plan: GrantPlan, reply: Reply): void {
  if (node.connecting) {
    sendAlone(node, plan, plan.grant, reply);
    return;
  }
  GrantGroup.of(node, plan.probes).add(plan, plan.scriptCall === null ? reply : (err, value) => {
    if (err && isNoScript(err)) {
      // The node lost its script cache: the grant again with the script's source, with reads of
      // its own. The commands we sent after it (a cleanup release) fall back the same way, in
      // reply order, so they still run after it.
      sendAlone(node, plan, plan.scriptCall!.evalPayload(), reply);
      return;
    }
    reply(err, value);
  });
}

function isNoScript(err: Error): boolean {
  return err.message.startsWith('NOSCRIPT');
}

/** One grant as a batch of its own: [TIME], grant, [epoch], [fence], in this order. */
function sendAlone(node: LockNode, plan: GrantPlan, grant: Buffer, reply: Reply): void {
  // Ask for the node's TIME only while it may be quarantined (decided once per send).
  const withTime = plan.quarantine && node.quarantine.wantTime;
  node.callBatch(commandsFor(plan, grant, withTime), (err, value) => {
    const replies = value as BatchReplies;
    const granted = err ? null : replies[withTime ? 1 : 0];
    if (plan.scriptCall && grant === plan.grant && granted instanceof Error && isNoScript(granted)) {
      sendAlone(node, plan, plan.scriptCall.evalPayload(), reply);
      return;
    }
    if (err) {
      reply(err, undefined);
      return;
    }
    for (const one of replies) {
      if (one instanceof Error) {
        reply(one, undefined);
        return;
      }
    }
    const time = withTime ? replies[0] : null;
    const grantAt = withTime ? 1 : 0;
    const verdict = plan.quarantine ? epochVerdict(node, replies[grantAt + 1], time) : null;
    reply(null, grantReply(plan, replies[grantAt], verdict, plan.fenced ? replies[grantAt + (plan.quarantine ? 2 : 1)] : null));
  });
}

/**
 * [TIME], grant, [epoch], [fence]. TIME comes FIRST: a quarantine is judged over only when the
 * node's clock had passed quarantineUntil before our SET ran (TIME read after the SET could pass
 * the end of the quarantine while the SET itself ran inside it, if other clients' commands ran in
 * between). The epoch and the register are read AFTER the SET (see the header).
 */
function commandsFor(plan: GrantPlan, grant: Buffer, withTime: boolean): Buffer[] {
  const commands = withTime ? [plan.probes.time, grant] : [grant];
  if (plan.quarantine) commands.push(plan.probes.epoch);
  if (plan.fenced) commands.push(plan.probes.fence);
  return commands;
}

/**
 * The node has no sentinel: start its quarantine with scripts/quarantine.lua (or read the one
 * another client started). One call per node at a time; resolves with [quarantineUntil, discovered].
 */
export function startQuarantine(node: LockNode, probes: NodeProbes): Promise<[number, boolean]> {
  const q = node.quarantine;
  q.starting ??= node.run(probes.quarantine).then((reply) => {
    const [until, discovered] = reply as [number, number];
    return [Number(until), discovered === 1] as [number, boolean];
  }).finally(() => {
    q.starting = null;
  });
  return q.starting;
}
