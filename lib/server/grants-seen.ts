import 'server-only';
import type { GrantCounting } from '../api/history';
import type { LiveEvent } from '../api/events';
import { getEventHub } from './events';
import { polledNodes } from './events/polled-nodes';
import { setCountingGrants, recordSample } from './history';

/**
 * Grants seen on the masters, by any client, for the Overview's activity chart (it said
 * "No acquires in this window" while 24 locks were held by applications, because it counted only
 * the console's own acquires).
 *
 * The source is the event hub's `lock.granted` (lib/server/events): the masters' keyspace
 * notifications, one event per lock taken whatever the number of nodes (a `set` of a lock key is a
 * grant: keyspace-source.ts), and for a node without notifications (external, not ours to CONFIG
 * SET, or a SUBSCRIBE refused) a scan each second that reports keys it had not seen (a lock held
 * for less than that is missed there, and the chart says which nodes are counted that way).
 * Keyspace events were chosen over first sightings by the console's own scans: scans run every
 * few seconds and miss every lock shorter than that, which is most of them in a busy cluster.
 *
 * The counter holds one hub subscription for the life of the process, so the hub's sources (the
 * masters' subscriptions, the node poll) run while nobody looks: the charts count what happened
 * while the console was closed, as the sampler does for RTTs and lock counts.
 *
 * Setting notifications on masters the console manages is safe for the lock core: its checks
 * (probe.lua) look for commands that replace data (DEBUG, SWAPDB, RESTORE, FLUSHALL, REPLICAOF…),
 * evictions and restarts; CONFIG SET is none of them (test/integration/grants-seen.test.ts).
 */
let counter: { stop: () => void } | undefined;

/** A grant of one resource reported by both ways (a node polled, another notifying) within this window is one grant. */
export const CROSS_SOURCE_MS = 1_500;

export function startGrantCounter(): () => void {
  if (counter) return counter.stop;
  const last = new Map<string, { at: number; source: LiveEvent['source'] }>();
  let sweepAt = Date.now();
  const unsubscribe = getEventHub().subscribe((event) => {
    if (event.type !== 'lock.granted' || event.resource === undefined) return;
    const before = last.get(event.resource);
    last.set(event.resource, { at: event.at, source: event.source });
    if (event.at - sweepAt > 10_000) {
      sweepAt = event.at;
      for (const [resource, seen] of last) if (event.at - seen.at > CROSS_SOURCE_MS) last.delete(resource);
    }
    if (before && before.source !== event.source && event.at - before.at < CROSS_SOURCE_MS) return;
    recordSample({ kind: 'grant' }, event.at);
  });
  setCountingGrants(true);
  const stop = () => {
    unsubscribe();
    setCountingGrants(false);
    counter = undefined;
  };
  counter = { stop };
  return stop;
}

/** How grants are counted right now, for GET /api/history. */
export function grantCounting(): GrantCounting {
  const counting = counter !== undefined;
  const polled = polledNodes();
  const nodes = polled.nodes;
  const note =
    nodes.length === 0
      ? null
      : `node${nodes.length === 1 ? '' : 's'} ${nodes.join(', ')} publish${nodes.length === 1 ? 'es' : ''} no keyspace notifications (${polled.reasons[nodes[0]!] ?? 'off'}): locks there are counted when a scan each second first sees them, so a lock held for less is missed`;
  return { counting, polledNodes: nodes, note };
}
