'use client';

import { useSyncExternalStore } from 'react';

/** Phones: where lists turn into stacked cards (the CSS modules use the same width, < 700 px). */
export const PHONE_QUERY = '(max-width: 699px)';

/** Whether a CSS media query matches now, kept current as the window changes (false on the server). */
export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    () => window.matchMedia(query).matches,
    () => false,
  );
}
