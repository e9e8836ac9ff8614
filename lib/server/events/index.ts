import 'server-only';
import type { LiveEvent } from '../../api/events';
import { logger } from '../logger';
import { getRuntime } from '../runtime';
import { setPolledNodes } from './polled-nodes';
import { EventHub } from './hub';
import { startKeyspaceSource } from './keyspace-source';
import { startLockPollingSource } from './polling-source';
import { startNodeSource } from './node-source';
import { broadcastEvent, startReplicaSource } from './replica-bus';

let hub: EventHub | undefined;

/** The server's one event hub. Services publish on it directly. */
export function getEventHub(): EventHub {
  hub ??= new EventHub((emit, ready) => startSources(emit, ready));
  return hub;
}

/** One of this console's own events: to its streams, and to the other consoles' (replica-bus.ts). */
export function publishEvent(event: Omit<LiveEvent, 'at'> & { at?: number }): void {
  const full: LiveEvent = { at: Date.now(), ...event };
  getEventHub().publish(full);
  broadcastEvent(full);
}

/** A force-release of `resource` starts deleting: call the result when its deletes are done (EventHub.forceReleaseStarted). */
export function forceReleaseStarted(resource: string): () => void {
  return getEventHub().forceReleaseStarted(resource);
}

function startSources(emit: (event: LiveEvent) => void, ready: () => void): () => void {
  const runtime = getRuntime();
  setPolledNodes([], {});
  // Ready when both subscriptions are in place: the masters' notifications and the other consoles' events.
  let waiting = 2;
  const oneReady = () => {
    if (--waiting === 0) ready();
  };
  const stops: Array<() => void> = [startNodeSource(emit), startReplicaSource(runtime.clients, emit, oneReady)];
  let polled: { nodes: number[]; reasons: Record<number, string> } = { nodes: [], reasons: {} };
  let stopPolling: () => void = () => undefined;
  stops.push(
    startKeyspaceSource({
      onReady: oneReady,
      clients: runtime.clients,
      keyPrefix: runtime.keyPrefix,
      manageConfig: runtime.mode === 'sandbox',
      emit,
      onUnsupported(nodes, reasons) {
        logger().warn({ nodes, reasons }, 'keyspace notifications unavailable on these nodes; polling them for lock changes');
        polled = { nodes, reasons };
        setPolledNodes(nodes, reasons);
        stopPolling = startLockPollingSource(nodes, emit);
      },
      // A node that did not answer in time at first and is subscribed now: polled no longer.
      onSubscribed(node) {
        const nodes = polled.nodes.filter((n) => n !== node);
        const reasons = { ...polled.reasons };
        delete reasons[node];
        logger().info({ node }, 'keyspace notifications subscribed after a retry; no longer polling this node');
        polled = { nodes, reasons };
        setPolledNodes(nodes, reasons);
        stopPolling();
        stopPolling = nodes.length ? startLockPollingSource(nodes, emit) : () => undefined;
      },
    }),
  );
  return () => {
    stops.forEach((stop) => stop());
    stopPolling();
  };
}
