import { QuorumUnavailableError } from './errors';
import type { LockNode } from './node';
import type { Vote } from './votes';

/** What an operation on a Redlock after quit() rejects with: no node was asked. */
export function closedError(nodes: readonly LockNode[], resources: readonly string[]): QuorumUnavailableError {
  const votes: Vote[] = nodes.map((n) => ({
    node: n.number,
    label: n.label,
    vote: 'against',
    reason: 'not-asked',
    detail: 'quit() was called',
  }));
  return new QuorumUnavailableError('this Redlock was closed with quit()', votes, resources);
}
