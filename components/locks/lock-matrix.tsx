'use client';

import { keepPreviousData, useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState, type CSSProperties } from 'react';
import { filtersKey, lockWindowQuery, preloadLockPage, takePreloadedLockPage, type WindowAnchor } from '@/lib/client/lock-queries';
import { lockListUrl, locksInfiniteQuery, nodesQuery, queryKeys, type LockListPage } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { useCountdowns, useNow } from './countdown';
import { formatClock, formatCount } from './format';
import { STATE_ORDER, type LockStateName } from './lock-state';
import { MatrixHeader, MatrixRow, type MatrixRowData } from './matrix-row';
import { mergeWindow, t0Of } from './window-merge';
import { KeyInspector } from './key-inspector';
import { BulkReleaseDialog } from './bulk-release-dialog';
import { useLockSelection, type PickedLock } from './lock-selection';
import { SelectionBar } from './selection-bar';
import { StateTabs } from './state-tabs';
import { DENSITIES, MatrixToolbar, type Density } from './matrix-toolbar';
import { useStoredChoice } from '../ui/use-stored-choice';
import { PHONE_QUERY, useMediaQuery } from '../ui/use-media-query';
import { MatrixSkeleton } from './matrix-skeleton';
import { MatrixFooter, ReadAt, ScanProgress, ScanTruncated } from './matrix-status';
import { MatrixEmpty, MatrixError } from './matrix-empty';
import { filtersFromParams, sortRows, useMatrixOptions } from './matrix-options';
import { useMatrixKeys } from './matrix-keys';
import controls from './lock-list-controls.module.css';
import styles from './lock-matrix.module.css';

const PAGE_SIZE = 500;
/** Rows re-read every second around the first one on screen. */
const WINDOW_SIZE = 60;
const ROW_HEIGHT = 56;
/** A row as a stacked card on phones (lock-matrix.module.css, its narrow block). */
const PHONE_ROW_HEIGHT = 112;
/** A row in the compact density (lock-matrix.module.css, `.compact`). */
const COMPACT_ROW_HEIGHT = 36;
const HEADER_HEIGHT = 48;
/** Ask for the next page when the last rendered row is this close to the end of the loaded ones. */
const PREFETCH_ROWS = 250;
/** Below this many loaded rows, a sort other than by resource simply refetches everything. */
const SMALL_LIST = 1_000;

// Loading this screen's code on /locks starts reading the first page right away (see preloadLockPage).
if (typeof window !== 'undefined' && window.location.pathname === '/locks') {
  preloadLockPage(lockListUrl(filtersFromParams(new URLSearchParams(window.location.search)), null, PAGE_SIZE, true));
}

export function LockMatrix() {
  const router = useRouter();
  const queryClient = useQueryClient();
  const { data: me } = useQuery(meQuery());
  const [bulk, setBulk] = useState<PickedLock[] | null>(null);

  const options = useMatrixOptions();
  const { filters, sort, setStates } = options;
  const currentFiltersKey = filtersKey(filters);
  // Picked for a bulk release, for these filters: other filters start an empty selection.
  const selection = useLockSelection(currentFiltersKey);
  const { toggle: togglePick, retain: retainPicks } = selection;
  const onPick = useCallback((row: MatrixRowData) => togglePick(row.view), [togglePick]);

  const pagesOptions = locksInfiniteQuery(filters, PAGE_SIZE);
  const pagesQuery = useInfiniteQuery({
    ...pagesOptions,
    queryFn: (context) => {
      // The page read when this code loaded, if it is for these filters; a failed one (before
      // signing in, say) is simply asked again.
      const early = context.pageParam === null ? takePreloadedLockPage(lockListUrl(filters, null, PAGE_SIZE, true)) : null;
      return early ? early.catch(() => pagesOptions.queryFn!(context)) : pagesOptions.queryFn!(context);
    },
    placeholderData: keepPreviousData,
    gcTime: 5_000,
  });
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = pagesQuery;
  const pages = pagesQuery.data?.pages;
  // Node addresses for the column titles: asked for once the first rows are in, so the node
  // health read never competes with the scan the operator is waiting for.
  const { data: nodesInfo } = useQuery({ ...nodesQuery(), enabled: !!pages });
  const baseRows = useMemo(() => {
    const out: MatrixRowData[] = [];
    for (const page of pages ?? []) {
      const t0 = t0Of(page);
      for (const view of page.items) out.push({ view, t0 });
    }
    return out;
  }, [pages]);

  // Where the live window starts, for the filters it was chosen under (other filters: the top).
  const [anchorState, setAnchorState] = useState<{ filters: string; anchor: WindowAnchor }>({ filters: '', anchor: null });
  const anchor = anchorState.filters === currentFiltersKey ? anchorState.anchor : null;
  // An early first page (scan still running) is refetched whole until complete: no window over it.
  const scanning = pages?.[0]?.complete === false;
  const liveWindow = sort === 'resource' && !!pages && !pagesQuery.isPlaceholderData && !scanning;
  const windowQuery = useQuery(lockWindowQuery(filters, anchor, WINDOW_SIZE, liveWindow));
  const win = liveWindow && windowQuery.data?.filtersKey === currentFiltersKey ? windowQuery.data : null;
  const merged = useMemo(() => (win ? mergeWindow(baseRows, win) : baseRows), [baseRows, win]);
  const rows = useMemo(() => sortRows(merged, sort), [merged, sort]);

  const lastPage: LockListPage | undefined = pages?.[pages.length - 1];
  const latest: LockListPage | undefined = win && (!lastPage || win.receivedAt >= lastPage.receivedAt) ? win : lastPage;
  const refreshing = pagesQuery.isPlaceholderData;

  // Other sorts cannot patch a window (rows on screen are not one run of resources): a small list
  // refetches whole every 2 s, a large one stays the snapshot it is and says so.
  const smallList = baseRows.length <= SMALL_LIST;
  const { refetch } = pagesQuery;
  useEffect(() => {
    if (sort === 'resource' || !smallList) return;
    const timer = setInterval(() => void refetch(), 2_000);
    return () => clearInterval(timer);
  }, [sort, smallList, refetch]);

  const scrollRef = useRef<HTMLDivElement>(null);
  const lastExpireRefresh = useRef(0);
  const onExpire = useCallback(() => {
    if (Date.now() - lastExpireRefresh.current < 1_000) return;
    lastExpireRefresh.current = Date.now();
    if (sort === 'resource') void queryClient.invalidateQueries({ queryKey: queryKeys.locksWindow });
    else if (smallList) void refetch();
  }, [queryClient, sort, smallList, refetch]);
  const sectionRef = useRef<HTMLElement>(null);
  useCountdowns(sectionRef, onExpire);

  // The selection follows the table: once the whole list is read (no page left, no scan running, no
  // placeholder of other filters), a picked lock that is no longer in it is no longer picked.
  const wholeList = !!pages && !hasNextPage && !scanning && !refreshing && !pagesQuery.isFetching;
  useEffect(() => {
    if (wholeList) retainPicks(new Set(rows.map((r) => r.view.key)));
  }, [wholeList, rows, retainPicks]);

  const count = rows.length + (hasNextPage ? 1 : 0);
  // Stable callbacks: the virtualizer recomputes every row's offset when one of them changes.
  const getItemKey = useCallback((index: number) => rows[index]?.view.key ?? '__more__', [rows]);
  const phone = useMediaQuery(PHONE_QUERY);
  const [density, setDensity] = useStoredChoice<Density>('locks.density', DENSITIES, 'comfortable');
  const compact = density === 'compact' && !phone;
  const rowHeight = phone ? PHONE_ROW_HEIGHT : compact ? COMPACT_ROW_HEIGHT : ROW_HEIGHT;
  const estimateSize = useCallback(() => rowHeight, [rowHeight]);
  const getScrollElement = useCallback(() => scrollRef.current, []);
  // TanStack Virtual hands back functions the React Compiler cannot memoize; it is only read here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count,
    getScrollElement,
    estimateSize,
    overscan: 10,
    // The sticky column header sits above the rows inside the same scroller.
    scrollMargin: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    getItemKey,
  });
  // Every cached row size was measured for the other layout.
  useEffect(() => virtualizer.measure(), [virtualizer, rowHeight]);
  const items = virtualizer.getVirtualItems();
  const lastIndex = items.length ? items[items.length - 1]!.index : 0;
  const firstIndex = items.length ? items[0]!.index : 0;

  useEffect(() => {
    // Well ahead of the end: the next page is read while the operator is still on this one.
    if (hasNextPage && !isFetchingNextPage && lastIndex >= rows.length - PREFETCH_ROWS) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, lastIndex, rows.length, fetchNextPage]);

  // Re-read the rows on screen: the window starts just above the first rendered row.
  useEffect(() => {
    const timer = setTimeout(() => {
      const above = firstIndex > 0 ? rows[firstIndex - 1] : undefined;
      const next: WindowAnchor = above ? { resource: above.view.resource, key: above.view.key } : null;
      setAnchorState((current) =>
        current.filters === currentFiltersKey && current.anchor?.resource === next?.resource && current.anchor?.key === next?.key
          ? current
          : { filters: currentFiltersKey, anchor: next },
      );
    }, 150);
    return () => clearTimeout(timer);
  }, [firstIndex, rows, currentFiltersKey]);

  // New filters, new list: start it from the top.
  useEffect(() => {
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [currentFiltersKey]);

  const firstRowsMarked = useRef(false);
  useEffect(() => {
    if (!firstRowsMarked.current && rows.length > 0) {
      firstRowsMarked.current = true;
      // Marked in the frame that paints them: e2e reads it (time from navigation start to first rows).
      requestAnimationFrame(() => performance.mark('locks:first-rows'));
    }
  }, [rows.length]);

  // Selection and keyboard navigation (j/k or arrows, Enter opens).
  const [selectedKey, setSelectedKey] = useState<string | null>(null);
  const [inspectKey, setInspectKey] = useState<string | null>(null);
  const selectedIndex = useMemo(() => (selectedKey === null ? -1 : rows.findIndex((r) => r.view.key === selectedKey)), [rows, selectedKey]);
  const ownLayout = !filters.pattern;
  const open = useCallback(
    (row: MatrixRowData) => {
      if (ownLayout) router.push(`/locks/${encodeURIComponent(row.view.resource)}`);
      else {
        setSelectedKey(row.view.key);
        setInspectKey(row.view.key);
      }
    },
    [ownLayout, router],
  );

  useMatrixKeys({ rows, selectedIndex, firstIndex, virtualizer, open, setSelectedKey, setInspectKey });

  const now = useNow();
  // The same array as long as the node ids stay the same, so memoized rows do not re-render.
  const nodeIdList = (latest?.nodes.map((n) => n.node) ?? nodesInfo?.nodes.map((n) => n.id) ?? []).join(',');
  const nodeIds = useMemo(() => (nodeIdList ? nodeIdList.split(',').map(Number) : [1, 2, 3, 4, 5]), [nodeIdList]);
  const labels = useMemo(() => new Map(nodesInfo?.nodes.map((n) => [n.id, n.label]) ?? []), [nodesInfo]);
  const toggleState = (state: LockStateName) =>
    setStates((current) =>
      current.includes(state) ? current.filter((s) => s !== state) : STATE_ORDER.filter((s) => s === state || current.includes(s)),
    );
  const filtering = !!(filters.prefix || filters.search || filters.state);
  const activeFilters = [filters.prefix, filters.search, filters.state, filters.pattern].filter(Boolean).length;
  const [filtersOpen, setFiltersOpen] = useState(false);
  const clearFilters = () => {
    options.setSearch('');
    options.setPrefix('');
    setStates([]);
  };
  const refresh = () => {
    void queryClient.resetQueries({ queryKey: queryKeys.lockPages });
    void queryClient.invalidateQueries({ queryKey: queryKeys.locksWindow });
  };

  const loadState = pagesQuery.isPending ? 'loading' : pagesQuery.isError && !pages ? 'error' : 'ready';
  const badNodes = latest?.nodes.filter((n) => !n.ok) ?? [];
  const inspected = inspectKey === null ? null : (rows.find((r) => r.view.key === inspectKey) ?? null);
  const isOperator = me?.role === 'operator';
  // Operators pick locks for a bulk force-release; only keys in the lock core's layout can be released.
  const selectable = isOperator && ownLayout;

  return (
    <section ref={sectionRef} className={`${controls.screen} page-wide`} aria-labelledby="locks-title">
      <div className={controls.titleRow}>
        <div>
          <h1 id="locks-title" className={controls.title}>
            Locks
          </h1>
          <p className={controls.subtitle}>
            The quorum matrix: every resource against every master. Same colour, same token; a row is only a lock when a quorum agrees.
          </p>
        </div>
        <ReadAt latest={latest} now={now} onRefresh={refresh} />
      </div>

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
          onSearchEnter={() => rows[0] && setSelectedKey(rows[0].view.key)}
          patternMode={options.patternMode}
          onPatternMode={options.setPatternMode}
          pattern={options.pattern}
          onPattern={options.setPattern}
          prefix={options.prefix}
          onPrefix={options.setPrefix}
          sort={options.sort}
          onSort={options.setSort}
          density={density}
          onDensity={setDensity}
        />
      </div>

      <ScanProgress page={pages?.[0]} />
      <ScanTruncated page={pages?.[0]} />
      {badNodes.length > 0 && (
        <p className={`callout callout-warn ${controls.notice}`} role="status" data-testid="unreadable-nodes">
          <strong>
            {badNodes.length === 1
              ? `Node ${badNodes[0]!.node} could not be read`
              : `Nodes ${badNodes.map((n) => n.node).join(', ')} could not be read`}
          </strong>{' '}
          ({badNodes[0]!.error ?? 'no answer'}). {badNodes.length === 1 ? 'Its cells show' : 'Their cells show'} as unknown; states are
          computed from the nodes that answered.
        </p>
      )}
      {sort !== 'resource' && !smallList && (
        <p className={`callout ${controls.notice}`} role="status">
          Sorted within the {formatCount(baseRows.length)} loaded rows, as read at {latest ? formatClock(latest.readAt) : '…'}. TTLs keep
          counting down;{' '}
          <button type="button" className={controls.linkButton} onClick={refresh}>
            reload
          </button>{' '}
          for fresh readings, or sort by resource to stay live.
        </p>
      )}

      {selectable ? (
        <SelectionBar
          picked={selection.list}
          matching={latest?.matched ?? null}
          filters={filters}
          onSelectAll={selection.setAll}
          onClear={selection.clear}
          onRelease={() => setBulk(selection.list)}
        />
      ) : null}
      <div
        className={`${styles.matrix} ${refreshing ? styles.refreshing : ''} ${selectable ? styles.selectable : ''} ${compact ? styles.compact : ''}`}
        data-testid="lock-matrix"
        data-loading-state={loadState}
        data-rows={rows.length}
        data-scan={scanning ? 'scanning' : 'complete'}
        style={{ '--nodes': nodeIds.length } as CSSProperties}
      >
        <div ref={scrollRef} className={styles.scroller} tabIndex={-1} data-testid="lock-matrix-scroller">
          {/* The table holds only its header and rows; loading, error and empty states sit beside it. */}
          <div
            role="table"
            aria-label="Quorum matrix"
            aria-rowcount={(latest?.matched ?? rows.length) + 1}
            aria-busy={loadState === 'loading' || refreshing || scanning}
          >
            <MatrixHeader
              nodeIds={nodeIds}
              labels={labels}
              nodes={latest?.nodes ?? []}
              quorum={latest?.quorum ?? null}
              selection={
                selectable
                  ? {
                      all: rows.length > 0 && rows.every((r) => selection.picked.has(r.view.key)),
                      some: rows.some((r) => selection.picked.has(r.view.key)),
                      onToggleAll: () => selection.toggleMany(rows.map((r) => r.view)),
                    }
                  : null
              }
            />
            {rows.length > 0 && (
              <div className={styles.canvas} style={{ height: virtualizer.getTotalSize() }} role="rowgroup">
                {items.map((item) => {
                  const row = rows[item.index];
                  if (!row) {
                    return (
                      <div
                        key={item.key}
                        className={styles.moreRow}
                        style={{ transform: `translateY(${item.start - HEADER_HEIGHT}px)` }}
                        role="row"
                        data-testid="lock-loader-row"
                      >
                        <span role="cell">{isFetchingNextPage ? 'Loading more locks…' : 'Scroll for more'}</span>
                      </div>
                    );
                  }
                  return (
                    <MatrixRow
                      key={item.key}
                      row={row}
                      index={item.index}
                      start={item.start - HEADER_HEIGHT}
                      nodeIds={nodeIds}
                      selected={row.view.key === selectedKey}
                      linkable={ownLayout}
                      picked={selectable ? selection.picked.has(row.view.key) : null}
                      onPick={onPick}
                      onSelect={setSelectedKey}
                      onOpen={open}
                    />
                  );
                })}
              </div>
            )}
          </div>
          {loadState === 'loading' && <MatrixSkeleton nodes={nodeIds.length} />}
          {loadState === 'error' && <MatrixError message={pagesQuery.error?.message} onRetry={() => void refetch()} />}
          {loadState === 'ready' && rows.length === 0 && !hasNextPage && !scanning && (
            <MatrixEmpty
              filtering={filtering}
              pattern={filters.pattern}
              total={latest?.total ?? null}
              isOperator={isOperator}
              onClearFilters={clearFilters}
              latest={latest}
            />
          )}
        </div>
        <MatrixFooter latest={latest} loaded={rows.length} matching={filtering || !!filters.pattern} hasNextPage={!!hasNextPage} />
      </div>
      {inspected && <KeyInspector row={inspected} onClose={() => setInspectKey(null)} />}
      {bulk && <BulkReleaseDialog locks={bulk} onClose={() => setBulk(null)} onDone={selection.clear} />}
    </section>
  );
}
