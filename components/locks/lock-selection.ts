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

/** JSON bytes one bulk release may send: the console refuses bodies over 64 KiB (lib/server/http/request-checks.ts). */
const BODY_BUDGET = 60_000;

/**
 * The first locks of `picked` that one bulk release takes: at most BULK_RELEASE_MAX tokens and a
 * body under the console's limit. `capped`: some were left out.
 */
export function capToOneRelease(picked: readonly PickedLock[]): { picked: PickedLock[]; capped: boolean } {
  const out: PickedLock[] = [];
  let tokens = 0;
  let bytes = 100;
  for (const p of picked) {
    const size = p.tokens.reduce((sum, t) => sum + JSON.stringify({ resource: p.resource, token: t.token }).length + 1, 0);
    if (tokens + p.tokens.length > BULK_RELEASE_MAX || bytes + size > BODY_BUDGET) return { picked: out, capped: true };
    out.push(p);
    tokens += p.tokens.length;
    bytes += size;
  }
  return { picked: out, capped: false };
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
    const capped = capToOneRelease(picked);
    if (capped.capped) return { picked: capped.picked, truncated: true };
    if (!page.nextCursor) return { picked, truncated: false };
    cursor = page.nextCursor;
  }
}

const NONE: ReadonlyMap<string, PickedLock> = new Map();

/**
 * The matrix's selection: picked locks by key, kept as they looked when picked, for one set of
 * filters (`scope`): changing the filters starts an empty selection, so a release never names
 * locks the screen no longer shows.
 */
export function useLockSelection(scope: string) {
  const [state, setState] = useState<{ scope: string; picked: ReadonlyMap<string, PickedLock> }>({ scope, picked: NONE });
  const picked = state.scope === scope ? state.picked : NONE;
  const update = useCallback(
    (fn: (prev: ReadonlyMap<string, PickedLock>) => ReadonlyMap<string, PickedLock>) =>
      setState((prev) => ({ scope, picked: fn(prev.scope === scope ? prev.picked : NONE) })),
    [scope],
  );
  const toggle = useCallback(
    (view: LockView) =>
      update((prev) => {
        const next = new Map(prev);
        if (next.has(view.key)) next.delete(view.key);
        else next.set(view.key, pickOf(view));
        return next;
      }),
    [update],
  );
  /** Add these (up to one release), or remove them when every one is picked already: the header box over the loaded rows. */
  const toggleMany = useCallback(
    (views: readonly LockView[]) =>
      update((prev) => {
        const next = new Map(prev);
        if (views.length > 0 && views.every((v) => prev.has(v.key))) {
          for (const v of views) next.delete(v.key);
          return next;
        }
        // Up to what one release takes: the rest stay unticked (the bar offers the release of those picked).
        const room = capToOneRelease([...prev.values(), ...views.filter((v) => !prev.has(v.key)).map(pickOf)]);
        return new Map(room.picked.map((p) => [p.key, p]));
      }),
    [update],
  );
  const setAll = useCallback((locks: readonly PickedLock[]) => update(() => new Map(locks.map((l) => [l.key, l]))), [update]);
  const clear = useCallback(() => update(() => NONE), [update]);
  /** Keep only the picks among these keys (the whole list as read now): a lock that left the table leaves the selection. */
  const retain = useCallback(
    (keys: ReadonlySet<string>) =>
      update((prev) => {
        const next = new Map([...prev].filter(([key]) => keys.has(key)));
        return next.size === prev.size ? prev : next;
      }),
    [update],
  );
  const list = useMemo(() => [...picked.values()], [picked]);
  return { picked, list, toggle, toggleMany, setAll, clear, retain };
}
