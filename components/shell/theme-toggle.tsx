'use client';

import { applyTheme, nextTheme, type ThemeChoice } from './theme';
import { useThemeChoice } from './use-theme-choice';

const LABEL: Record<ThemeChoice, string> = { system: 'Theme: system', dark: 'Theme: dark', light: 'Theme: light' };
const ICON: Record<ThemeChoice, string> = { system: '◐', dark: '☾', light: '☀' };

export function ThemeToggle() {
  const choice = useThemeChoice();
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
