'use client';

import type { LockListPage } from '@/lib/client/queries';
import { STATE_INFO, STATE_ORDER, type LockStateName } from './lock-state';
import { tabCount } from './matrix-status';
import controls from './lock-list-controls.module.css';

/** The state tabs above the matrix: counts first, like a queue dashboard, but as filters that combine. */
export function StateTabs({
  latest,
  states,
  onAll,
  onToggle,
}: {
  latest: LockListPage | undefined;
  states: LockStateName[];
  onAll: () => void;
  onToggle: (state: LockStateName) => void;
}) {
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
          onClick={() => onToggle(state)}
          title={STATE_INFO[state].help}
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
    </div>
  );
}
