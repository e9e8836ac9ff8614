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
