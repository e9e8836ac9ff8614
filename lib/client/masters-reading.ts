import type { NodeView } from '../api/nodes';
import { isStale, staleAfterMs } from './freshness';

/**
 * What the console can say about the masters right now, from its last reading of them (GET
 * /api/nodes) and whether the console answers at all: the one judgement behind the live dot and
 * the Overview's headline, so "could not read" never passes for "fine".
 * - `offline`: the console itself does not answer (the connection banner says since when);
 * - `stale`: the last reading of the masters is older than the stale age (freshness.ts);
 * - `unread`: the last reading came back, but no master answered it;
 * - `partial`: some masters answered, some did not;
 * - `read`: every master answered;
 * - `pending`: nothing read yet.
 */
export type MastersReadingState = 'pending' | 'read' | 'partial' | 'unread' | 'stale' | 'offline';

export interface MastersReading {
  state: MastersReadingState;
  /** Masters that answered the last reading, and how many there are (null before the first). */
  answered: number | null;
  total: number | null;
  /** When the last reading arrived (local ms), null before the first. */
  receivedAt: number | null;
  /** Why it is not `read`, in words (null when it is). */
  reason: string | null;
}

export function mastersReading(input: {
  nodes: readonly Pick<NodeView, 'id' | 'up'>[] | undefined;
  /** When the nodes reading arrived (the query's dataUpdatedAt; 0: never). */
  receivedAt: number;
  /** The console gets no answer (connection-health.ts). */
  failing: boolean;
  now: number;
}): MastersReading {
  const { nodes, failing, now } = input;
  const receivedAt = nodes && input.receivedAt > 0 ? input.receivedAt : null;
  const total = nodes ? nodes.length : null;
  const answered = nodes ? nodes.filter((n) => n.up).length : null;
  const base = { answered, total, receivedAt };
  if (failing) return { ...base, state: 'offline', reason: 'the console is not answering' };
  if (!nodes) return { ...base, state: 'pending', reason: 'reading the masters…' };
  if (isStale(receivedAt, now))
    return { ...base, state: 'stale', reason: `the masters have not been read for over ${Math.round(staleAfterMs() / 1000)} s` };
  const unread = nodes.filter((n) => !n.up).map((n) => n.id);
  if (unread.length === nodes.length) return { ...base, state: 'unread', reason: `${nodeList(unread)} could not be read` };
  if (unread.length > 0) return { ...base, state: 'partial', reason: `${nodeList(unread)} could not be read` };
  return { ...base, state: 'read', reason: null };
}

/** "Node 3", "Nodes 1–5", "Nodes 1, 3 and 4". */
export function nodeList(ids: readonly number[]): string {
  if (ids.length === 1) return `Node ${ids[0]}`;
  const sorted = [...ids].sort((a, b) => a - b);
  const run = sorted.every((id, i) => i === 0 || id === sorted[i - 1]! + 1);
  if (run) return `Nodes ${sorted[0]}–${sorted.at(-1)}`;
  return `Nodes ${sorted.slice(0, -1).join(', ')} and ${sorted.at(-1)}`;
}

/**
 * Can a headline about the cluster ("locks can be granted") be trusted? Not when the console does
 * not answer, its reading of the masters is stale, or no master answered it and the supervisor does
 * not know any of them to be down (then "cannot be granted" is a reading, not a guess).
 */
export function headlineUnknown(reading: MastersReading, nodes: readonly Pick<NodeView, 'process'>[]): boolean {
  if (reading.state === 'offline' || reading.state === 'stale') return true;
  if (reading.state !== 'unread') return false;
  return !nodes.some((n) => n.process === 'down' || n.process === 'stopping');
}
