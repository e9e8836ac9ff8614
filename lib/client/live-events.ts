'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { liveEventSchema, type LiveEvent } from '../api/events';
import { queryKeys } from './queries';

const TYPES = liveEventSchema.shape.type.options;

/**
 * Keep every screen live: open /api/events once, refresh the queries an event affects, and keep
 * the last events for feeds. EventSource reconnects by itself (the server sends `retry:`). With
 * `resource`, the stream follows that one lock (and the nodes) and its events are never
 * summarised into a `lock.burst` (a summary refreshes the lock list; a lock's own page follows that lock).
 */
export function useLiveEvents(keep = 50, resource?: string): { events: LiveEvent[]; connected: boolean } {
  const queryClient = useQueryClient();
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const source = new EventSource(resource === undefined ? '/api/events' : `/api/events?resource=${encodeURIComponent(resource)}`);
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(false);
    const onEvent = (message: MessageEvent<string>) => {
      const parsed = liveEventSchema.safeParse(JSON.parse(message.data));
      if (!parsed.success) return;
      const event = parsed.data;
      setEvents((list) => [event, ...list].slice(0, keep));
      // cancelRefetch: false — a fetch already in flight answers the event; cancelling it on every
      // event would starve multi-page reads under steady lock traffic.
      const refresh = { cancelRefetch: false };
      if (event.type.startsWith('lock.')) {
        void queryClient.invalidateQueries({ queryKey: queryKeys.locks }, refresh);
        if (event.resource) void queryClient.invalidateQueries({ queryKey: queryKeys.lock(event.resource) }, refresh);
      } else {
        void queryClient.invalidateQueries({ queryKey: queryKeys.nodes }, refresh);
      }
    };
    for (const type of TYPES) source.addEventListener(type, onEvent as EventListener);
    return () => source.close();
  }, [queryClient, keep, resource]);
  return { events, connected };
}
