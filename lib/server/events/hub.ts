import 'server-only';
import { BURST_RESOURCES, STREAM_BURST_AT, type LiveEvent } from '../../api/events';

type Listener = (event: LiveEvent) => void;
type ByteListener = (bytes: Uint8Array) => void;

const encoder = new TextEncoder();

/** One live event as a server-sent event. */
export function encodeEvent(event: LiveEvent): Uint8Array {
  return encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/**
 * How long events are collected before they go to the streams as one chunk: each stream then costs
 * at most 1000 / STREAM_BATCH_MS writes a second, whatever the lock traffic (at 100 ms, 200 streams
 * still cost the lock service about a fifth of its throughput in a full bench run). One write per
 * event per stream was what 200 open streams cost the lock service (issue 18, finding 9: 372 → 61
 * pairs/s): two events per lock taken and released, times 200 sockets.
 */
export const STREAM_BATCH_MS = 250;
/** A window holding this many events goes out at once (bounds what a window holds). */
export const STREAM_BATCH_MAX_EVENTS = 1_000;

/**
 * Fan-out of live events to every open /api/events stream. Sources (keyspace notifications,
 * polling, services) are started by the first subscriber and stopped with the last, so an idle
 * console holds no extra connections.
 *
 * Streams get a window's events as one chunk, each event serialised at most once. A stream that
 * follows every change gets the lock events one by one up to STREAM_BURST_AT in a window, and past
 * that one `lock.burst` (counts by type, some resources) in their place: a console cannot show
 * thousands of changes a second one by one, and at that rate sending each to every open screen
 * was most of what the streams cost the lock service (200 streams × every event: ~60 MB/s at
 * 2,000 pairs/s). Node events always go one by one. A stream that follows one resource gets that
 * resource's lock events one by one whatever the rate, and the node events.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly byteListeners = new Set<ByteListener>();
  /** Streams that follow one resource, by resource. */
  private readonly resourceListeners = new Map<string, Set<ByteListener>>();
  /** Events waiting for the next batch (in publish order). */
  private window: LiveEvent[] = [];
  private batchTimer: ReturnType<typeof setTimeout> | null = null;
  private stopSources: (() => void) | null = null;
  /** Resolves once the running sources said their subscriptions are in place. */
  private sourcesReady: Promise<void> = Promise.resolve();

  /** `startSources` calls `ready` once its subscriptions are in place (events from then on are seen). */
  constructor(private readonly startSources: (emit: (event: LiveEvent) => void, ready: () => void) => () => void) {}

  /**
   * Resolves when the sources' subscriptions are in place, or after `timeoutMs` (a node that does
   * not answer must not hold every stream's `connected` back). A stream says `connected` after it.
   */
  ready(timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([this.sourcesReady, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]).finally(() =>
      clearTimeout(timer),
    );
  }

  get size(): number {
    let following = 0;
    for (const set of this.resourceListeners.values()) following += set.size;
    return this.listeners.size + this.byteListeners.size + following;
  }

  subscribe(listener: Listener): () => void {
    return this.add(this.listeners, listener);
  }

  /**
   * Events encoded as server-sent events, in batches (STREAM_BATCH_MS): every change (lock
   * changes past STREAM_BURST_AT a window summarised), or with `resource` the changes of that one
   * lock and of the nodes.
   */
  subscribeEncoded(listener: ByteListener, resource?: string): () => void {
    // Events published before it subscribed go to the streams that were there, never to it.
    this.flush();
    let set = this.byteListeners;
    if (resource !== undefined) {
      set = this.resourceListeners.get(resource) ?? new Set();
      this.resourceListeners.set(resource, set);
    }
    const remove = this.add(set, listener);
    return () => {
      remove();
      if (resource !== undefined && set.size === 0) this.resourceListeners.delete(resource);
      if (this.byteListeners.size === 0 && this.resourceListeners.size === 0) this.dropBatch();
    };
  }

  publish(event: LiveEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // one broken stream must not stop the others
      }
    }
    if (this.byteListeners.size === 0 && this.resourceListeners.size === 0) return;
    this.window.push(event);
    if (this.window.length >= STREAM_BATCH_MAX_EVENTS) this.flush();
    else this.batchTimer ??= setTimeout(this.flush, STREAM_BATCH_MS);
  }

  private dropBatch(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    this.window = [];
  }

  private readonly flush = (): void => {
    const events = this.window;
    this.dropBatch();
    if (events.length === 0) return;
    // Each event serialised at most once, whichever streams it goes to.
    const encoded = new Map<LiveEvent, Uint8Array>();
    const bytesOf = (e: LiveEvent) => encoded.get(e) ?? encoded.set(e, encodeEvent(e)).get(e)!;
    const join = (list: readonly LiveEvent[]) => (list.length === 1 ? bytesOf(list[0]!) : Buffer.concat(list.map(bytesOf)));
    if (this.byteListeners.size > 0) send(this.byteListeners, join(summarised(events)));
    for (const [resource, set] of this.resourceListeners) {
      const mine = events.filter((e) => (e.type.startsWith('lock.') ? e.resource === resource : true));
      if (mine.length > 0) send(set, join(mine));
    }
  };

  private add<L>(set: Set<L>, listener: L): () => void {
    set.add(listener);
    if (this.size === 1) {
      let ready!: () => void;
      this.sourcesReady = new Promise<void>((resolve) => (ready = resolve));
      this.stopSources = this.startSources(
        (event) => this.publish(event),
        () => ready(),
      );
    }
    return () => {
      if (!set.delete(listener)) return;
      if (this.size === 0) {
        this.stopSources?.();
        this.stopSources = null;
        this.dropBatch();
      }
    };
  }
}

function send(listeners: ReadonlySet<ByteListener>, bytes: Uint8Array): void {
  for (const listener of listeners) {
    try {
      listener(bytes);
    } catch {
      // one broken stream must not stop the others
    }
  }
}

/** A window's events for a stream that follows every change: past STREAM_BURST_AT lock events, one burst in their place. */
export function summarised(events: readonly LiveEvent[]): LiveEvent[] {
  let locks = 0;
  for (const e of events) if (e.type.startsWith('lock.')) locks++;
  if (locks <= STREAM_BURST_AT) return [...events];
  const counts: Record<string, number> = {};
  const resources = new Set<string>();
  const rest: LiveEvent[] = [];
  let at = 0;
  let source: LiveEvent['source'] = 'notifications';
  for (const e of events) {
    if (!e.type.startsWith('lock.')) {
      rest.push(e);
      continue;
    }
    counts[e.type] = (counts[e.type] ?? 0) + 1;
    if (e.resource !== undefined && resources.size < BURST_RESOURCES) resources.add(e.resource);
    at = Math.max(at, e.at);
    source = e.source;
  }
  const burst: LiveEvent = {
    type: 'lock.burst',
    at,
    counts,
    resources: [...resources],
    detail: `${locks} lock changes in ${STREAM_BATCH_MS} ms, too many to list one by one`,
    source,
  };
  return [...rest, burst];
}
