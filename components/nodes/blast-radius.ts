import type { LockView } from '@/lib/api/locks';

export interface BlastLock {
  resource: string;
  /** Reachable nodes holding the majority token now, and after the action. */
  before: number;
  after: number;
  /** The nodes that hold it now (reachable ones). */
  holders: number[];
  validityMs: number | null;
  fence: number | null;
}

export interface BlastRadius {
  target: number;
  quorum: number;
  /** Locks that have a majority on reachable nodes now and would not once `target` stops answering. */
  losing: BlastLock[];
  /** Locks `target` holds that keep a majority without it. */
  surviving: number;
  /** Locks `target` holds whose reachable holders are already below quorum (they lost their majority before this action). */
  alreadyBelow: number;
  /** Locks with a majority token that were looked at. */
  checked: number;
}

/**
 * Which locks would lose their majority if node `target` stopped answering: for each lock with a
 * majority token, count the nodes that still hold that token, leaving out `target` and every node
 * that already cannot answer (`unavailable`: down, partitioned, paused). Below `quorum` is a loss.
 * A lock whose holders were already below quorum without the action is counted apart: the action
 * does not cost it anything it still had.
 */
export function blastRadius(locks: readonly LockView[], target: number, unavailable: ReadonlySet<number>, quorum: number): BlastRadius {
  const losing: BlastLock[] = [];
  let surviving = 0;
  let alreadyBelow = 0;
  let checked = 0;
  for (const lock of locks) {
    const token = lock.majorityToken;
    if (token === null) continue;
    checked++;
    const holders: number[] = [];
    for (const cell of lock.cells) {
      if (cell.known && cell.present && cell.token === token && !unavailable.has(cell.node)) holders.push(cell.node);
    }
    if (!holders.includes(target)) continue;
    const before = holders.length;
    const after = before - 1;
    if (before < quorum) alreadyBelow++;
    else if (after < quorum)
      losing.push({ resource: lock.resource, before, after, holders, validityMs: lock.validityMs, fence: lock.fence });
    else surviving++;
  }
  losing.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  return { target, quorum, losing, surviving, alreadyBelow, checked };
}

/** How many locks each node is the deciding vote for (the count `blastRadius(…).losing.length` per node). */
export function criticalCounts(
  locks: readonly LockView[],
  nodeIds: readonly number[],
  unavailable: ReadonlySet<number>,
  quorum: number,
): Map<number, { holds: number; critical: number }> {
  const counts = new Map(nodeIds.map((id) => [id, { holds: 0, critical: 0 }]));
  for (const lock of locks) {
    const token = lock.majorityToken;
    if (token === null) continue;
    const holders: number[] = [];
    for (const cell of lock.cells) {
      if (cell.known && cell.present && cell.token === token && !unavailable.has(cell.node)) holders.push(cell.node);
    }
    for (const id of holders) {
      const c = counts.get(id);
      if (!c) continue;
      c.holds++;
      if (holders.length === quorum) c.critical++;
    }
  }
  return counts;
}
