import 'server-only';

/**
 * Which nodes the live events poll instead of hearing their keyspace notifications (not on, not
 * ours to turn on, or SUBSCRIBE refused), and why: set when the sources start (index.ts), read by
 * whatever must say how complete its events are (grants-seen.ts, for the activity chart).
 */
export type PolledNodes = { nodes: number[]; reasons: Record<number, string> };
let polled: PolledNodes = { nodes: [], reasons: {} };

export function setPolledNodes(nodes: number[], reasons: Record<number, string>): void {
  polled = { nodes: [...nodes].sort((a, b) => a - b), reasons: { ...reasons } };
}

export function polledNodes(): PolledNodes {
  return polled;
}
