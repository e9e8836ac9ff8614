'use client';

import { useQueryClient, type QueryCache, type QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { ApiError } from './fetch-json';

/**
 * Is the console answering? Judged from every read the screens make (the query cache): the last
 * read that got an answer, and whether the latest outcome was "no answer" (status 0: a timeout or a
 * dropped connection). Any HTTP status is an answer: the console is there, and a 4xx or 5xx is
 * shown by the screen that asked (one failing endpoint must not flash the whole console offline).
 */
export interface ConnectionHealth {
  /** When a read last got an answer (ms since epoch), as of the last change of state; null before the first. */
  lastOkAt: number | null;
  /** The latest read got no answer (or a 5xx) and none has answered since. */
  failing: boolean;
  /** The failure's message, for the banner. */
  problem: string | null;
}

const unreachable = (error: unknown) => error instanceof ApiError && error.status === 0;

/**
 * A read without an answer makes the console "not answering" only when nothing else has answered
 * for this long: screens read every second or two, so a live console keeps answering, and one
 * endpoint that hangs (shown by its own screen) neither turns the whole console red nor makes the
 * indicator flap between two reads.
 */
export const SILENCE_MS = 5_000;

export function watchConnection(
  cache: QueryCache,
  onChange: () => void,
  now: () => number = Date.now,
): { read(): ConnectionHealth; stop(): void } {
  let health: ConnectionHealth = { lastOkAt: null, failing: false, problem: null };
  // Kept aside: a new snapshot (and a render of every reader) only when the state changes.
  let lastOkAt: number | null = null;
  const answered = () => {
    lastOkAt = now();
    if (!health.failing && health.lastOkAt !== null) return;
    health = { lastOkAt, failing: false, problem: null };
    onChange();
  };
  const stop = cache.subscribe((event) => {
    if (event.type !== 'updated') return;
    const action = event.action;
    // A fetched answer, not data a screen put in the cache itself (setQueryData).
    if (action.type === 'success' && action.manual !== true) answered();
    else if (action.type === 'error' && !unreachable(action.error))
      answered(); // an HTTP error is an answer
    else if (action.type === 'error' && now() - (lastOkAt ?? 0) > SILENCE_MS) {
      health = { lastOkAt, failing: true, problem: (action.error as Error).message };
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
