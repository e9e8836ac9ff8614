import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { auditResponseSchema, type AuditResponse } from '../api/audit';
import { lockListResponseSchema, type LockListResponse, type LockView } from '../api/locks';
import { nodeActionResponseSchema, type NodeAction, type NodeActionResponse } from '../api/node-actions';
import { markCleanResponseSchema, type SeenSentinel } from '../api/nodes';
import { fetchJson } from './fetch-json';
import { auditUrl, queryKeys, type AuditFilters } from './queries';
import { postJson } from './session';

/**
 * Query factories and mutations of the operator screens (Overview, Nodes, Audit).
 *
 * The lock reads here live OUTSIDE the `locks` prefix on purpose: the shell invalidates that prefix
 * on every lock event, and an invalidation cancels a fetch in flight and starts it again — under
 * steady lock traffic a many-page read (the blast radius) would never finish. They refresh on
 * their own short intervals instead, and every screen shows when they were read.
 */
export const opsKeys = queryKeys.ops;

/** Totals of locks by state: one row of the lock list carries the whole snapshot's counts. */
/** How often the lock totals are read (their stale age follows: freshness.ts). */
export const LOCKS_SUMMARY_POLL_MS = 2_000;

export const locksSummaryQuery = () =>
  queryOptions({
    queryKey: opsKeys.locksSummary,
    queryFn: ({ signal }) => fetchJson('/api/locks?limit=1', lockListResponseSchema, { signal }),
    select: (page: LockListResponse) => ({
      readAt: page.readAt,
      scanMs: page.scanMs,
      index: page.index,
      total: page.total,
      stateCounts: page.stateCounts,
      flagCounts: page.flagCounts,
      nodes: page.nodes,
      quorum: page.quorum,
    }),
    refetchInterval: LOCKS_SUMMARY_POLL_MS,
  });

/** At most this many locks are read for a blast radius (pages of 1,000); the screen says when it stopped short. */
export const HOLDERS_CAP = 20_000;
const HOLDERS_PAGE = 1_000;

export interface LockHolders {
  readAt: number;
  /** Locks with a majority token (held or expiring) that were read. */
  locks: LockView[];
  /** Locks with a majority token in the whole snapshot. */
  matched: number;
  /** Every lock in the snapshot, any state. */
  total: number;
  truncated: boolean;
}

/** Every lock that has a majority now (held, expiring), paged through up to HOLDERS_CAP: the input of a blast radius. */
export const lockHoldersQuery = () =>
  queryOptions({
    queryKey: opsKeys.lockHolders,
    queryFn: async ({ signal }): Promise<LockHolders> => {
      const locks: LockView[] = [];
      let cursor: string | null = null;
      let first: LockListResponse | null = null;
      do {
        const params = new URLSearchParams({ state: 'held,expiring', limit: String(HOLDERS_PAGE) });
        if (cursor) params.set('cursor', cursor);
        const page: LockListResponse = await fetchJson(`/api/locks?${params}`, lockListResponseSchema, { signal });
        first ??= page;
        locks.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor && locks.length < HOLDERS_CAP);
      return { readAt: first.readAt, locks, matched: first.matched, total: first.total, truncated: cursor !== null };
    },
    refetchInterval: 3_000,
    // A live event invalidates every lock query; one read at a time is plenty for this one.
    staleTime: 1_000,
  });

export function runNodeAction(id: number, action: NodeAction): Promise<NodeActionResponse> {
  return postJson(`/api/nodes/${id}/actions`, action, nodeActionResponseSchema);
}

/** Mark a node clean if it still has the sentinel the operator saw (`seen`; 409 SENTINEL_CHANGED otherwise). */
export function markNodeClean(id: number, reason: string, seen?: SeenSentinel): Promise<z.infer<typeof markCleanResponseSchema>> {
  return postJson(`/api/nodes/${id}/mark-clean`, seen ? { reason, seen } : { reason }, markCleanResponseSchema);
}

/**
 * The audit log over a sliding window: `sinceSpanMs` back from the moment of each fetch (or an
 * absolute `since`). The answer carries the `since` it was read with, so an export can ask for
 * exactly the entries on screen.
 */
export interface AuditView {
  actor?: string;
  action?: string;
  sinceSpanMs?: number;
  since?: number;
  limit: number;
}

export const auditViewQuery = (view: AuditView) =>
  queryOptions({
    queryKey: [...queryKeys.audit, 'view', view] as const,
    queryFn: async ({ signal }): Promise<AuditResponse & { filters: AuditFilters }> => {
      const since = view.since ?? (view.sinceSpanMs !== undefined ? Date.now() - view.sinceSpanMs : undefined);
      const filters: AuditFilters = { actor: view.actor || undefined, action: view.action || undefined, since, limit: view.limit };
      const res = await fetchJson(auditUrl(filters), auditResponseSchema, { signal });
      return { ...res, filters };
    },
    refetchInterval: 5_000,
    placeholderData: (previous) => previous,
  });
