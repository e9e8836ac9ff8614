import 'server-only';
import type { LiveEvent } from '../../api/events';

type Listener = (event: LiveEvent) => void;

/**
 * Fan-out of live events to every open /api/events stream. Sources (keyspace notifications,
 * polling, services) are started by the first subscriber and stopped with the last, so an idle
 * console holds no extra connections.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private stopSources: (() => void) | null = null;

  constructor(private readonly startSources: (emit: (event: LiveEvent) => void) => () => void) {}

  get size(): number {
    return this.listeners.size;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.stopSources = this.startSources((event) => this.publish(event));
    return () => {
      if (!this.listeners.delete(listener)) return;
      if (this.listeners.size === 0) {
        this.stopSources?.();
        this.stopSources = null;
      }
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
  }
}
