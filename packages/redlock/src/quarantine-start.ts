/**
 * Starting the quarantine of a node found without a sentinel, when the grant's own check could
 * not (see grant-plan.ts ClusterView: a client starts one only with a confirmed lease ceiling).
 */
import type { QuarantineCause } from './epoch';
import type { NodeProbes } from './grant-plan';
import { explainNodeError, parseProbe, recordProbe } from './grant-verdict';
import type { LockNode } from './node';
import type { ProtocolContext } from './protocol';
import { encodeCommand } from './resp';

/**
 * A node answered without a sentinel, and its check could not start the quarantine: no node had
 * confirmed this client's ceiling when the check was sent (grant-plan.ts ClusterView). Once the
 * round is over: start it if a node confirmed it by now. Otherwise ask every node for the ceiling
 * it records (a rare extra read, only on a data loss): another ceiling anywhere → start nothing (a
 * client with the cluster's ceiling will); ours somewhere → start it; no sentinel on a quorum and no
 * ceiling recorded on any node that answered → nothing to confirm against: start it with ours.
 * One at a time per node; this check judges no grant, so it may be shared.
 */
export function startQuarantine(ctx: ProtocolContext, node: LockNode, probes: NodeProbes): void {
  const cluster = probes.cluster;
  if (node.checks.starting || cluster.ceilingConflict) return;
  node.checks.starting = true;
  (cluster.ceilingAgreed ? Promise.resolve(true) : ceilingConfirmed(ctx, probes))
    .then(async (confirmed) => {
      if (!confirmed) return;
      const probe = parseProbe(await node.run(probes.checkStarting));
      recordProbe(node, probes, probe);
      if (probe.check?.started && probe.check.cause)
        node.quarantine.cause = { until: Number(probe.until), cause: probe.check.cause as QuarantineCause };
      if (probe.check?.started) ctx.onQuarantine(node, Number(probe.until), true, (probe.check.cause || null) as QuarantineCause | null);
    })
    .catch((err: unknown) => ctx.onNodeError(node, explainNodeError(err instanceof Error ? err : new Error(String(err)))))
    .finally(() => {
      node.checks.starting = false;
    });
}

/** Read the ceiling every node records (up to nodeTimeoutMs): may a quarantine use this client's? */
async function ceilingConfirmed(ctx: ProtocolContext, probes: NodeProbes): Promise<boolean> {
  const read = encodeCommand(['HMGET', probes.epochKey, 'createdAt', 'maxTtlMs']);
  const replies = await Promise.all(
    ctx.nodes.map((n) =>
      Promise.race([
        n.runBatch([read]).then(
          (r) => r[0],
          () => null,
        ),
        new Promise((resolve) => setTimeout(resolve, ctx.settings.nodeTimeoutMs, null).unref()),
      ]),
    ),
  );
  let without = 0;
  for (const reply of replies) {
    if (!Array.isArray(reply)) continue;
    const [createdAt, maxTtl] = reply as [string | null, string | null];
    if (createdAt === null) without++;
    else if (Number(maxTtl) !== probes.maxTtlMs) {
      probes.cluster.ceilingConflict = true;
      return false;
    } else {
      probes.cluster.ceilingAgreed = true;
    }
  }
  return probes.cluster.ceilingAgreed || without >= ctx.quorum;
}
