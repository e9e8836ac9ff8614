import type { Redlock } from '@redlock-console/redlock';
import type { LockNode } from '../../src/node';

/** A Redlock's connection to its `index`th node (from 0), for tests that watch or steer its batches. */
export function nodeOf(r: Redlock, index: number): LockNode {
  return (r as unknown as { nodes: LockNode[] }).nodes[index]!;
}
