'use client';

import { useSearchParams } from 'next/navigation';
import { useEffect, useMemo, useState } from 'react';
import type { LockFilters } from '@/lib/client/queries';
import { STATE_INFO, STATE_ORDER, type LockStateName } from './lock-state';
import type { MatrixRowData } from './matrix-row';
import { compareKeys } from './window-merge';

/** What the Locks screen lets a user choose: filters from the address, sort orders, debouncing. */

export type SortKey = 'resource' | 'validity' | 'validity-desc' | 'state';
export const SORTS: Array<{ key: SortKey; label: string }> = [
  { key: 'resource', label: 'Resource (A→Z)' },
  { key: 'validity', label: 'Validity, soonest first' },
  { key: 'validity-desc', label: 'Validity, longest first' },
  { key: 'state', label: 'State, worst first' },
];

export function parseStates(value: string | null): LockStateName[] {
  if (!value) return [];
  return value.split(',').filter((s): s is LockStateName => (STATE_ORDER as readonly string[]).includes(s));
}

/** The filters an address asks for (the same the screen starts with). */
export function filtersFromParams(params: URLSearchParams): LockFilters {
  const states = parseStates(params.get('state'));
  const pattern = params.get('pattern')?.trim();
  const prefix = params.get('prefix');
  const search = params.get('search')?.trim();
  return {
    ...(prefix && !pattern ? { prefix } : {}),
    ...(states.length ? { state: states.join(',') } : {}),
    ...(search ? { search } : {}),
    ...(pattern ? { pattern } : {}),
  };
}

export function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

export function expiresAt(row: MatrixRowData): number {
  return row.view.validityMs === null ? Number.POSITIVE_INFINITY : row.t0 + row.view.validityMs;
}

export function sortRows(rows: MatrixRowData[], sort: SortKey): MatrixRowData[] {
  if (sort === 'resource') return rows;
  const copy = rows.slice();
  if (sort === 'validity') copy.sort((a, b) => expiresAt(a) - expiresAt(b) || compareKeys(a.view, b.view));
  if (sort === 'validity-desc') copy.sort((a, b) => expiresAt(b) - expiresAt(a) || compareKeys(a.view, b.view));
  if (sort === 'state') copy.sort((a, b) => STATE_INFO[a.view.state].rank - STATE_INFO[b.view.state].rank || compareKeys(a.view, b.view));
  return copy;
}

/**
 * The screen's choices (search, prefix, states, pattern, sort), started from the address and
 * written back to it, so a view can be shared or reloaded; and the filters they make (debounced).
 */
export function useMatrixOptions() {
  const params = useSearchParams();
  const [search, setSearch] = useState(() => params.get('search') ?? '');
  const [prefix, setPrefix] = useState(() => params.get('prefix') ?? '');
  const [states, setStates] = useState<LockStateName[]>(() => parseStates(params.get('state')));
  const [patternMode, setPatternMode] = useState(() => params.has('pattern'));
  const [pattern, setPattern] = useState(() => params.get('pattern') ?? '*lock*');
  const [sort, setSort] = useState<SortKey>(() =>
    SORTS.some((s) => s.key === params.get('sort')) ? (params.get('sort') as SortKey) : 'resource',
  );
  const debouncedSearch = useDebounced(search.trim(), 250);
  const debouncedPrefix = useDebounced(prefix, 250);
  const debouncedPattern = useDebounced(pattern.trim(), 400);
  const filters = useMemo<LockFilters>(
    () => ({
      ...(debouncedPrefix && !(patternMode && debouncedPattern) ? { prefix: debouncedPrefix } : {}),
      ...(states.length ? { state: states.join(',') } : {}),
      ...(debouncedSearch ? { search: debouncedSearch } : {}),
      ...(patternMode && debouncedPattern ? { pattern: debouncedPattern } : {}),
    }),
    [debouncedPrefix, states, debouncedSearch, patternMode, debouncedPattern],
  );
  useEffect(() => {
    const q = new URLSearchParams();
    // The kind filter's choice (kind-filter.tsx) is kept: the matrix shows one of the kinds.
    const kind = new URLSearchParams(window.location.search).get('kind');
    if (kind) q.set('kind', kind);
    if (filters.search) q.set('search', filters.search);
    if (filters.prefix) q.set('prefix', filters.prefix);
    if (filters.state) q.set('state', filters.state);
    if (filters.pattern) q.set('pattern', filters.pattern);
    if (sort !== 'resource') q.set('sort', sort);
    const next = q.size ? `?${q}` : window.location.pathname;
    if (`${window.location.search}` !== (q.size ? `?${q}` : '')) window.history.replaceState(null, '', next);
  }, [filters, sort]);
  return {
    search,
    setSearch,
    prefix,
    setPrefix,
    states,
    setStates,
    patternMode,
    setPatternMode,
    pattern,
    setPattern,
    sort,
    setSort,
    filters,
  };
}
