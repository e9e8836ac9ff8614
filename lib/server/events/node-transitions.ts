import { nodeNumber } from '../../node-number';
/** What one poll saw of a node. */
export interface NodeSighting {
  up: boolean;
  error?: string | null;
}

export interface NodeChange {
  /** 1-based. */
  node: number;
  up: boolean;
  detail?: string;
}

/** A health read that ran out of time: the node may be fine and this process busy (200 open streams). */
function ambiguous(sighting: NodeSighting): boolean {
  return /timed out/i.test(sighting.error ?? '');
}

/**
 * node.up / node.down from successive polls. A node that answers with an error (refused, closed,
 * LOADING…) is reported down at once; one whose read only timed out is reported down when the next
 * poll finds it down too: with hundreds of event streams open, a busy console process missed its
 * own 1 s health deadline and every stream saw 10–19 false down/up pairs. A
 * node down then up again before it was reported is never reported at all. (A console so busy
 * that two reads in a row time out still reports the node down: it cannot tell that from a
 * partition.)
 */
export class NodeTransitions {
  /** What was last reported (or first seen) per node; null before the first poll. */
  private reported: boolean[] | null = null;
  /** Nodes whose last poll timed out while reported up: down if the next poll agrees. */
  private suspect = new Set<number>();

  observe(nodes: readonly NodeSighting[]): NodeChange[] {
    if (!this.reported) {
      // A first read that only timed out says nothing: taken as up, so that it is not followed by a false node.up.
      this.reported = nodes.map((n) => n.up || ambiguous(n));
      return [];
    }
    const changes: NodeChange[] = [];
    nodes.forEach((sighting, i) => {
      const was = this.reported![i];
      if (sighting.up) {
        this.suspect.delete(i);
        if (was === false) changes.push({ node: nodeNumber(i), up: true });
      } else if (was !== false) {
        if (ambiguous(sighting) && !this.suspect.has(i)) {
          this.suspect.add(i);
          return;
        }
        this.suspect.delete(i);
        changes.push({ node: nodeNumber(i), up: false, detail: sighting.error ?? undefined });
      }
      this.reported![i] = sighting.up;
    });
    return changes;
  }
}
