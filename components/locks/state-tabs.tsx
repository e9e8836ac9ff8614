'use client';

import type { LockListPage } from '@/lib/client/queries';
import { STATE_INFO, STATE_ORDER, type LockStateName } from './lock-state';
import { tabCount } from './matrix-status';
import controls from './lock-list-controls.module.css';

/**
 * The state tabs above the matrix: counts first, like a queue dashboard. A click shows that state
 * alone, replacing the one before (clicks added up, so "split" then "partial" showed
 * both while each looked like a single choice); clicking the one shown shows all again. Combining
 * is explicit and said on screen: Ctrl-, ⌘- or Shift-click adds a state to those shown.
 */
export function StateTabs({
  latest,
  states,
  onAll,
  onOnly,
  onToggle,
}: {
  latest: LockListPage | undefined;
  states: LockStateName[];
  onAll: () => void;
  /** Show this state alone. */
  onOnly: (state: LockStateName) => void;
  /** Add it to the states shown, or take it out. */
  onToggle: (state: LockStateName) => void;
}) {
  const choose = (state: LockStateName, combine: boolean) => {
    if (combine) onToggle(state);
    else if (states.length === 1 && states[0] === state) onAll();
    else onOnly(state);
  };
  return (
    <div className={controls.tabs} role="group" aria-label="Filter by state" data-testid="state-tabs">
      <button
        type="button"
        className={`${controls.tab} ${states.length === 0 ? controls.tabActive : ''}`}
        aria-pressed={states.length === 0}
        onClick={onAll}
      >
        <span className={controls.tabLabel}>All locks</span>
        <span className={controls.tabCount} data-testid="state-count-all">
          {tabCount(latest, latest?.total)}
        </span>
      </button>
      {STATE_ORDER.map((state) => (
        <button
          key={state}
          type="button"
          className={`${controls.tab} ${controls[`tab-${STATE_INFO[state].tone}`]} ${states.includes(state) ? controls.tabActive : ''}`}
          aria-pressed={states.includes(state)}
          onClick={(e) => choose(state, e.ctrlKey || e.metaKey || e.shiftKey)}
          title={`${STATE_INFO[state].help} Ctrl-click to combine with the others shown.`}
        >
          <span className={controls.tabLabel}>
            <span className={controls.tabDot} aria-hidden="true" />
            {STATE_INFO[state].label}
          </span>
          <span className={controls.tabCount} data-testid={`state-count-${state}`}>
            {tabCount(latest, latest?.stateCounts[state])}
          </span>
        </button>
      ))}
      <span className="muted small" data-testid="state-tabs-hint">
        {states.length > 1 ? `${states.length} states shown together · ` : ''}Ctrl-click to combine
      </span>
    </div>
  );
}
