import 'server-only';
import type { LiveEvent } from '../../api/events';
import { logger } from '../logger';
import { getRuntime } from '../runtime';
import { setPolledNodes } from './polled-nodes';
import { EventHub } from './hub';
import { startKeyspaceSource } from './keyspace-source';
import { startLockPollingSource } from './polling-source';
import { startNodeSource } from './node-source';

const KEY = Symbol.for('redlock-console.events');
type Holder = { [KEY]?: EventHub };

/** The server's one event hub (kept across dev reloads). Services publish on it directly. */
export function getEventHub(): EventHub {
  const holder = globalThis as Holder;
  holder[KEY] ??= new EventHub((emit, ready) => startSources(emit, ready));
  return holder[KEY];
}

export function publishEvent(event: Omit<LiveEvent, 'at'> & { at?: number }): void {
  getEventHub().publish({ at: Date.now(), ...event });
}

/** A force-release of `resource` starts deleting: call the result when its deletes are done (EventHub.forceReleaseStarted). */
export function forceReleaseStarted(resource: string): () => void {
  return getEventHub().forceReleaseStarted(resource);
}

function startSources(emit: (event: LiveEvent) => void, ready: () => void): () => void {
  const runtime = getRuntime();
  setPolledNodes([], {});
  const stops: Array<() => void> = [startNodeSource(emit)];
  stops.push(
    startKeyspaceSource({
      onReady: ready,
      clients: runtime.clients,
      keyPrefix: runtime.keyPrefix,
      manageConfig: runtime.mode === 'sandbox',
      emit,
      onUnsupported(nodes, reasons) {
        logger().warn({ nodes, reasons }, 'keyspace notifications unavailable on these nodes; polling them for lock changes');
        setPolledNodes(nodes, reasons);
        stops.push(startLockPollingSource(nodes, emit));
      },
    }),
  );
  return () => stops.forEach((stop) => stop());
}
