'use client';

import { useState } from 'react';
import type { LockListPage } from '@/lib/client/queries';
import { STATE_ORDER, type LockStateName } from './lock-state';
import type { useMatrixOptions } from './matrix-options';
import { MatrixToolbar, type Density } from './matrix-toolbar';
import { StateTabs } from './state-tabs';
import controls from './lock-list-controls.module.css';

/**
 * The Locks filters: state tabs, then search, pattern, prefix, sort and density. On a phone the
 * lock rows come first and these wait behind a Filters button that says how many are on.
 */
export function LockFilters({
  phone,
  options,
  latest,
  density,
  onDensity,
  onSearchEnter,
}: {
  phone: boolean;
  options: ReturnType<typeof useMatrixOptions>;
  latest: LockListPage | undefined;
  density: Density;
  onDensity: (density: Density) => void;
  onSearchEnter: () => void;
}) {
  const { filters, setStates } = options;
  const [filtersOpen, setFiltersOpen] = useState(false);
  const activeFilters = [filters.prefix, filters.search, filters.state, filters.pattern].filter(Boolean).length;
  const toggleState = (state: LockStateName) =>
    setStates((current) =>
      current.includes(state) ? current.filter((s) => s !== state) : STATE_ORDER.filter((s) => s === state || current.includes(s)),
    );
  return (
    <>
      {phone ? (
        <button
          type="button"
          className={`button ${controls.filtersToggle}`}
          aria-expanded={filtersOpen}
          aria-controls="lock-filters"
          onClick={() => setFiltersOpen((open) => !open)}
          data-testid="filters-toggle"
        >
          <span aria-hidden="true">{filtersOpen ? '▾' : '▸'}</span> Filters
          {activeFilters > 0 ? <span className={controls.filtersOn}> · {activeFilters} on</span> : null}
        </button>
      ) : null}
      {/* On a phone the lock rows come first: state tabs, search and sort wait behind the Filters button. */}
      <div id="lock-filters" className={controls.filters} hidden={phone && !filtersOpen} data-testid="lock-filters">
        <StateTabs
          latest={latest}
          states={options.states}
          onAll={() => setStates([])}
          onOnly={(state) => setStates([state])}
          onToggle={toggleState}
        />

        <MatrixToolbar
          search={options.search}
          onSearch={options.setSearch}
          onSearchEnter={onSearchEnter}
          patternMode={options.patternMode}
          onPatternMode={options.setPatternMode}
          pattern={options.pattern}
          onPattern={options.setPattern}
          prefix={options.prefix}
          onPrefix={options.setPrefix}
          sort={options.sort}
          onSort={options.setSort}
          density={density}
          onDensity={onDensity}
        />
      </div>
    </>
  );
}
