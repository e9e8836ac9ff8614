'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState, type CSSProperties, type ReactNode } from 'react';
import { queryKeys } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { useNow } from './countdown';
import { MatrixHeader } from './matrix-header';
import type { MatrixRowData } from './matrix-row';
import { KeyInspector } from './key-inspector';
import { BulkReleaseDialog } from './bulk-release-dialog';
import { useLockSelection, type PickedLock } from './lock-selection';
import { SelectionBar } from './selection-bar';
import { useMatrixDensity } from './use-matrix-density';
import { MatrixFooter, ScanProgress, ScanTruncated } from './matrix-status';
import { MatrixPlaceholder } from './matrix-placeholder';
import { useMatrixOptions } from './matrix-options';
import { useLockRows } from './use-lock-rows';
import { useMatrixScroller } from './use-matrix-scroller';
import { LockFilters } from './lock-filters';
import { SnapshotNotice, UnreadableNodes } from './matrix-notices';
import { MatrixRows } from './matrix-rows';
import { LocksTitle } from './locks-title';
import { useExpiryRefresh } from './use-expiry-refresh';
import { useFirstRowsMark, useSettledCall } from './first-rows-mark';
import { useMatrixCursor } from './use-matrix-cursor';
import controls from './lock-list-controls.module.css';
import styles from './lock-matrix.module.css';

/**
 * `kindFilter`: the Locks screen's filter by kind, shown under the title; `onSettled`: called once
 * the first page has answered (locks-screen.tsx starts its other reads then, not before).
 */
export function LockMatrix({ kindFilter, onSettled }: { kindFilter?: ReactNode; onSettled?: () => void } = {}) {
  const queryClient = useQueryClient();
  const { data: me } = useQuery(meQuery());
  const [bulk, setBulk] = useState<PickedLock[] | null>(null);

  const options = useMatrixOptions();
  const { filters, sort } = options;
  const { currentFiltersKey, pagesQuery, pages, nodeIds, labels, baseRows, rows, latest, scanning, refreshing, smallList, setAnchor } =
    useLockRows(options);
  const { hasNextPage, isFetchingNextPage, fetchNextPage, refetch } = pagesQuery;
  // Picked for a bulk release, for these filters: other filters start an empty selection.
  const selection = useLockSelection(currentFiltersKey);
  const { toggle: togglePick, retain: retainPicks } = selection;
  const onPick = useCallback((row: MatrixRowData) => togglePick(row.view), [togglePick]);

  const sectionRef = useRef<HTMLElement>(null);
  useExpiryRefresh(sectionRef, sort, smallList, refetch);

  // The selection follows the table: once the whole list is read (no page left, no scan running, no
  // placeholder of other filters), a picked lock that is no longer in it is no longer picked.
  const wholeList = !!pages && !hasNextPage && !scanning && !refreshing && !pagesQuery.isFetching;
  useEffect(() => {
    if (wholeList) retainPicks(new Set(rows.map((r) => r.view.key)));
  }, [wholeList, rows, retainPicks]);

  const { phone, density, setDensity, compact, rowHeight } = useMatrixDensity();
  const { scrollRef, virtualizer, items, firstIndex } = useMatrixScroller({
    rows,
    rowHeight,
    filtersKey: currentFiltersKey,
    hasNextPage,
    isFetchingNextPage,
    fetchNextPage,
    setAnchor,
  });

  useFirstRowsMark(rows.length);

  // Selection and keyboard navigation (j/k or arrows, Enter opens).
  const ownLayout = !filters.pattern;
  const { selectedKey, setSelectedKey, open, inspected, closeInspector } = useMatrixCursor({ rows, ownLayout, firstIndex, virtualizer });

  const now = useNow();
  const filtering = !!(filters.prefix || filters.search || filters.state);
  const refresh = () => {
    void queryClient.resetQueries({ queryKey: queryKeys.lockPages });
    void queryClient.invalidateQueries({ queryKey: queryKeys.locksWindow });
  };

  const loadState = pagesQuery.isPending ? 'loading' : pagesQuery.isError && !pages ? 'error' : 'ready';
  useSettledCall(loadState !== 'loading', onSettled);
  const isOperator = me?.role === 'operator';
  // Operators pick locks for a bulk force-release; only keys in the lock core's layout can be released.
  const selectable = isOperator && ownLayout;

  return (
    <section ref={sectionRef} className={`${controls.screen} page-wide`} aria-labelledby="locks-title">
      <LocksTitle latest={latest} now={now} onRefresh={refresh} />
      {kindFilter}

      <LockFilters
        phone={phone}
        options={options}
        latest={latest}
        density={density}
        onDensity={setDensity}
        onSearchEnter={() => rows[0] && setSelectedKey(rows[0].view.key)}
      />

      <ScanProgress page={pages?.[0]} />
      <ScanTruncated page={pages?.[0]} />
      <UnreadableNodes latest={latest} />
      {sort !== 'resource' && !smallList && <SnapshotNotice loaded={baseRows.length} latest={latest} onReload={refresh} />}

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
              <MatrixRows
                rows={rows}
                items={items}
                totalSize={virtualizer.getTotalSize()}
                isFetchingNextPage={isFetchingNextPage}
                nodeIds={nodeIds}
                selectedKey={selectedKey}
                linkable={ownLayout}
                picked={selectable ? selection.picked : null}
                onPick={onPick}
                onSelect={setSelectedKey}
                onOpen={open}
              />
            )}
          </div>
          <MatrixPlaceholder
            loadState={loadState}
            empty={rows.length === 0 && !hasNextPage && !scanning}
            nodes={nodeIds.length}
            error={pagesQuery.error?.message}
            onRetry={() => void refetch()}
            options={options}
            filtering={filtering}
            isOperator={isOperator}
            latest={latest}
          />
        </div>
        <MatrixFooter latest={latest} loaded={rows.length} matching={filtering || !!filters.pattern} hasNextPage={!!hasNextPage} />
      </div>
      {inspected && <KeyInspector row={inspected} onClose={closeInspector} />}
      {bulk && <BulkReleaseDialog locks={bulk} onClose={() => setBulk(null)} onDone={selection.clear} />}
    </section>
  );
}
