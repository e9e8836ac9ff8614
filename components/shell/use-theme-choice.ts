'use client';

import { useSyncExternalStore } from 'react';
import { readTheme, type ThemeChoice } from './theme';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('themechange', onChange);
  window.addEventListener('storage', onChange);
  return () => {
    window.removeEventListener('themechange', onChange);
    window.removeEventListener('storage', onChange);
  };
}

/** The stored theme choice, following changes in this tab (applyTheme) and in others (storage). */
export function useThemeChoice(): ThemeChoice {
  return useSyncExternalStore(subscribe, readTheme, () => 'system' as ThemeChoice);
}
