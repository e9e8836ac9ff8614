'use client';

import { useCallback, useSyncExternalStore } from 'react';

/** Same-tab listeners: the storage event only reaches other tabs. */
const listeners = new Set<() => void>();

/** One subscribe for every caller (a new one per render would resubscribe on every render). */
function subscribe(onChange: () => void): () => void {
  listeners.add(onChange);
  window.addEventListener('storage', onChange);
  return () => {
    listeners.delete(onChange);
    window.removeEventListener('storage', onChange);
  };
}

/**
 * A small choice kept in localStorage (a display preference, never anything that matters to
 * safety), the same in every tab. The server renders `fallback`; an unknown stored value reads as
 * `fallback` too.
 */
export function useStoredChoice<T extends string>(key: string, choices: readonly T[], fallback: T): [T, (next: T) => void] {
  const read = useCallback(() => {
    try {
      const v = window.localStorage.getItem(key);
      return (choices as readonly string[]).includes(v ?? '') ? (v as T) : fallback;
    } catch {
      return fallback;
    }
  }, [key, choices, fallback]);
  const value = useSyncExternalStore(subscribe, read, () => fallback);
  const set = useCallback(
    (next: T) => {
      try {
        window.localStorage.setItem(key, next);
      } catch {
        // Private mode or a full storage: the choice cannot be kept, and the screen stays as it was.
      }
      listeners.forEach((l) => l());
    },
    [key],
  );
  return [value, set];
}
