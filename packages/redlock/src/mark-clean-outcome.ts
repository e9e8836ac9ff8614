import { InvalidArgumentError, QuorumUnavailableError } from './errors';
import { describe } from './settings';
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

/** Options of markNodesClean(). */
export interface MarkCleanOptions {
  /** How long to wait for each node, its connection included (ms, 1–60,000; default max(nodeTimeoutMs, 5,000)). */
  readonly timeoutMs?: number;
}

/** The wait per node of a markNodesClean() call: the option, checked, or the default. */
export function markCleanTimeout(options: MarkCleanOptions, nodeTimeoutMs: number): number {
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError('options', `must be an object, got ${describe(options)}`);
  const { timeoutMs } = options;
  if (timeoutMs === undefined) return Math.max(nodeTimeoutMs, 5_000);
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000)
    throw new InvalidArgumentError('timeoutMs', `must be a whole number of milliseconds from 1 to 60000, got ${describe(timeoutMs)}`);
  return timeoutMs;
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
