/**
 * markNodesClean()'s work on each node (redlock.ts): run mark-clean.lua once the node's connection
 * is up, within `timeoutMs`, and turn what happened into the node's vote.
 *
 * Safety: a node is marked by mark-clean.lua alone (one atomic script that also raises the fence
 * register to the now × 1000 floor); a node that refused or did not answer keeps its sentinel state
 * (absent: it votes against, quarantined). How the outcome is reported cannot change mutual
 * exclusion or the fence order.
 */
import { checkMarkClean, markCleanCall } from './epoch';
import { explainNodeError } from './grant-verdict';
import { MarkCleanTimeout } from './mark-clean-outcome';
import type { LockNode } from './node';
import { probesOf } from './request';
import type { RedlockSettings } from './settings';
import type { Vote } from './votes';

/**
 * Redlock.markNodesClean(), in full:
 *
 * Write the clean epoch sentinel on every reachable node ("these hold no lost locks"), ending
 * any quarantine, and raise each fence register to the now × 1000 floor. Call it once on brand-new
 * masters (they have no sentinel and would otherwise sit out a data-loss quarantine of maxTtlMs).
 *
 * Resolves with each node's vote (`for`: marked; `against`: why not, e.g. NOPERM for an ACL user
 * without INFO or TIME) when at least a quorum was marked; `complete` is false when some node was
 * not (each also reported as 'node-error'). Rejects with QuorumUnavailableError, naming every node
 * that refused and why, when fewer than a quorum were marked: the cluster cannot grant then, and
 * resolving would let a caller take a refusal for an initialised cluster.
 * Safety: unchanged by how the outcome is reported. A node is marked by mark-clean.lua alone (one
 * atomic script that also raises the fence register to the now × 1000 floor), exactly as before;
 * a node that refused keeps its sentinel state (absent: it votes against, quarantined), so neither
 * mutual exclusion nor the fence order can depend on whether this promise resolves or rejects.
 * `timeoutMs` (default max(nodeTimeoutMs, 5 s)) bounds the wait for each node, its connection
 * included: a one-time administrative call, so the default favours an answer over a quick refusal
 * on a busy host; a node that answers later may still be marked (the statement is the caller's
 * either way, and the same whenever it applies).
 */

export function markNodeCleanVote(
  node: LockNode,
  settings: Readonly<RedlockSettings>,
  timeoutMs: number,
  onNodeError: (node: LockNode, error: Error) => void,
): Promise<Vote> {
  const { keyPrefix, maxTtlMs } = settings;
  let timer: NodeJS.Timeout | undefined;
  const marked = node
    .whenBooted()
    .then(() => {
      const run = node.run(markCleanCall({ keyPrefix, maxTtlMs, origin: 'clean' }));
      // A mark-clean is the statement that nothing before it matters: the rollback detector's
      // WATCH starts again after it (node.ts armAfterCheck).
      node.armAfterCheck(probesOf(settings), run);
      return run;
    })
    .then(checkMarkClean);
  const late = new Promise((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new MarkCleanTimeout(`no answer to mark clean within ${timeoutMs} ms; it may still reach the node and apply there later`)),
      timeoutMs,
    );
  });
  return Promise.race([marked, late]).then(
    (): Vote => {
      clearTimeout(timer);
      return { node: node.number, label: node.label, vote: 'for', reason: 'ok' };
    },
    (err: unknown): Vote => {
      clearTimeout(timer);
      const error = explainNodeError(err instanceof Error ? err : new Error(String(err)));
      onNodeError(node, error);
      const reason = err instanceof MarkCleanTimeout ? 'timeout' : 'error';
      return { node: node.number, label: node.label, vote: 'against', reason, detail: error.message };
    },
  );
}
