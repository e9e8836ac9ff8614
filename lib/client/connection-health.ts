'use client';

import { useQueryClient, type QueryCache, type QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { ApiError } from './fetch-json';

/**
 * Is the console answering? Judged from every read the screens make (the query cache): the last
 * read that got an answer, and whether the latest outcome was "no answer" (status 0, a timeout or
 * a dropped connection) or a server failure (5xx). A 4xx is an answer: the console is there.
 */
export interface ConnectionHealth {
  /** When a read last got an answer (ms since epoch), null before the first. */
  lastOkAt: number | null;
  /** The latest read got no answer (or a 5xx) and none has answered since. */
  failing: boolean;
  /** The failure's message, for the banner. */
  problem: string | null;
}

const unreachable = (error: unknown) => error instanceof ApiError && (error.status === 0 || error.status >= 500);

export function watchConnection(cache: QueryCache, onChange: () => void): { read(): ConnectionHealth; stop(): void } {
  let health: ConnectionHealth = { lastOkAt: null, failing: false, problem: null };
  const stop = cache.subscribe((event) => {
    if (event.type !== 'updated') return;
    const action = event.action;
    if (action.type === 'success') {
      health = { lastOkAt: Date.now(), failing: false, problem: null };
      onChange();
    } else if (action.type === 'error' && unreachable(action.error)) {
      health = { ...health, failing: true, problem: (action.error as Error).message };
      onChange();
    } else if (action.type === 'error' && health.failing) {
      // A 4xx answer: the console is reachable again.
      health = { lastOkAt: Date.now(), failing: false, problem: null };
      onChange();
    }
  });
  return { read: () => health, stop };
}

const INITIAL: ConnectionHealth = { lastOkAt: null, failing: false, problem: null };
const watchers = new WeakMap<QueryClient, { read(): ConnectionHealth; subscribe(listener: () => void): () => void }>();

/** The console's reachability as every screen's reads see it, shared by the top bar and the banner. */
export function useConnectionHealth(): ConnectionHealth {
  const client = useQueryClient();
  let watcher = watchers.get(client);
  if (!watcher) {
    const listeners = new Set<() => void>();
    const watch = watchConnection(client.getQueryCache(), () => listeners.forEach((l) => l()));
    watcher = {
      read: watch.read,
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    watchers.set(client, watcher);
  }
  return useSyncExternalStore(watcher.subscribe, watcher.read, () => INITIAL);
}
