/**
 * The reseed of a node's fence register after a quarantine for a cause that may have taken the
 * register back (data-loss, restart, replaced, rollback: scripts/probe.lua sets the sentinel's
 * `reseed`). Until a reseed applies, the node votes against, its quarantine over or not.
 *
 * The quarantine's own floor (now(ms) × 1000 on the node's clock) trusts that one node's clock: a
 * node an hour behind reseeds 3.6e9 below fences already issued, and the next grant counting it
 * could get an issued fence again. The reseed trusts no clock: once the quarantine is over, read the
 * registers of at least blockingSize(N) = N − quorum + 1 OTHER nodes, and raise the node's register
 * to their maximum (scripts/reseed.lua, a compare-and-set on the quarantine it was started for).
 *
 * Why that covers every fence issued before (fence-round.ts has the argument it completes). Let x
 * be the node and F a fence issued with confirmations on a quorum C. If x ∉ C, any later grant's
 * voters V (a quorum) meet C at a node other than x, whose register never went back: V's fence is
 * above F without x. If x ∈ C, C minus x has at least quorum − 1 nodes among the N − 1 others, and
 * the reseed read at least N − quorum + 1 of those others: the two sets meet (their sizes add up
 * to N, one more than the N − 1 others). The node they meet in holds a register ≥ F at the read
 * provided F's confirmation there ran before the read. It did: x lost F only after F's
 * confirmation ran on x, hence after F's grant began (t0); F's client counts a confirmation only
 * within F's validity, which ends before t0 + ttl ≤ t0 + maxTtl; the loss was found after it
 * happened and the quarantine ends maxTtl after that, on x's clock (the drift allowance covers the
 * rate between the clocks; the clock check refuses a node whose clock steps or drifts beyond it);
 * the reads run after the quarantine's end, so after every confirmation F counted. Hence after
 * the reseed x's register is ≥ F, and so is every later fence that counts x, +1.
 *
 * With one node (N = 1) there is no other node to read: the floor alone stands (README: assumptions).
 * Fewer answers than needed (nodes down): nothing is written, the node keeps voting against, and
 * the next grant that meets it tries again (at most one reseed at a time per node and client).
 */
import { blockingSize } from './quorum';
import type { LockNode } from './node';
import type { NodeProbes } from './grant-plan';
import { encodeCommand, ScriptCall } from './resp';
import { RESEED_SCRIPT } from './scripts';

export interface ReseedContext {
  readonly nodes: readonly LockNode[];
  readonly settings: { readonly nodeTimeoutMs: number };
  onNodeError(node: LockNode, err: Error): void;
}

/** The reseed under way for each node (by this process), shared by the grants that meet it. */
const underway = new WeakMap<LockNode, Promise<number>>();

/**
 * Reseed `node` for the quarantine whose sentinel was written at `createdAt` (node ms), once its
 * quarantine is over by the node's TIME read after the grants that wait for it (grant-group.ts).
 * Resolves with the node's register afterwards; rejects when too few other nodes answered or the
 * sentinel changed (another quarantine: the grants vote against, and a later one tries again).
 */
export function reseedNode(ctx: ReseedContext, node: LockNode, probes: NodeProbes, createdAt: number): Promise<number> {
  let running = underway.get(node);
  if (running === undefined) {
    running = reseed(ctx, node, probes, createdAt).finally(() => underway.delete(node));
    underway.set(node, running);
  }
  return running;
}

/** reseedNode without waiting: errors go to the node-error sink. */
export function startReseed(ctx: ReseedContext, node: LockNode, probes: NodeProbes, createdAt: number): void {
  reseedNode(ctx, node, probes, createdAt).catch((err: unknown) =>
    ctx.onNodeError(node, err instanceof Error ? err : new Error(String(err))),
  );
}

async function reseed(ctx: ReseedContext, node: LockNode, probes: NodeProbes, createdAt: number): Promise<number> {
  const others = ctx.nodes.filter((n) => n !== node);
  const needed = others.length === 0 ? 0 : blockingSize(ctx.nodes.length);
  const read = [encodeCommand(['HGET', probes.epochKey, 'fence']), encodeCommand(['GET', probes.legacyFenceKey])];
  const registers = await Promise.all(
    others.map((n) =>
      Promise.race([
        n.runBatch(read).then(
          (replies) =>
            replies.some((r) => r instanceof Error) ? null : Math.max(Number(replies[0] ?? 0) || 0, Number(replies[1] ?? 0) || 0),
          () => null,
        ),
        new Promise<null>((resolve) => setTimeout(resolve, ctx.settings.nodeTimeoutMs, null).unref()),
      ]),
    ),
  );
  const answered = registers.filter((r): r is number => r !== null);
  if (answered.length < needed) {
    throw new Error(
      `the fence register of ${node.label} owes a reseed after its quarantine: ${answered.length} of the ${needed} other nodes needed answered; it votes against until a later grant completes it`,
    );
  }
  const floor = answered.reduce((a, b) => Math.max(a, b), 0);
  const reply = (await node.run(
    new ScriptCall(RESEED_SCRIPT, 2, [probes.epochKey, probes.legacyFenceKey, String(createdAt), floor.toFixed(0)]),
  )) as unknown[];
  if (Number(reply[0]) !== 1) throw new Error(`the reseed of ${node.label} did not apply: its sentinel changed (${String(reply[1])})`);
  return Number(reply[1]);
}
