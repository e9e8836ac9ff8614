'use client';

import { SORTS, type SortKey } from './matrix-options';

/** Row density of the matrix: comfortable (two lines a row) or compact (one line, about twice the rows on screen). */
export const DENSITIES = ['comfortable', 'compact'] as const;
export type Density = (typeof DENSITIES)[number];
import controls from './lock-list-controls.module.css';

/** Search, prefix or glob, sort, and which keys (the console's or any library's by pattern). */
export function MatrixToolbar(props: {
  search: string;
  onSearch: (value: string) => void;
  onSearchEnter: () => void;
  patternMode: boolean;
  onPatternMode: (on: boolean) => void;
  pattern: string;
  onPattern: (value: string) => void;
  prefix: string;
  onPrefix: (value: string) => void;
  sort: SortKey;
  onSort: (sort: SortKey) => void;
  density: Density;
  onDensity: (density: Density) => void;
}) {
  const {
    search,
    onSearch,
    onSearchEnter,
    patternMode,
    onPatternMode,
    pattern,
    onPattern,
    prefix,
    onPrefix,
    sort,
    onSort,
    density,
    onDensity,
  } = props;
  return (
    <div className={controls.toolbar}>
      <label className={controls.searchBox}>
        <span className={controls.searchIcon} aria-hidden="true">
          ⌕
        </span>
        <input
          data-shortcut-search
          type="search"
          placeholder="Search resource, token, owner, host, purpose"
          aria-label="Search locks"
          value={search}
          onChange={(e) => onSearch(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') e.currentTarget.blur();
            if (e.key === 'Enter') {
              e.currentTarget.blur();
              onSearchEnter();
            }
          }}
        />
        <kbd className={controls.kbd}>/</kbd>
      </label>
      {patternMode ? (
        <label className={controls.field}>
          <span>Glob</span>
          <input
            type="text"
            aria-label="Key pattern (glob)"
            value={pattern}
            onChange={(e) => onPattern(e.target.value)}
            spellCheck={false}
            className={controls.globInput}
            title="A Redis MATCH pattern, e.g. lock:* or *:mutex"
          />
        </label>
      ) : (
        <label className={controls.field}>
          <span>Prefix</span>
          <input
            type="text"
            placeholder="e.g. orders/"
            aria-label="Resource prefix"
            value={prefix}
            onChange={(e) => onPrefix(e.target.value)}
            spellCheck={false}
          />
        </label>
      )}
      <label className={controls.field}>
        <span>Sort</span>
        <select aria-label="Sort loaded rows" value={sort} onChange={(e) => onSort(e.target.value as SortKey)}>
          {SORTS.map((s) => (
            <option key={s.key} value={s.key}>
              {s.label}
            </option>
          ))}
        </select>
      </label>
      <div className={controls.segmented} role="group" aria-label="Which keys">
        <button
          type="button"
          aria-pressed={!patternMode}
          className={!patternMode ? controls.segActive : ''}
          onClick={() => onPatternMode(false)}
        >
          Console keys
        </button>
        <button
          type="button"
          aria-pressed={patternMode}
          className={patternMode ? controls.segActive : ''}
          onClick={() => onPatternMode(true)}
          title="Inspect keys another Redlock library wrote, by glob"
        >
          Pattern
        </button>
      </div>
      <div className={controls.segmented} role="group" aria-label="Row density">
        {DENSITIES.map((d) => (
          <button
            key={d}
            type="button"
            aria-pressed={density === d}
            className={density === d ? controls.segActive : ''}
            onClick={() => onDensity(d)}
            data-testid={`density-${d}`}
          >
            {d === 'comfortable' ? 'Comfortable' : 'Compact'}
          </button>
        ))}
      </div>
    </div>
  );
}
