import { QuorumUnavailableError } from './errors';
import type { Vote } from './votes';

/** What markNodesClean() did on each node (resolved when at least a quorum was marked). */
export interface MarkCleanResult {
  /** Nodes marked clean (votes `for`). */
  readonly marked: number;
  /** Every node was marked. */
  readonly complete: boolean;
  /** One vote per node, in node order: `for` (marked) or `against` with the node's own reason in `detail`. */
  readonly votes: readonly Vote[];
}

/** A node's mark-clean ran out of time (a `timeout` vote, not an `error`). */
export class MarkCleanTimeout extends Error {
  override readonly name = 'MarkCleanTimeout' as const;
}

/**
 * markNodesClean()'s answer from its votes: the result when at least `quorum` nodes were marked,
 * otherwise QuorumUnavailableError naming each node that was not and why (its message and votes).
 */
export function markCleanOutcome(votes: readonly Vote[], quorum: number): MarkCleanResult {
  let marked = 0;
  for (const v of votes) if (v.vote === 'for') marked++;
  if (marked >= quorum) return { marked, complete: marked === votes.length, votes };
  const refused = votes
    .filter((v) => v.vote === 'against')
    .map((v) => `node ${v.node} (${v.label}): ${v.detail ?? v.reason}`)
    .join('; ');
  throw new QuorumUnavailableError(
    `markNodesClean: ${marked} of ${votes.length} nodes marked clean, a quorum is ${quorum}; not marked: ${refused}`,
    votes,
  );
}
