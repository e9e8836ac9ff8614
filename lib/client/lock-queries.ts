import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import {
  bulkForceReleaseResponseSchema,
  extendResponseSchema,
  forceReleaseResponseSchema,
  lockGrantSchema,
  lockListResponseSchema,
  releaseResponseSchema,
  lockErrorDetailsSchema,
  type BulkForceReleaseResponse,
  type ForceReleaseResponse,
  type LockGrant,
  type VoteView,
} from '../api/locks';
import { ApiError, fetchJson } from './fetch-json';
import { lockListUrl, queryKeys, type LockFilters, type LockListPage } from './queries';
import { postJson } from './session';

/**
 * The page cursor of GET /api/locks for "everything after this lock": base64url of the UTF-8 JSON
 * `[resource, key]`, the same encoding as `encodeCursor` in lib/inspect/page.ts (which uses
 * Node's Buffer, so it cannot run here). The matrix uses it to re-read the rows on screen
 * without refetching every page above them.
 */
export function encodeLockCursor(lock: { resource: string; key: string }): string {
  const bytes = new TextEncoder().encode(JSON.stringify([lock.resource, lock.key]));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Where a window of the lock list starts: after this lock (null: from the first lock). */
export type WindowAnchor = { resource: string; key: string } | null;

/** A re-read window of the list, with the filters it was read for (to never patch other filters' rows). */
export type LockWindow = LockListPage & { filtersKey: string; anchor: WindowAnchor };

export function filtersKey(filters: LockFilters): string {
  return JSON.stringify([filters.prefix ?? '', filters.state ?? '', filters.search ?? '', filters.pattern ?? '']);
}

/** When the matrix last asked the server to re-scan instead of serving its ≤ 1 s old snapshot. */
let lastFreshAt = 0;
const FRESH_MIN_INTERVAL_MS = 400;

/**
 * The rows on screen, re-read every second and on every live lock event (its key is under
 * `queryKeys.locks`): `limit` locks after `anchor`. Small, so it can be as live as the operator
 * needs while the pages above and below stay as they were loaded.
 *
 * The server reuses a scan for up to a second. A refetch caused by an invalidation (a live lock
 * event, or a countdown reaching zero) asks for a fresh scan instead, so a new grant shows up as
 * soon as it is announced rather than a second later — at most a few times a second, so a storm
 * of events cannot turn into a storm of scans.
 */
export const lockWindowQuery = (filters: LockFilters, anchor: WindowAnchor, limit: number, enabled: boolean) =>
  queryOptions({
    queryKey: [...queryKeys.locksWindow, filters, anchor?.resource ?? null, anchor?.key ?? null, limit] as const,
    queryFn: async ({ signal, client, queryKey }): Promise<LockWindow> => {
      let url = lockListUrl(filters, anchor ? encodeLockCursor(anchor) : null, limit);
      const now = Date.now();
      if (client.getQueryState(queryKey)?.isInvalidated && now - lastFreshAt >= FRESH_MIN_INTERVAL_MS) {
        lastFreshAt = now;
        url += '&fresh=1';
      }
      return {
        ...(await fetchJson(url, lockListResponseSchema, { signal })),
        receivedAt: Date.now(),
        filtersKey: filtersKey(filters),
        anchor,
      };
    },
    enabled,
    placeholderData: keepPreviousData,
    refetchInterval: 1_000,
    refetchIntervalInBackground: false,
    staleTime: 0,
    gcTime: 5_000,
  });

/**
 * Render-as-you-fetch for the matrix's first page: the request starts when the screen's code
 * loads, in parallel with hydration and the session check, instead of after them. The first
 * page's query takes the answer if it asks for the same URL within a few seconds.
 */
let preloaded: { url: string; at: number; promise: Promise<LockListPage> } | null = null;
const PRELOAD_MAX_AGE_MS = 3_000;

export function preloadLockPage(url: string): void {
  const at = Date.now();
  const promise = fetchJson(url, lockListResponseSchema).then((page) => ({ ...page, receivedAt: Date.now() }));
  promise.catch(() => undefined); // a 401 before sign-in, say: the query asks again itself
  preloaded = { url, at, promise };
}

export function takePreloadedLockPage(url: string): Promise<LockListPage> | null {
  const hit = preloaded;
  preloaded = null;
  return hit && hit.url === url && Date.now() - hit.at < PRELOAD_MAX_AGE_MS ? hit.promise : null;
}

const enc = (resource: string) => encodeURIComponent(resource);

export interface AcquireInput {
  resources: string[];
  ttlMs: number;
  fenced: boolean;
  metadata: Record<string, string>;
  waitMs: number;
}

/** POST /api/locks (one resource as `resource`, several as `resources`). */
export function acquireLock(input: AcquireInput, signal?: AbortSignal): Promise<LockGrant> {
  const body = {
    ...(input.resources.length === 1 ? { resource: input.resources[0] } : { resources: input.resources }),
    ttlMs: input.ttlMs,
    fenced: input.fenced,
    ...(Object.keys(input.metadata).length > 0 ? { metadata: input.metadata } : {}),
    ...(input.waitMs > 0 ? { waitMs: input.waitMs } : {}),
  };
  return postJson('/api/locks', body, lockGrantSchema, { signal });
}

/** The path names the first resource; the body lists all of them when there are several. */
export function extendLock(resources: string[], token: string, ttlMs: number) {
  const body = { token, ttlMs, ...(resources.length > 1 ? { resources } : {}) };
  return postJson(`/api/locks/${enc(resources[0]!)}/extend`, body, extendResponseSchema);
}

export function releaseLock(resources: string[], token: string) {
  const body = { token, ...(resources.length > 1 ? { resources } : {}) };
  return postJson(`/api/locks/${enc(resources[0]!)}/release`, body, releaseResponseSchema);
}

/** Compare-and-delete of `token` (the one the operator saw) on every node; `dryRun` only says what would happen. */
export function forceRelease(
  resource: string,
  body: { token: string; reason: string; dryRun: boolean; confirmLiveHolder?: true },
): Promise<ForceReleaseResponse> {
  return postJson(`/api/locks/${enc(resource)}/force-release`, body, forceReleaseResponseSchema);
}

const errorVotesSchema = z.object({ error: z.object({ details: lockErrorDetailsSchema }) });

/**
 * The per-node votes of a failed lock operation (409 / 503 carry them in `error.details.votes`),
 * nodes numbered from 1 as in every answer of the API and in the lock core's votes.
 */
export function votesOfError(err: unknown): VoteView[] | null {
  if (!(err instanceof ApiError)) return null;
  const parsed = errorVotesSchema.safeParse(err.body);
  if (!parsed.success) return null;
  return parsed.data.error.details.votes; // numbered from 1, like every other answer of the API
}

/** The API's error code (LOCK_CONTENDED, QUORUM_UNAVAILABLE, …), when there is one. */
export function errorCodeOf(err: unknown): string | null {
  if (!(err instanceof ApiError)) return null;
  const code = (err.body as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : null;
}

/** Several force-releases with one reason (POST /api/force-release); a dry run previews them all. */
export function forceReleaseMany(body: {
  locks: Array<{ resource: string; token: string }>;
  reason: string;
  dryRun: boolean;
  confirmLiveHolders?: true;
}): Promise<BulkForceReleaseResponse> {
  return postJson('/api/force-release', body, bulkForceReleaseResponseSchema);
}
