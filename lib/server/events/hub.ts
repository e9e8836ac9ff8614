import 'server-only';
import type { LiveEvent } from '../../api/events';

type Listener = (event: LiveEvent) => void;
type ByteListener = (bytes: Uint8Array) => void;

const encoder = new TextEncoder();

/** One live event as a server-sent event. */
export function encodeEvent(event: LiveEvent): Uint8Array {
  return encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/**
 * How long encoded events are collected before they go to the streams as one chunk: each stream
 * then costs at most 1000 / STREAM_BATCH_MS writes a second, whatever the lock traffic (at 100 ms,
 * 200 streams still cost the lock service about a fifth of its throughput in a full bench run). One write
 * per event per stream was what 200 open streams cost the lock service (issue 18, finding 9:
 * 372 → 61 pairs/s): two events per lock taken and released, times 200 sockets.
 */
export const STREAM_BATCH_MS = 250;
/** A batch this large goes out at once (a stream is dropped when a chunk exceeds its free space: stream.ts). */
export const STREAM_BATCH_MAX_BYTES = 64 * 1024;

/**
 * Fan-out of live events to every open /api/events stream. Sources (keyspace notifications,
 * polling, services) are started by the first subscriber and stopped with the last, so an idle
 * console holds no extra connections.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly byteListeners = new Set<ByteListener>();
  /** Encoded events waiting for the next batch (in publish order). */
  private batch: Uint8Array[] = [];
  private batchBytes = 0;
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
    return this.listeners.size + this.byteListeners.size;
  }

  subscribe(listener: Listener): () => void {
    return this.add(this.listeners, listener);
  }

  /**
   * Events already encoded as server-sent events, in batches (STREAM_BATCH_MS): each event is
   * serialised once, and each batch joined once, for every stream.
   */
  subscribeEncoded(listener: ByteListener): () => void {
    // Events published before it subscribed go to the streams that were there, never to it.
    this.flush();
    const remove = this.add(this.byteListeners, listener);
    return () => {
      remove();
      if (this.byteListeners.size === 0) this.dropBatch();
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
    if (this.byteListeners.size === 0) return;
    const bytes = encodeEvent(event);
    this.batch.push(bytes);
    this.batchBytes += bytes.byteLength;
    if (this.batchBytes >= STREAM_BATCH_MAX_BYTES) this.flush();
    else this.batchTimer ??= setTimeout(this.flush, STREAM_BATCH_MS);
  }

  private dropBatch(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    this.batch = [];
    this.batchBytes = 0;
  }

  private readonly flush = (): void => {
    const parts = this.batch;
    this.dropBatch();
    if (parts.length === 0) return;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    for (const listener of this.byteListeners) {
      try {
        listener(bytes);
      } catch {
        // one broken stream must not stop the others
      }
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
