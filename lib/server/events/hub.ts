import 'server-only';
import { BURST_RESOURCES, STREAM_BURST_AT, type LiveEvent } from '../../api/events';
import { inRootContext } from '../root-context';

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
 * event per stream was what 200 open streams cost the lock service (372 → 61
 * pairs/s): two events per lock taken and released, times 200 sockets.
 */
export const STREAM_BATCH_MS = 250;
/** How long after a force-release ends the masters' reports of its deletes may still arrive (grouping, a slow node, polling). */
export const FORCE_RELEASE_SETTLE_MS = 3_000;
/**
 * A window goes out at once when a chunk it makes could pass about this many bytes: the node
 * events plus the lock events of any one resource (what a stream that follows that resource gets;
 * a stream of everything gets at most STREAM_BURST_AT lock events, or a burst). A stream's whole
 * queue is 1 MiB (feed.ts): no one chunk may come near it.
 */
export const STREAM_BATCH_MAX_BYTES = 64 * 1024;
/** …and at this many events whatever they are (what a window holds in memory). */
export const STREAM_BATCH_MAX_EVENTS = 5_000;
/** What an event takes encoded, apart from its detail (an estimate: windows are cut before encoding). */
const EVENT_BYTES = 160;

/** A byte listener and where in the current window it joined (it gets only what came after). */
type Joined = Map<ByteListener, number>;

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
 * resource's lock events one by one whatever the rate, and the node events. A stream that joins
 * mid-window gets the window's events from where it joined (the window is not cut short for it:
 * opening streams must not split windows under the burst threshold).
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly byteListeners: Joined = new Map();
  /** Streams that follow one resource, by resource. */
  private readonly resourceListeners = new Map<string, Joined>();
  /** Events waiting for the next batch (in publish order). */
  private window: LiveEvent[] = [];
  /** About how many bytes the window's node events take, and the lock events of each resource. */
  private nodeBytes = 0;
  private resourceBytes = new Map<string, number>();
  private largestResourceBytes = 0;
  private batchTimer: ReturnType<typeof setTimeout> | null = null;
  private stopSources: (() => void) | null = null;
  /** Resolves once the running sources said their subscriptions are in place. */
  private sourcesReady: Promise<void> = Promise.resolve();
  /**
   * Resources a force-release is deleting (how many at once), and until when after the last one
   * ended its deletes may still be reported by the masters: the force-release is one action, one
   * event (`lock.force-released`, published by the service), not that and a `lock.released` too.
   */
  private readonly forceReleasing = new Map<string, { running: number; until: number }>();

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
    for (const joined of this.resourceListeners.values()) following += joined.size;
    return this.listeners.size + this.byteListeners.size + following;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    this.started();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.listeners.delete(listener);
      this.stoppedOne();
    };
  }

  /**
   * Events encoded as server-sent events, in batches (STREAM_BATCH_MS): every change (lock
   * changes past STREAM_BURST_AT a window summarised), or with `resource` the changes of that one
   * lock and of the nodes. Events published before it subscribed never reach it.
   */
  subscribeEncoded(listener: ByteListener, resource?: string): () => void {
    let joined = this.byteListeners;
    if (resource !== undefined) {
      joined = this.resourceListeners.get(resource) ?? new Map();
      this.resourceListeners.set(resource, joined);
    }
    joined.set(listener, this.window.length);
    this.started();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      joined.delete(listener);
      if (resource !== undefined && joined.size === 0 && this.resourceListeners.get(resource) === joined)
        this.resourceListeners.delete(resource);
      if (this.byteListeners.size === 0 && this.resourceListeners.size === 0) this.dropBatch();
      this.stoppedOne();
    };
  }

  /**
   * A force-release of `resource` starts deleting: until the returned function is called, and
   * FORCE_RELEASE_SETTLE_MS after, the masters' own reports of a release of it (keyspace `del`,
   * polling) are that force-release, which publishes its one event itself. A holder's own release
   * in that window is not reported either: the force-release's compare-and-delete found its keys
   * gone (its answer says so).
   */
  forceReleaseStarted(resource: string): () => void {
    const entry = this.forceReleasing.get(resource) ?? { running: 0, until: 0 };
    entry.running++;
    this.forceReleasing.set(resource, entry);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      entry.running--;
      entry.until = Date.now() + FORCE_RELEASE_SETTLE_MS;
    };
  }

  /** Is `event` a master's report of a force-release's own deletes? */
  private partOfForceRelease(event: LiveEvent): boolean {
    if (event.type !== 'lock.released' || event.source === 'service' || event.resource === undefined) return false;
    const entry = this.forceReleasing.get(event.resource);
    if (!entry) return false;
    if (entry.running > 0 || entry.until >= Date.now()) return true;
    this.forceReleasing.delete(event.resource);
    return false;
  }

  publish(event: LiveEvent): void {
    if (this.forceReleasing.size > 0 && this.partOfForceRelease(event)) return;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // one broken stream must not stop the others
      }
    }
    if (this.byteListeners.size === 0 && this.resourceListeners.size === 0) return;
    this.window.push(event);
    const bytes = EVENT_BYTES + (event.detail?.length ?? 0);
    if (!event.type.startsWith('lock.') || event.resource === undefined) this.nodeBytes += bytes;
    else {
      const total = (this.resourceBytes.get(event.resource) ?? 0) + bytes;
      this.resourceBytes.set(event.resource, total);
      this.largestResourceBytes = Math.max(this.largestResourceBytes, total);
    }
    const stream = this.nodeBytes + Math.max(this.largestResourceBytes, STREAM_BURST_AT * EVENT_BYTES);
    if (stream >= STREAM_BATCH_MAX_BYTES || this.window.length >= STREAM_BATCH_MAX_EVENTS) this.flush();
    else this.batchTimer ??= setTimeout(this.flush, STREAM_BATCH_MS);
  }

  private dropBatch(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    this.window = [];
    this.nodeBytes = 0;
    this.resourceBytes = new Map();
    this.largestResourceBytes = 0;
  }

  private readonly flush = (): void => {
    const events = this.window;
    this.dropBatch();
    if (events.length === 0) return;
    // Each event serialised at most once, whichever streams it goes to.
    const encoded = new Map<LiveEvent, Uint8Array>();
    const bytesOf = (e: LiveEvent) => encoded.get(e) ?? encoded.set(e, encodeEvent(e)).get(e)!;
    const join = (list: readonly LiveEvent[]) =>
      list.length === 0 ? null : list.length === 1 ? bytesOf(list[0]!) : Buffer.concat(list.map(bytesOf));
    // Streams that joined at the same point share one chunk (almost always: all from the start).
    deliver(this.byteListeners, (from) => join(summarised(from === 0 ? events : events.slice(from))));
    for (const [resource, joined] of this.resourceListeners) {
      deliver(joined, (from) => join(events.slice(from).filter((e) => (e.type.startsWith('lock.') ? e.resource === resource : true))));
    }
    for (const joined of [this.byteListeners, ...this.resourceListeners.values()])
      for (const listener of joined.keys()) joined.set(listener, 0);
  };

  private started(): void {
    if (this.size !== 1) return;
    let ready!: () => void;
    this.sourcesReady = new Promise<void>((resolve) => (ready = resolve));
    // Outside the async context of the request that opened the first stream (root-context.ts).
    this.stopSources = inRootContext(() =>
      this.startSources(
        (event) => this.publish(event),
        () => ready(),
      ),
    );
  }

  private stoppedOne(): void {
    if (this.size !== 0) return;
    this.stopSources?.();
    this.stopSources = null;
    this.dropBatch();
  }
}

/** Send each listener the chunk made for where it joined (made once per join point; none when empty). */
function deliver(joined: Joined, chunkFrom: (from: number) => Uint8Array | null): void {
  const chunks = new Map<number, Uint8Array | null>();
  for (const [listener, from] of joined) {
    if (!chunks.has(from)) chunks.set(from, chunkFrom(from));
    const bytes = chunks.get(from)!;
    if (bytes) send(listener, bytes);
  }
}

function send(listener: ByteListener, bytes: Uint8Array): void {
  try {
    listener(bytes);
  } catch {
    // one broken stream must not stop the others
  }
}

/** A window's events for a stream that follows every change: past STREAM_BURST_AT lock events, one burst in their place. */
export function summarised(events: readonly LiveEvent[]): LiveEvent[] {
  let locks = 0;
  for (const e of events) if (e.type.startsWith('lock.')) locks++;
  if (locks <= STREAM_BURST_AT) return [...events];
  const counts: Record<string, number> = {};
  const resources = new Set<string>();
  const out: LiveEvent[] = [];
  let at = 0;
  let place = -1;
  let source: LiveEvent['source'] = 'notifications';
  for (const e of events) {
    if (!e.type.startsWith('lock.')) {
      out.push(e);
      continue;
    }
    // The burst stands where the window's first lock change stood, among the node events.
    if (place < 0) place = out.length;
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
    detail: `${locks} lock changes in one batch, too many to list one by one`,
    source,
  };
  out.splice(place, 0, burst);
  return out;
}
