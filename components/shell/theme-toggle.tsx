'use client';

import { useSyncExternalStore } from 'react';
import { applyTheme, nextTheme, readTheme, type ThemeChoice } from './theme';

const LABEL: Record<ThemeChoice, string> = { system: 'Theme: system', dark: 'Theme: dark', light: 'Theme: light' };
const ICON: Record<ThemeChoice, string> = { system: '◐', dark: '☾', light: '☀' };

function subscribe(onChange: () => void): () => void {
  window.addEventListener('themechange', onChange);
  window.addEventListener('storage', onChange);
  return () => {
    window.removeEventListener('themechange', onChange);
    window.removeEventListener('storage', onChange);
  };
}

export function ThemeToggle() {
  const choice = useSyncExternalStore(subscribe, readTheme, () => 'system' as ThemeChoice);
  return (
    <button
      type="button"
      className="button button-ghost icon-button"
      aria-label={`${LABEL[choice]} (press t to change)`}
      title={LABEL[choice]}
      data-testid="theme-toggle"
      onClick={() => applyTheme(nextTheme(choice))}
    >
      <span aria-hidden="true">{ICON[choice]}</span>
    </button>
  );
}
