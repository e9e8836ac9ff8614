import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { apiKeyUsageResponseSchema } from '../api/api-keys';
import { historyResponseSchema, type HistoryResolution } from '../api/history';
import { lockHistoryResponseSchema, lockServiceLogResponseSchema } from '../api/lock-history';
import { lockDetailResponseSchema, lockListResponseSchema } from '../api/locks';
import { nodesResponseSchema } from '../api/nodes';
import { fetchJson } from './fetch-json';
import { NODES_POLL_MS } from './freshness';

/**
 * Every query key of the console, one hierarchy (TanStack's advice): live events invalidate by
 * these prefixes, screens reset or invalidate by them, and no component writes a key of its own.
 */
export const queryKeys = {
  me: ['me'] as const,
  nodes: ['nodes'] as const,
  locks: ['locks'] as const,
  /** The Locks screen's live window around its anchor (lock-queries.ts), under `locks`. */
  locksWindow: ['locks', 'window'] as const,
  /** The lock list's pages, deliberately not under `locks` (see lockPagesQuery). */
  lockPages: ['lock-pages'] as const,
  lock: (resource: string) => ['lock', resource] as const,
  audit: ['audit'] as const,
  history: ['history'] as const,
  forceReleasePreview: (resource: string, token: string) => ['force-release-preview', resource, token] as const,
  bulkReleasePreview: (items: unknown) => ['bulk-release-preview', items] as const,
  chaosReport: ['chaos', 'report'] as const,
  ops: {
    all: ['ops'] as const,
    locksSummary: ['ops', 'locks-summary'] as const,
    lockHolders: ['ops', 'lock-holders'] as const,
  },
  scenarios: {
    list: ['scenarios', 'list'] as const,
    current: ['scenarios', 'current'] as const,
  },
};

export const nodesQuery = () =>
  queryOptions({
    queryKey: queryKeys.nodes,
    // Asked every second: an answer older than a few seconds is no use, so give up sooner than other reads.
    queryFn: ({ signal }) => fetchJson('/api/nodes', nodesResponseSchema, { signal, timeoutMs: 4_000 }),
    refetchInterval: NODES_POLL_MS,
    refetchIntervalInBackground: false,
  });

export interface LockFilters {
  prefix?: string;
  state?: string;
  search?: string;
  pattern?: string;
}

/**
 * GET /api/locks with these filters, from `cursor` (null: the first page). `progressive`: a first
 * page may come back early, `complete: false`, while a long scan is still running.
 */
export function lockListUrl(filters: LockFilters, cursor: string | null, limit: number, progressive = false): string {
  const params = new URLSearchParams({ limit: String(limit) });
  if (filters.prefix) params.set('prefix', filters.prefix);
  if (filters.state) params.set('state', filters.state);
  if (filters.search) params.set('search', filters.search);
  if (filters.pattern) params.set('pattern', filters.pattern);
  if (cursor) params.set('cursor', cursor);
  else if (progressive) params.set('progressive', '1');
  return `/api/locks?${params}`;
}

/** A page of the lock list and the local time it arrived (TTL countdowns start from it). */
export type LockListPage = z.infer<typeof lockListResponseSchema> & { receivedAt: number };

/** While a first page is incomplete (its scan still running), it is asked for again this often. */
export const INCOMPLETE_REFETCH_MS = 300;

/**
 * Pages of the lock list with the server's stable cursor, loaded as the matrix scrolls.
 *
 * The first page is progressive: on a large keyspace it arrives before the scan ends, with the
 * first locks found so far and `complete: false` (and no next page). It is then asked for again
 * every INCOMPLETE_REFETCH_MS, sharing the server's running scan, until it is complete.
 *
 * Deliberately NOT under `queryKeys.locks`: a refetch of an infinite query refetches every page
 * loaded so far (100 pages at 100,000 rows), so neither live events nor a timer refetch it.
 * The matrix keeps what the operator looks at live with `lockWindowQuery`
 * (lib/client/lock-queries.ts), which is under `queryKeys.locks` and patched over these pages.
 */
export const locksInfiniteQuery = (filters: LockFilters, limit = 500) =>
  infiniteQueryOptions({
    queryKey: [...queryKeys.lockPages, filters, limit] as const,
    queryFn: async ({ pageParam, signal }): Promise<LockListPage> => ({
      ...(await fetchJson(lockListUrl(filters, pageParam, limit, true), lockListResponseSchema, { signal })),
      receivedAt: Date.now(),
    }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: (query) => (query.state.data?.pages[0]?.complete === false ? INCOMPLETE_REFETCH_MS : false),
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
  });

export const lockDetailQuery = (resource: string) =>
  queryOptions({
    queryKey: queryKeys.lock(resource),
    queryFn: ({ signal }) => fetchJson(`/api/locks/${encodeURIComponent(resource)}`, lockDetailResponseSchema, { signal }),
    refetchInterval: 1_000,
  });

/** One resource's lock history, under the resource's key: whatever refreshes the lock refreshes it. */
export const lockHistoryQuery = (resource: string) =>
  queryOptions({
    queryKey: [...queryKeys.lock(resource), 'history'] as const,
    queryFn: ({ signal }) =>
      fetchJson(`/api/locks/${encodeURIComponent(resource)}/history?limit=20`, lockHistoryResponseSchema, { signal }),
    refetchInterval: 2_000,
  });

/** The lock service's log across resources (the Audit screen's lock-service view), under the audit key. */
export const lockServiceLogQuery = (principal: string, limit: number) =>
  queryOptions({
    queryKey: [...queryKeys.audit, 'lock-service', principal, limit] as const,
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(limit) });
      if (principal) params.set('principal', principal);
      return fetchJson(`/api/lock-history?${params}`, lockServiceLogResponseSchema, { signal });
    },
    refetchInterval: 5_000,
  });

/** Each API key's use against its quotas (the console process that answers). */
export const apiKeyUsageQuery = () =>
  queryOptions({
    queryKey: [...queryKeys.audit, 'api-keys'] as const,
    queryFn: ({ signal }) => fetchJson('/api/api-keys', apiKeyUsageResponseSchema, { signal }),
    refetchInterval: 5_000,
  });

export interface AuditFilters {
  actor?: string;
  action?: string;
  since?: number;
  limit?: number;
}

export function auditUrl(filters: AuditFilters, format: 'json' | 'csv' = 'json'): string {
  const params = new URLSearchParams({ limit: String(filters.limit ?? 500), format });
  if (filters.actor) params.set('actor', filters.actor);
  if (filters.action) params.set('action', filters.action);
  if (filters.since !== undefined) params.set('since', String(filters.since));
  return `/api/audit?${params}`;
}

export type { HistoryBucket } from '../api/history';

/** The charts' history at a resolution: 1 s buckets (10 minutes kept) or 1 min buckets (24 hours kept). */
export const historyQuery = (resolution: HistoryResolution = '1s') =>
  queryOptions({
    queryKey: [...queryKeys.history, resolution] as const,
    queryFn: ({ signal }) => fetchJson(`/api/history?resolution=${resolution}`, historyResponseSchema, { signal }),
    refetchInterval: resolution === '1s' ? 2_000 : 15_000,
  });
