import type { NodesResponse, NodeView } from '@/lib/api/nodes';

/**
 * When a node's quarantine ends, on the browser's clock: the one source of every quarantine
 * countdown (node cards, the Nodes table, the Overview's reasons and its "grantable in"), so two
 * countdowns of one screen never disagree. From the node's own reading: `checkedAt` (the console's
 * clock when it read the node, corrected by `skew`) plus the remaining time it read then. Counting
 * a reading's `remainingMs` from another timestamp (the answer's `readAt`, later than a cached
 * check) is what made a banner say 45.9 s beside a card's 42.4 s.
 */
export function quarantineEndsAt(node: NodeView, skew: number): number | null {
  const q = node.quarantine;
  if (q?.state !== 'quarantined' || q.remainingMs === null) return null;
  return node.checkedAt + skew + q.remainingMs;
}

/**
 * When locks become grantable if only quarantines stand in the way (the server's
 * `verdict.grantableInMs` says so), from the same per-node ends: the end of the quarantine that
 * brings the usable count to the quorum. Null when something else stands in the way.
 */
export function grantableAt(data: NodesResponse, skew: number): number | null {
  const { verdict } = data;
  if (verdict.canGrant || verdict.grantableInMs === null) return null;
  const ends = data.nodes
    .filter((n) => !n.usable)
    .map((n) => quarantineEndsAt(n, skew))
    .filter((t): t is number => t !== null)
    .sort((a, b) => a - b);
  const missing = verdict.quorum - verdict.usable;
  return ends[missing - 1] ?? data.readAt + skew + verdict.grantableInMs;
}
