'use client';

import { useCallback, useSyncExternalStore } from 'react';

/** Phones: where lists turn into stacked cards (the CSS modules use the same width, < 700 px). */
export const PHONE_QUERY = '(max-width: 699px)';

/** Whether a CSS media query matches now, kept current as the window changes (false on the server). */
export function useMediaQuery(query: string): boolean {
  // Stable per query: an inline subscribe would unsubscribe and subscribe again on every render.
  const subscribe = useCallback(
    (onChange: () => void) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  const read = useCallback(() => window.matchMedia(query).matches, [query]);
  return useSyncExternalStore(subscribe, read, serverFalse);
}

const serverFalse = () => false;
