/**
 * The release round: compare-and-delete of our token on every node (scripts/release.lua), which
 * answers the caller as soon as a quorum of nodes no longer holds our key, and settles the full
 * per-node result once every node has answered or the node timeout has passed.
 *
 * Why answering at a quorum is enough (and what it does not claim):
 * - A lock is held while a quorum holds its token. Once ⌊N/2⌋+1 nodes answered "deleted" or
 *   "not held", at most N − quorum < quorum nodes can still hold it: no quorum holds it again (a
 *   token is only ever SET once, at its grant), so the lock is over and any client may take it.
 *   Nothing the caller could do after release() returns depends on the slower nodes: the caller
 *   stopped using the resource before it called release(), and our remaining DELs can only remove
 *   our own key (compare-and-delete), never a newer holder's.
 * - Commands on one connection run in order: an acquire of the same resource by this client after
 *   release() returns reaches each slow node after our delete there. One exception: a node that
 *   lost its script cache answers the delete (EVALSHA) with NOSCRIPT, and the delete is sent again
 *   with the script's source only then, so a SET sent meanwhile runs before it and meets our old
 *   key. Another client may likewise find our key on a slow node until the delete lands. Either
 *   way that node votes against (`contended`), which costs liveness on a minority, never safety:
 *   the key holds our token, which no one holds any more, and the delete still removes it.
 * - quit() waits for the releases still settling (bounded by nodeTimeoutMs), so closing the
 *   connections does not cut off a delete on its way to a slow node.
 * - Fences are untouched: a release writes no register.
 * - The early answer says so: the nodes still unanswered vote `pending`, and `complete` is false;
 *   `settled` resolves with the final votes (timeouts included) for callers that report them.
 *   Errors never count toward the quorum: with failing nodes the answer waits for the others.
 * node-redlock answers its release at a quorum too; ours used to wait for every node, which cost
 * about a tenth of an acquire + release at concurrency 1 (`npm run bench -- --only latency`).
 */
import type { ReleaseResult } from './lock';
import type { ProtocolContext } from './protocol';
import { ReleaseCall } from './release-group';
import { Round } from './round';
import type { Vote } from './votes';

export async function releaseKeys(
  ctx: ProtocolContext,
  resources: readonly string[],
  lockKeys: readonly string[],
  token: string,
): Promise<ReleaseResult> {
  const { nodes, quorum, settings } = ctx;
  const t0 = performance.now();
  const call = new ReleaseCall(lockKeys, token, ctx.channel, resources);
  let gone = 0;
  let quorumGone!: () => void;
  const early = new Promise<void>((resolve) => (quorumGone = resolve));
  const onReply = (round: Round, i: number, reply: unknown): void => {
    const deleted = Number(reply);
    if (deleted > 0) round.accept(i, deleted);
    else round.reject(i, 'not-held');
    if (++gone === quorum) quorumGone();
  };
  // waitAll: the round itself runs until every node answered or the deadline, for `settled`.
  const round = new Round(nodes, nodes.length, true, settings.nodeTimeoutMs, onReply, ctx.onNodeError);
  for (let i = 0; i < nodes.length; i++) nodes[i]!.callRelease(call, round.reply(i));
  const settled = round.done.then(() => finalResult(round, resources, token, t0));
  await Promise.race([round.done, early]);
  if (round.decided) return settled;
  const votes: Vote[] = round.votes.slice();
  for (let i = 0; i < nodes.length; i++) {
    votes[i] ??= { node: nodes[i]!.number, label: nodes[i]!.label, vote: 'against', reason: 'pending' };
  }
  return withSettled(
    { resources, token, votes: Object.freeze(votes), deleted: round.forCount, complete: false, durationMs: performance.now() - t0 },
    settled,
  );
}

/**
 * `settled` as a non-enumerable property: a result still serialises as plain data (JSON, a
 * worker's structured clone) without a Promise inside.
 */
function withSettled(result: Omit<ReleaseResult, 'settled'>, settled: Promise<ReleaseResult> | null): ReleaseResult {
  const out = result as ReleaseResult;
  Object.defineProperty(out, 'settled', { value: settled ?? Promise.resolve(out), enumerable: false });
  return out;
}

function finalResult(round: Round, resources: readonly string[], token: string, t0: number): ReleaseResult {
  let complete = true;
  for (const v of round.votes) if (v.reason !== 'ok' && v.reason !== 'not-held') complete = false;
  return withSettled({ resources, token, votes: round.votes, deleted: round.forCount, complete, durationMs: performance.now() - t0 }, null);
}
