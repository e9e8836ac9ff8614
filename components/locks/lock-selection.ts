'use client';

import { useCallback, useMemo, useState } from 'react';
import { BULK_RELEASE_MAX, lockListResponseSchema, type LockListResponse, type LockView } from '@/lib/api/locks';
import { fetchJson } from '@/lib/client/fetch-json';
import { lockListUrl, type LockFilters } from '@/lib/client/queries';

/** A lock picked for a bulk force-release: every token it showed, and where. */
export interface PickedLock {
  key: string;
  resource: string;
  state: LockView['state'];
  tokens: Array<{ token: string; nodes: number[] }>;
}

/** What a lock looked like when it was picked: the tokens on its nodes (a split lock has several). */
export function pickOf(view: LockView): PickedLock {
  const byToken = new Map<string, number[]>();
  for (const cell of view.cells) {
    if (!cell.present || cell.token === null) continue;
    byToken.set(cell.token, [...(byToken.get(cell.token) ?? []), cell.node]);
  }
  return { key: view.key, resource: view.resource, state: view.state, tokens: [...byToken].map(([token, nodes]) => ({ token, nodes })) };
}

/** The items a bulk force-release sends: one per (lock, token) seen. */
export function releaseItems(picked: readonly PickedLock[]): Array<{ resource: string; token: string }> {
  return picked.flatMap((p) => p.tokens.map((t) => ({ resource: p.resource, token: t.token })));
}

/**
 * Every lock matching the filters, page by page, up to what one bulk release takes. Answers
 * `truncated` when more matched than that.
 */
export async function pickAllMatching(filters: LockFilters, signal?: AbortSignal): Promise<{ picked: PickedLock[]; truncated: boolean }> {
  const picked: PickedLock[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page: LockListResponse = await fetchJson(lockListUrl(filters, cursor, 500), lockListResponseSchema, { signal });
    for (const view of page.items) picked.push(pickOf(view));
    const items = () => releaseItems(picked).length;
    if (items() > BULK_RELEASE_MAX) {
      while (picked.length && items() > BULK_RELEASE_MAX) picked.pop();
      return { picked, truncated: true };
    }
    if (!page.nextCursor) return { picked, truncated: false };
    cursor = page.nextCursor;
  }
}

/** The matrix's selection: picked locks by key, kept as they looked when picked. */
export function useLockSelection() {
  const [picked, setPicked] = useState<Map<string, PickedLock>>(() => new Map());
  const toggle = useCallback((view: LockView) => {
    setPicked((prev) => {
      const next = new Map(prev);
      if (next.has(view.key)) next.delete(view.key);
      else next.set(view.key, pickOf(view));
      return next;
    });
  }, []);
  const setAll = useCallback((locks: readonly PickedLock[]) => setPicked(new Map(locks.map((l) => [l.key, l]))), []);
  const clear = useCallback(() => setPicked(new Map()), []);
  const list = useMemo(() => [...picked.values()], [picked]);
  return { picked, list, toggle, setAll, clear };
}
